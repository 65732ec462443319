"""The metrics table: one row per measured value, in SI base units, with its direction.

Every analysis is a group-by over this long ("tidy") table. The `better` column travels
with each value so that no ranking or verdict ever has to guess which way is good.
"""

from __future__ import annotations

from typing import NamedTuple

COLUMNS = (
    "campaign", "run_id", "target", "fs", "fs_impl", "workload", "iteration", "host",
    "op", "metric", "value", "unit", "better", "sample", "note",
)

HIGHER = "higher"
LOWER = "lower"

# metric -> (unit, better). Units: bytes, bytes/s, ns, 1/s, % (of one CPU core).
METRIC_UNITS: dict[str, tuple[str, str]] = {
    "iops": ("1/s", HIGHER),
    "bw_bytes": ("bytes/s", HIGHER),
    "io_bytes": ("bytes", HIGHER),
    "clat_mean_ns": ("ns", LOWER),
    "lat_mean_ns": ("ns", LOWER),
    "slat_mean_ns": ("ns", LOWER),
    "clat_max_ns": ("ns", LOWER),
    "clat_p50_ns": ("ns", LOWER),
    "clat_p90_ns": ("ns", LOWER),
    "clat_p99_ns": ("ns", LOWER),
    "clat_p99_9_ns": ("ns", LOWER),
    "clat_p99_99_ns": ("ns", LOWER),
    "cpu_usr": ("%", LOWER),
    "cpu_sys": ("%", LOWER),
    "ops_per_s": ("1/s", HIGHER),
    "seconds": ("s", LOWER),
    "sync_seconds": ("s", LOWER),
    "cpu_pct": ("%", LOWER),
    "lat_max_ns": ("ns", LOWER),
}

# The metrics the summary tables show when a workload has them, in display order.
HEADLINE_METRICS = ("iops", "bw_bytes", "ops_per_s", "seconds", "clat_mean_ns", "clat_p99_ns",
                    "lat_max_ns", "sync_seconds")


class Measurement(NamedTuple):
    """One value a workload measured, before the run's identity is attached.

    A named tuple, not a dataclass: an import of 10,000 fio files makes ~150,000 of them,
    and a tuple is built several times faster.
    """

    op: str
    metric: str
    value: float
    host: str = ""
    sample: int = 0  # several samples in one run (files): the run's mean is the observation
    note: str = ""  # why a value is missing (NaN), e.g. bonnie++'s "+++++"

    @property
    def unit(self) -> str:
        return METRIC_UNITS[self.metric][0]

    @property
    def better(self) -> str:
        return METRIC_UNITS[self.metric][1]
