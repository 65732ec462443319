"""Runs that must be steady: fio's per-interval logs kept beside each run, as a tidy
series.parquet; a run whose throughput steps halfway (CPU hogs started mid-run: four
sync fio jobs on two vCPUs are CPU-bound) is marked not steady with the reason; an idle
run is not."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd

from fslab import api
from fslab.plan.campaign import Overrides, load_campaign
from fslab.results.series import load_series
from fslab.results.store import ResultsDir

HOG = "import time\nend = time.time() + {s}\nwhile time.time() < end: pass"


def measuring(out: Path) -> bool:
    """A fio of this campaign is running its measured job (not its layout pass)."""
    for proc in Path("/proc").iterdir():
        try:
            line = (proc / "cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        if line.startswith("fio") and str(out) in line and "--write_bw_log" in line:
            return True
    return False


def hogs_when_fio_runs(out: Path, delay: float, seconds: float, count: int = 3
                       ) -> threading.Thread:
    """Once the run's measured fio is running, wait `delay` s, then start `count` bounded
    busy loops, detached (setsid -f: not fslab's children, each ends by itself)."""

    def later() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not measuring(out):
            time.sleep(0.02)
        time.sleep(delay)
        for _ in range(count):
            subprocess.run(["setsid", "-f", sys.executable, "-c", HOG.format(s=seconds)],
                           check=True)

    thread = threading.Thread(target=later, daemon=True)
    thread.start()
    return thread


def one_run(tmp_path: Path, lab, name: str, hogs: bool) -> ResultsDir:
    data = tmp_path / f"data-{name}"
    data.mkdir()
    campaign = load_campaign(None, Overrides(fs=[f"dir:{data}"], workloads=["randread"],
                                             iterations=1, runtime="6", rounds=1,
                                             ceiling=False, seed=1))
    out = tmp_path / name
    thread = hogs_when_fio_runs(out, delay=4.0, seconds=8) if hogs else None
    api.run(campaign, out=out, lab=lab)
    if thread:
        thread.join()
        time.sleep(8)  # the hogs end by themselves
    return ResultsDir.open(out)


def test_a_run_that_steps_halfway_is_not_steady_and_an_idle_one_is(tmp_path, lab):
    idle = one_run(tmp_path, lab, "idle", hogs=False)
    record = next(idle.run_records())
    assert record.steady is True, record.workload_metadata.get("steady")
    series = load_series(idle)
    assert series is not None and set(series["metric"]) >= {"iops", "bw_bytes",
                                                            "clat_mean_ns"}
    iops = series[(series.metric == "iops") & (series.op == "read")]
    assert len(iops) >= 50 and iops["t_s"].is_monotonic_increasing
    measured = [m for m in record.metrics if m["metric"] == "iops" and m["op"] == "read"]
    assert abs(iops["value"].mean() / measured[0]["value"] - 1) < 0.15  # fio's own mean

    busy = one_run(tmp_path, lab, "busy", hogs=True)
    record = next(busy.run_records())
    assert record.steady is False, record.workload_metadata.get("steady")
    assert "stepped" in record.unsteady_because or "trended" in record.unsteady_because
    runs = busy.load_runs()
    assert runs["steady"].tolist() == [False] and runs["unsteady_because"].iloc[0]
    text = (busy.path / "stats" / "verdicts.txt").read_text()
    assert "were not steady" in text and "--rerun-unsteady" in text
    assert isinstance(pd.read_parquet(busy.path / "series.parquet"), pd.DataFrame)
    page = api.report(busy.path).read_text()
    assert "Throughput over each run" in page and "randread: IOPS over the run" in page
