"""Helpers for workloads that fslab runs itself (not through fio): CPU use and caches."""

from __future__ import annotations

import resource
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from fslab.metrics import Measurement, cpu_measurements


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
