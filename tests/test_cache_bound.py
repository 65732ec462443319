"""Cache-bound cells (issue 12): above the device's own ceiling, or buffered in RAM."""

import json
import re

import pandas as pd
import pytest

from fslab import api
from fslab.analysis.cachebound import CEILING_MARGIN, mark_cache_bound
from fslab.campaign import load_campaign
from fslab.report.terminal import summary_tables
from fslab.run_record import RunRecord
from tests.conftest import requires

GiB = 1024**3


def cell(target, workload, op, metric, mean):
    return {"target": target, "workload": workload, "op": op, "metric": metric,
            "mean": mean, "best": True, "best_clear": True, "of_raw": float("nan")}


def test_above_the_ceiling_by_more_than_the_margin_is_cache_bound():
    summary = pd.DataFrame([
        cell("ext4", "randread", "read", "iops", 100.0 * CEILING_MARGIN * 1.01),
        cell("xfs", "randread", "read", "iops", 100.0 * CEILING_MARGIN * 0.99),
        cell("ext4", "randread", "read", "clat_mean_ns", 1000.0),
        cell("xfs", "server/seqread", "read", "bw_bytes", 9e9),
    ])
    environment = {"memory_bytes": 24 * GiB, "ceilings": {"/dev/vda": {
        "randread": {"read": {"iops": 100.0}},
        "server/seqread": {"read": {"bw_bytes": 1e9}}}}}
    marked = mark_cache_bound(summary, [], environment).set_index(["target", "workload",
                                                                   "metric"])
    assert marked.loc[("ext4", "randread", "iops"), "cache_bound"]
    # the whole cell row of that target and workload: its latency is the cache's too
    assert marked.loc[("ext4", "randread", "clat_mean_ns"), "cache_bound"]
    assert not marked.loc[("xfs", "randread", "iops"), "cache_bound"]
    assert marked.loc[("xfs", "server/seqread", "bw_bytes"), "cache_bound"]
    reason = marked.loc[("xfs", "server/seqread", "bw_bytes"), "cache_bound_reason"]
    assert "read 9.0× what the disk under the image delivered" in reason
    # never crowned
    assert not marked.loc[("ext4", "randread", "iops"), "best"]
    assert marked.loc[("xfs", "randread", "iops"), "best"]
    assert marked.loc[("xfs", "randread", "iops"), "of_raw"] == pytest.approx(
        CEILING_MARGIN * 0.99)


def test_buffered_io_on_files_that_fit_in_ram_is_cache_bound_for_every_section():
    summary = pd.DataFrame([cell("ext4", "hpc/hpc-read", "read", "bw_bytes", 1.0),
                            cell("ext4", "seqread", "read", "bw_bytes", 1.0)])
    records = [
        RunRecord(run_id="1", target="ext4", workload="hpc", workload_metadata={
            "io": {"direct": False, "file_set_bytes": 64 * 2**20}}),
        RunRecord(run_id="2", target="ext4", workload="seqread", workload_metadata={
            "io": {"direct": False, "file_set_bytes": 64 * GiB}}),  # larger than RAM
    ]
    marked = mark_cache_bound(summary, records, {"memory_bytes": 24 * GiB})
    assert marked["cache_bound"].tolist() == [True, False]
    assert "buffered I/O on 64 MiB" in marked["cache_bound_reason"].iloc[0]


@pytest.mark.privileged
def test_buffered_basic5_is_marked_where_it_beats_the_raw_device(tmp_path, lab):
    requires("fio", "mkfs.ext4", "mkfs.xfs", "losetup")
    (tmp_path / "c.toml").write_text(
        'name = "buffered"\niterations = 2\nruntime = 3\nimage_size = "512M"\n'
        'file_size = "32M"\nseed = 4\nrounds = 1\n'
        '[[target]]\nfs = "ext4"\ndirect_io = false\n'
        '[[target]]\nfs = "xfs"\ndirect_io = false\n'
        '[[workload]]\npreset = "basic5"\nonly = ["seqread", "randread"]\n')
    out = tmp_path / "r"
    result = api.run(load_campaign(tmp_path / "c.toml"), out=out, lab=lab)
    assert result.runner.failed == 0
    environment = json.loads((out / "environment.json").read_text())
    (ceilings,) = environment["ceilings"].values()
    assert set(ceilings) == {"seqread", "randread"}
    assert ceilings["randread"]["read"]["iops"] > 0
    summary = pd.read_csv(out / "stats" / "summary.csv", keep_default_na=False)
    assert {"cache_bound", "cache_bound_reason"} <= set(summary.columns)
    reads = summary[(summary.op == "read") & (summary.metric == "iops")]
    assert reads["cache_bound"].astype(str).eq("True").all()
    # buffered random reads of a 32 MiB file come from the page cache, far above the disk
    randread = reads[reads.workload == "randread"].iloc[0]
    assert "what the disk under the image delivered" in randread["cache_bound_reason"]
    assert "buffered I/O" in randread["cache_bound_reason"]
    ceiling_job = out / "ceiling" / "runs" / "i001-ceiling-raw-randread" / "job.fio"
    assert "direct=1" in ceiling_job.read_text()  # the device, not its page cache
    measured = api.load(out / "ceiling")
    twice = measured[(measured.workload == "randread") & (measured.metric == "iops")]
    assert sorted(twice["iteration"]) == [1, 2]  # each on a freshly filled image
    assert ceilings["randread"]["read"]["iops"] == pytest.approx(twice["value"].max())
    from rich.console import Console

    console = Console(width=200, record=True)
    console.print(summary_tables(api.analyze(out), api.runs(out)))
    assert "‡ cache-bound" in console.export_text()
    verdicts = (out / "stats" / "verdicts.txt").read_text()
    assert "cache-bound, not ranked" in verdicts
    assert re.search(r"[\d.]+× (ext4|xfs)", verdicts) is None  # nothing crowned
