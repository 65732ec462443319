"""A real campaign: 2 file systems × 2 workloads × 2 iterations with 1-second fio jobs."""

import json
import tomllib

import pytest

from fslab import api
from fslab.plan.loading import load_campaign
from fslab.plan.schema import Overrides
from tests.conftest import requires


@pytest.mark.privileged
def test_two_fs_two_workloads_two_iterations(tmp_path, lab):
    requires("fio", "mkfs.ext4", "mkfs.xfs", "losetup")
    campaign = load_campaign(None, Overrides(
        fs=["ext4", "xfs"], workloads=["randread", "seqwrite"], iterations=2, runtime="1",
        image_size="512M", file_size="32M", seed=11))
    out = tmp_path / "results"
    result = api.run(campaign, out=out, lab=lab)
    assert (result.runner.ok, result.runner.failed) == (8, 0)

    runs = api.runs(out)
    assert sorted(runs["run_id"]) == sorted(
        f"i00{i}-{fs}-{w}" for i in (1, 2) for fs in ("ext4", "xfs")
        for w in ("randread", "seqwrite"))
    for run_id in runs["run_id"]:
        run_dir = out / "runs" / run_id
        job = (run_dir / "job.fio").read_text()
        assert "runtime=1" in job and "size=32M" in job
        record = json.loads((run_dir / "run.json").read_text())
        assert record["caches_dropped"] is True
        # measured in interleaved slices, each kept as fio wrote it: a 1 s job in 2 rounds
        # (a slice measures at least 0.5 s; the default 3 s job gets 6)
        slices = sorted(run_dir.glob("fio-slice-*.json"))
        assert len(slices) == 2 and all(path.stat().st_size > 0 for path in slices)
        slice_job = (run_dir / "slice.fio").read_text()
        assert "runtime=500ms" in slice_job and "clocksource=clock_gettime" in slice_job
        rounds = record["workload_metadata"]["slices"]
        assert [r["round"] for r in rounds["runs"]] == list(range(2))
        # two targets and the raw-device ceiling, one more participant of each round, shuffled
        positions = {r["position"] for r in rounds["runs"]}
        assert positions <= {0, 1, 2} and len(positions) > 1
        assert record["witness"]["seconds"] > 0
        # derived by the parse stage from the slices alone: their spread, who formed them
        assert rounds["slice_cv"] is None or 0 <= rounds["slice_cv"] < 2
        assert "slice_cv" in rounds and record["workload_metadata"]["observations"]
        assert json.loads((run_dir / "host_cpu.json").read_text())["pct_of_one_core"] > 0

    assert (out / "ceiling" / "runs").is_dir()  # the ceiling's own runs, kept apart
    metrics = api.load(out)
    needed = {"iops", "bw_bytes", "clat_mean_ns", "lat_mean_ns", "clat_p50_ns", "clat_p99_ns",
              "clat_p99_9_ns", "cpu_usr", "cpu_sys", "host_cpu_pct", "host_cpu_ns_per_io"}
    for run_id, rows in metrics.groupby("run_id"):
        assert needed <= set(rows["metric"]), run_id
        assert rows["fs_impl"].str.startswith("kernel").all()
    reads = metrics[(metrics.workload == "randread") & (metrics.op == "read")]
    assert set(reads["iteration"]) == {1, 2}
    # Each iteration is its own observation: values differ between iterations.
    slices = reads[reads.metric == "iops"]
    assert set(slices["sample"]) == set(range(2))  # two slices, each a sample of its run
    iops = slices.groupby(["target", "iteration"])["value"].mean()
    assert iops[("ext4", 1)] != iops[("ext4", 2)]
    units = dict(zip(metrics["metric"], metrics["unit"], strict=False))
    assert units["bw_bytes"] == "bytes/s" and units["clat_p99_ns"] == "ns"
    assert set(metrics[metrics.workload == "seqwrite"]["op"]) == {"write", "total"}

    campaign_saved = tomllib.loads((out / "campaign.toml").read_text())
    assert campaign_saved["seed"] == 11 and campaign_saved["iterations"] == 2
    env = json.loads((out / "environment.json").read_text())
    assert env["tools"]["fio"].startswith("3.") and env["kernel"]
    # the tools its targets declare they run, not a fixed list
    assert {"mkfs.ext4", "mkfs.xfs", "losetup"} <= set(env["tools"])
    assert "mkfs.btrfs" not in env["tools"]
    assert env["targets"]["ext4"]["mkfs_command"][0] == "mkfs.ext4"

    summary = api.analyze(out)
    assert (out / "stats" / "summary.csv").exists()
    cell = summary[(summary.target == "xfs") & (summary.workload == "seqwrite")
                   & (summary.op == "write") & (summary.metric == "bw_bytes")].iloc[0]
    assert cell["n"] == 2 and cell["ci_low"] <= cell["geomean"] <= cell["ci_high"]


