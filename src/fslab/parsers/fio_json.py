"""fio's JSON output as types: what fslab reads of a result, a job, a direction of a job
and a latency block, by fio's own key names (fio 3.33 `--output-format=json+`, and the
µs and KiB/s keys of fio before 3.0). Every key may be missing (total=False): the parser
reads each defensively, and a value of the wrong type is a FioParseError, never a crash.
A key fslab does not read is not listed; it stays in the dict as fio wrote it."""

from __future__ import annotations

from typing import Literal, TypedDict

import numpy as np

Direction = Literal["read", "write", "trim"]
DIRECTIONS: tuple[Direction, ...] = ("read", "write", "trim")
LatencyKind = Literal["clat", "lat", "slat"]
LATENCY_KINDS: tuple[LatencyKind, ...] = ("clat", "lat", "slat")
# json+ bins: {latency ns as text: count}, or load_fio's (latencies, counts) arrays
Bins = dict[str, int] | tuple[np.ndarray, np.ndarray]


class LatencyBlock(TypedDict, total=False):
    """clat_ns, lat_ns or slat_ns of a direction (fio < 3.0: clat, lat, slat in µs)."""

    min: float
    max: float
    mean: float
    stddev: float
    N: int
    percentile: dict[str, float]
    bins: Bins


class DirectionStats(TypedDict, total=False):
    """One direction of a job: its I/O, rates, latency blocks and fio's statistics over
    its bandwidth and IOPS samples (`failed_ios`: fslab's, continue_on_error)."""

    io_bytes: int
    io_kbytes: int  # fio < 3.0
    bw_bytes: float
    bw: float  # KiB/s (fio < 3.0)
    iops: float
    runtime: int  # ms
    total_ios: int
    failed_ios: int
    bw_samples: int
    bw_min: float
    bw_max: float
    bw_dev: float
    iops_min: float
    iops_max: float
    iops_stddev: float
    clat_ns: LatencyBlock
    lat_ns: LatencyBlock
    slat_ns: LatencyBlock
    clat: LatencyBlock
    lat: LatencyBlock
    slat: LatencyBlock


class FioJob(TypedDict, total=False):
    """One job fio reports (a clone of a section, or a group it reported as one)."""

    jobname: str
    groupid: int
    error: int
    total_err: int  # present when the job ran with continue_on_error
    jobs: int  # fio's text output: the jobs a group_reporting entry stands for
    hostname: str  # client/server
    port: int
    job_runtime: int  # ms
    usr_cpu: float
    sys_cpu: float
    read: DirectionStats
    write: DirectionStats
    trim: DirectionStats
    sync: DirectionStats


# A disk fio reports under `disk_util`, as fio names its fields (kept as they came).
DiskUtil = dict[str, object]

FioResult = TypedDict("FioResult", {
    "fio version": str,
    "jobs": list[FioJob],
    "client_stats": list[FioJob],  # client/server: one per host and job, then "All clients"
    "disk_util": list[DiskUtil],
    "format": str,  # "normal": read from fio's text output (parsers/fio_text.py)
}, total=False)
