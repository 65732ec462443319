"""CPU use: of the workload process (fslab's own workloads) and of the whole host."""

from __future__ import annotations

import json
import resource
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from fslab.core.metrics import Measurement, cpu_measurements
from fslab.parsers.raw_names import HOST_CPU


@dataclass
class CpuUse:
    """User and system CPU of this process over a span, as % of one core."""

    usr_pct: float = 0.0
    sys_pct: float = 0.0

    def measurements(self) -> list[Measurement]:
        return cpu_measurements(self.usr_pct, self.sys_pct)


@contextmanager
def cpu_use() -> Iterator[CpuUse]:
    """Measure the workload process's rusage over the block (fio reports its own)."""
    use = CpuUse()
    before = resource.getrusage(resource.RUSAGE_SELF)
    start = time.perf_counter()
    try:
        yield use
    finally:
        after = resource.getrusage(resource.RUSAGE_SELF)
        wall = max(time.perf_counter() - start, 1e-9)
        use.usr_pct = 100.0 * (after.ru_utime - before.ru_utime) / wall
        use.sys_pct = 100.0 * (after.ru_stime - before.ru_stime) / wall


@dataclass
class HostCpu:
    """System-wide CPU over a span (/proc/stat), as % of one core: kernel threads
    (btrfs workers, loop, kworkers) and daemons (zfs-fuse) count, not just the workload."""

    pct: float = float("nan")
    seconds: float = float("nan")  # busy CPU-seconds over the span


def _busy_and_total() -> tuple[int, int] | None:
    try:
        with open("/proc/stat") as handle:
            fields = [int(v) for v in handle.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    total = sum(fields[:8])  # guest time is already inside user and nice
    return total - idle, total


@contextmanager
def host_cpu() -> Iterator[HostCpu]:
    """Measure the host's busy CPU over the block."""
    import os

    use = HostCpu()
    before = _busy_and_total()
    start = time.perf_counter()
    try:
        yield use
    finally:
        after = _busy_and_total()
        wall = max(time.perf_counter() - start, 1e-9)
        if before and after:
            ticks = os.sysconf("SC_CLK_TCK")
            use.seconds = (after[0] - before[0]) / ticks
            use.pct = 100.0 * use.seconds / wall


def keep_host_cpu(use: HostCpu, run_dir: Path) -> dict[str, float]:
    """Keep the host's CPU over a run beside its raw output (host_cpu.json: the parse
    stage derives its rows, parsers/host_cpu.py); returns it for run.json too."""
    seen = {"pct_of_one_core": use.pct, "busy_seconds": use.seconds}
    (run_dir / HOST_CPU).write_text(json.dumps(seen))
    return seen
