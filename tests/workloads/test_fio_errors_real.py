"""A fio job that goes on past its errors is a result with an error count, and the witness
does not mistake fslab's own tools for another's I/O (issue 23 item 4; issue 18)."""

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from fslab import api
from fslab.host import system
from fslab.host.resident import keep_tools_resident
from fslab.host.witness import backing_disk
from fslab.plan.loading import load_campaign
from tests.conftest import requires

# Direct reads of 4 KiB that skip 100 bytes after each: on a file system over 512-byte
# sectors only every 128th offset is aligned, the others fail with EINVAL, which the job
# counts and goes on (continue_on_error; EINVAL is fatal unless ignore_error lists it).
SKIPS = """[global]
ioengine=psync
direct=1
continue_on_error=all
ignore_error=EINVAL:EINVAL
[skips]
rw=read:100
bs=4k
size=8M
"""


@pytest.mark.privileged
def test_a_job_with_counted_errors_is_a_result_whose_rates_count_what_succeeded(tmp_path, lab):
    requires("fio", "mkfs.ext4", "losetup")
    (tmp_path / "skips.fio").write_text(SKIPS)
    (tmp_path / "c.toml").write_text("""iterations = 2
runtime = 1
image_size = "256M"
file_size = "16M"
seed = 4
ceiling = false
[[target]]
name = "ext4"
fs = "ext4"
[[workload]]
job_file = "skips.fio"
""")
    out = tmp_path / "r"
    api.run(load_campaign(tmp_path / "c.toml"), out=out, lab=lab)
    runs = api.runs(out)
    assert set(runs["status"]) == {"ok"}, runs["reason"].tolist()
    metrics = api.load(out)
    one = metrics[metrics["iteration"] == 1].set_index(["op", "metric"])["value"]
    assert one[("read", "errors")] == one[("total", "errors")] > 1000
    assert 0 < one[("total", "ios")] < one[("total", "errors")] / 50
    assert one[("read", "iops")] * 4096 == pytest.approx(one[("read", "bw_bytes")], rel=0.01)
    api.analyze(out)
    verdicts = pd.read_csv(out / "stats" / "verdicts.csv")
    errors = verdicts[verdicts["kind"] == "errors"]
    assert len(errors) == 1 and "skips on ext4" in errors["text"].iloc[0]
    assert "only the I/Os that succeeded" in errors["text"].iloc[0]


@pytest.mark.privileged
def test_fios_own_files_stay_cached_across_a_cache_drop():
    """Without this, every fio after a drop read its 61 MiB of libraries from the disk
    under the lab, and the witness called it other I/O (130 MiB/s in 1 s runs)."""
    requires("fio", "ldd")
    kept = keep_tools_resident()
    assert any(Path(path).name == "fio" for path in kept.files)
    assert kept.bytes > 1024**2
    disk = backing_disk(Path(sys.prefix))
    assert system.sync_and_drop_caches()
    before = _read_bytes(disk)
    subprocess.run(["fio", "--version"], check=True, capture_output=True)
    assert _read_bytes(disk) - before < 8 * 1024**2  # metadata only (measured: 1.8 MiB)


def _read_bytes(disk: str) -> int:
    return int(Path(f"/sys/block/{disk}/stat").read_text().split()[2]) * 512
