"""A user's job file measured like a preset (issue 61): `--job-file` on `fslab run`, laid
out once and measured in interleaved slices; a job that cannot be sliced measured whole,
with its reason in the plan and in its runs' records."""

import json

import pytest

from tests.conftest import fslab_cmd, leftovers, requires

RANDREAD = """[global]
ioengine=psync
direct=1
size=16M
runtime=2
time_based

[randread]
rw=randread
bs=4k
"""


@pytest.mark.privileged
def test_a_plain_random_read_job_file_is_measured_in_slices(tmp_path, lab):
    requires("fio", "mkfs.ext4", "mkfs.xfs", "losetup")
    job = tmp_path / "rr.fio"
    job.write_text(RANDREAD)
    deletes = tmp_path / "gone.fio"
    deletes.write_text(RANDREAD.replace("time_based\n", "time_based\nunlink=1\n"))
    out = tmp_path / "r"
    base = ["run", "--fs", "ext4,xfs", "--job-file", str(job), "--iterations", "2",
            "--runtime", "2", "--size", "320M", "--lab", str(lab.root)]
    plan = fslab_cmd(*base, "--job-file", str(deletes), "--dry-run")
    assert plan.returncode == 0, plan.stderr
    assert "rr: in 2 interleaved slices of 1 s, laid out once" in plan.stdout
    assert ("gone: measured whole, not in interleaved slices: it deletes its own files "
            "(unlink)") in plan.stdout
    done = fslab_cmd(*base, "--job-file", str(deletes), "--out", str(out), "--no-ceiling")
    assert done.returncode == 0, done.stderr
    for target in ("ext4", "xfs"):
        for iteration in (1, 2):
            run_dir = out / "runs" / f"i00{iteration}-{target}-rr"
            assert sorted(p.name for p in run_dir.glob("fio-slice-*.json")) == [
                "fio-slice-00.json", "fio-slice-01.json"]
            assert not (run_dir / "fio.json").exists()
            record = json.loads((run_dir / "run.json").read_text())
            assert record["status"] == "ok"
            assert record["workload_metadata"]["slices"]["rounds"] == 2
            whole = json.loads((out / "runs" / f"i00{iteration}-{target}-gone" /
                                "run.json").read_text())
            assert whole["status"] == "ok"
            assert "deletes its own files" in \
                whole["workload_metadata"]["measured_whole"]["why"]
    assert "gone: measured whole" in done.stdout  # said beside the verdicts too
    assert not leftovers(lab.root)