@pytest.mark.privileged
def test_job_file_sections_are_separate_observations(tmp_path, lab):
    """Two stonewalled sections (numjobs=2 each) in one job file: two observations whose
    IOPS are fio's per-section figures, never their sum (issue 12)."""
    requires("fio", "mkfs.ext4", "losetup")
    (tmp_path / "two.fio").write_text(
        "[global]\nioengine=sync\ndirect=1\nsize=16M\nruntime=1\ntime_based\n\n"
        "[seqread]\nrw=read\nbs=1M\nnumjobs=2\nstonewall\n\n"
        "[randread]\nrw=randread\nbs=4k\nnumjobs=2\nstonewall\n")
    (tmp_path / "campaign.toml").write_text(
        'name = "sections"\niterations = 1\nimage_size = "256M"\nseed = 3\nrounds = 1\n'
        '[[target]]\nfs = "ext4"\n[[workload]]\njob_file = "two.fio"\nname = "server"\n')
    campaign = load_campaign(tmp_path / "campaign.toml")
    out = tmp_path / "results"
    result = api.run(campaign, out=out, lab=lab)
    assert (result.runner.ok, result.runner.failed) == (1, 0)
    run_dir = out / "runs" / "i001-ext4-server"
    fio = json.loads((run_dir / "fio.json").read_text())
    record = json.loads((run_dir / "run.json").read_text())
    assert set(record["workload_metadata"]["observations"]) == {"seqread", "randread"}
    assert len(record["workload_metadata"]["observations"]["seqread"]) == 2
    clones = record["workload_metadata"]["clones"]  # each thread's own figures, kept
    assert [c["job"] for c in clones] == ["seqread #0", "seqread #1", "randread #2",
                                          "randread #3"]
    metrics = api.load(out)
    iops = metrics[metrics.metric == "iops"].set_index(["workload", "op"])["value"]
    assert set(metrics["workload"]) == {"server/seqread", "server/randread"}
    for section in ("seqread", "randread"):
        expected = sum(j["read"]["iops"] for j in fio["jobs"] if j["jobname"] == section)
        assert iops[(f"server/{section}", "read")] == pytest.approx(expected)
    assert ("server/randread", "total") not in iops.index
    # As the old parser left it: one observation, the sections' IOPS summed.
    record = json.loads((run_dir / "run.json").read_text())
    summed = sum(j["read"]["iops"] for j in fio["jobs"])
    old = dict(record["metrics"][0], workload="server", op="read", metric="iops",
               value=summed, unit="1/s", better="higher")
    record["metrics"] = [old]
    del record["workload_metadata"]["observations"], record["workload_metadata"]["clones"]
    (run_dir / "run.json").write_text(json.dumps(record))
    api.results_dir(out).rebuild_metrics()
    api.analyze(out)
    assert set(api.load(out)["workload"]) == {"server"}
    found = api.reparse(out)  # the parser of this version, on the raw output kept
    assert (found.reparsed, found.kept) == (1, [])
    assert set(api.load(out)["workload"]) == {"server/seqread", "server/randread"}
    rebuilt = json.loads((run_dir / "run.json").read_text())["workload_metadata"]
    assert set(rebuilt["observations"]) == {"seqread", "randread"}  # derived again
    assert len(rebuilt["clones"]) == 4
    summary = (out / "stats" / "summary.csv").read_text()
    assert "server/randread" in summary and ",server," not in summary
