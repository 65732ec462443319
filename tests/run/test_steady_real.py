"""Runs that must be steady: fio's per-interval logs kept beside each run, as a tidy
intervals.parquet; a run throttled halfway through (a cgroup v1 blkio limit put on its loop
device mid-run, taken off after) is marked not steady with the reason; an idle run is
not."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pandas as pd

from fslab import api
from fslab.plan.loading import load_campaign
from fslab.plan.schema import Overrides
from fslab.results.intervals import load_intervals
from fslab.results.store import ResultsDir
from tests.conftest import requires

THROTTLE = Path("/sys/fs/cgroup/blkio/blkio.throttle.read_iops_device")
LIMIT_IOPS = 2000  # a twentieth of what this disk does: a cliff no idle run shows


def measuring(out: Path) -> str | None:
    """The mount point a fio of this campaign measures in, while it runs its measured job
    (not its layout pass)."""
    for proc in Path("/proc").iterdir():
        try:
            line = (proc / "cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        if line.startswith("fio") and str(out) in line and "--write_bw_log" in line:
            job = Path(line.split("\0")[-2])
            for text in job.read_text().splitlines():
                if text.startswith("directory="):
                    return text.partition("=")[2]
    return None


def loop_device_of(directory: str) -> str:
    """'MAJ:MIN' of the device mounted at the longest mount point above `directory`."""
    best = ("", "")
    for line in Path("/proc/mounts").read_text().splitlines():
        source, point = line.split()[:2]
        if directory.startswith(point) and len(point) > len(best[1]):
            best = (source, point)
    rdev = os.stat(best[0]).st_rdev
    return f"{os.major(rdev)}:{os.minor(rdev)}"


def throttle_midway(out: Path, delay: float, done: threading.Event) -> threading.Thread:
    """Once the measured fio runs, wait `delay` s, cap its loop device's reads; the cap
    is lifted when `done` is set (and in any case by the caller)."""
    device: list[str] = []

    def later() -> None:
        deadline = time.monotonic() + 60
        where = None
        while time.monotonic() < deadline and where is None:
            where = measuring(out)
            time.sleep(0.02)
        if where is None:
            return
        time.sleep(delay)
        device.append(loop_device_of(where))
        THROTTLE.write_text(f"{device[0]} {LIMIT_IOPS}\n")
        done.wait(60)
        THROTTLE.write_text(f"{device[0]} 0\n")

    thread = threading.Thread(target=later, daemon=True)
    thread.start()
    return thread


def one_run(tmp_path: Path, lab, name: str, throttled: bool,
            workload: str = "randread") -> ResultsDir:
    campaign = load_campaign(None, Overrides(fs=["ext4"], workloads=[workload],
                                             iterations=1, runtime="6", rounds=1,
                                             ceiling=False, seed=1))
    out = tmp_path / name
    done = threading.Event()
    thread = throttle_midway(out, 3.5, done) if throttled else None
    try:
        api.run(campaign, out=out, lab=lab)
    finally:
        done.set()
        if thread:
            thread.join(10)
    return ResultsDir.open(out)


def test_a_run_throttled_halfway_is_not_steady_and_an_idle_one_is(tmp_path, lab):
    requires("fio", "mkfs.ext4", "losetup")
    assert THROTTLE.exists(), "cgroup v1 blkio is needed to throttle a loop device"
    # The idle run reads sequentially in one job, the steadiest of the default jobs here:
    # on a busy host idle runs step by up to 2.45x, most of all the four-job random jobs,
    # CPU-bound on two vCPUs (parsers/fio_logs.py STEP_RATIO); the throttle's cliff is 16x.
    idle = one_run(tmp_path, lab, "idle", throttled=False, workload="seqread")
    record = next(idle.run_records())
    assert record.steady is True, record.workload_metadata
    series = load_intervals(idle)
    assert series is not None and set(series["metric"]) >= {"iops", "bw_bytes",
                                                            "clat_mean_ns"}
    iops = series[(series.metric == "iops") & (series.op == "read")]
    assert len(iops) >= 50 and iops["t_s"].is_monotonic_increasing
    measured = [m for m in record.metrics if m["metric"] == "iops" and m["op"] == "read"]
    assert abs(iops["value"].mean() / measured[0]["value"] - 1) < 0.15  # fio's own mean

    throttled = one_run(tmp_path, lab, "throttled", throttled=True)
    record = next(throttled.run_records())
    assert record.steady is False, record.workload_metadata
    assert "stepped" in record.unsteady_because
    runs = throttled.load_runs()
    assert runs["steady"].tolist() == [False] and runs["unsteady_because"].iloc[0]
    text = (throttled.path / "stats" / "verdicts.txt").read_text()
    assert "were not steady" in text and "--rerun-unsteady" in text
    assert isinstance(pd.read_parquet(throttled.path / "intervals.parquet"), pd.DataFrame)
    page = api.report(throttled.path).read_text()
    assert "Throughput over each run" in page and "randread: IOPS over the run" in page
