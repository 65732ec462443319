"""An aging run's raw output (`fslab age`) as a kind of the parse stage.

The engine keeps what it saw: every successful operation's time and latency
(`oplog.parquet`), the utilisation it steered by (`utilization.csv`), the fragmentation
probes (`fragmentation.json`) and its own record (`aging.json`: counts, failures, how it
stopped). The rows made here are those of every other run, with their own metrics:

- each operation's latency (`op_lat_p50_ns`, `op_lat_mean_ns`) per SECTION: an aging run is
  one long run whose latencies are neither independent nor stationary (the file system
  fills, fragments and is trimmed while they are taken), so its spread is read from the
  same statistic on contiguous stretches of the run in time order (sectioning: Asmussen &
  Glynn, *Stochastic Simulation*, IV.5). The analysis takes each section as an
  observation (analysis/cells/observations.py), so an interval widens, honestly, when the run
  drifts;
- the state the probes saw after `sample` operations (PROBE rows: layout of the files,
  share of files in one piece, free extents, largest free extent, utilisation); the run's
  value is the last, the state it left;
- successful operations per second, failed operations per op (`errors`), the run's time;
and, beside the rows, the run's metadata `aging` (aging_summary): what the report's aging
figures and the latency trend read (the free-space histogram at each probe, the used
extents at the first probe and the end, each operation's median latency along the run).
"""

from __future__ import annotations

import io
import math
from collections.abc import Iterator, Mapping
from typing import TypedDict

import numpy as np

from fslab.core.aging_record import AgingRecord, Probe
from fslab.core.metrics import PROBE, SECTION, Measurement
from fslab.parsers.raw_files import Parsed, RawFiles, RawKind, read_json, read_text

AGING_RECORD = "aging.json"
OP_LOG = "oplog.parquet"
UTILIZATION = "utilization.csv"
PROBES = "fragmentation.json"

SECTIONS = 20
MIN_PER_SECTION = 5  # fewer sections when an operation ran rarely; none below 2
MAX_UTILIZATION_POINTS = 200  # the utilisation log, thinned for the table
# (probe part, key, metric): what each fragmentation probe contributes
PROBED = (("used", "layout_score", "file_layout_score"),
          ("used", "optimal_share", "whole_files_share"),
          ("free", "free_extents", "free_extents"),
          ("free", "largest_bytes", "largest_free_bytes"))


def sections(values: np.ndarray) -> Iterator[np.ndarray]:
    """`values` (in time order) cut into SECTIONS contiguous stretches, fewer when there
    are under MIN_PER_SECTION values a stretch; one piece when not even two fit."""
    count = min(SECTIONS, len(values) // MIN_PER_SECTION)
    yield from np.array_split(values, count) if count >= 2 else [values]


def latency_rows(ops: np.ndarray, latency_ns: np.ndarray) -> list[Measurement]:
    """Per operation type, its median and mean latency on each section of the run (rows
    of one section share `sample`); one unsectioned row each when it ran too rarely."""
    out: list[Measurement] = []
    for op in sorted(set(ops.tolist())):
        parts = list(sections(latency_ns[ops == op].astype(float)))
        note = SECTION if len(parts) > 1 else ""
        for number, part in enumerate(parts, start=1):
            sample = number if note else 0
            out.append(Measurement(op, "op_lat_p50_ns", float(np.median(part)),
                                   sample=sample, note=note))
            out.append(Measurement(op, "op_lat_mean_ns", float(part.mean()), sample=sample,
                                   note=note))
    return out


class ProbedHistogram(TypedDict):
    """Extents by size at one probe: [from, to, extents, bytes] per power-of-two bucket."""

    ops: int
    histogram: list[list[int]]


class AgingFigures(TypedDict):
    """What the report's aging figures and the latency trend read of one aging (a run's
    metadata `aging`; aging_summary)."""

    ops: int
    seconds: float
    stopped_by: str
    utilization: float | None
    used_max: float | None
    used_end: float | None
    free_space: list[ProbedHistogram]  # the free extents at each probe
    used_extents: list[ProbedHistogram]  # the files' extents, first probe and last
    latency: dict[str, list[list[float]]]  # op: [where in the run, median, count] each
    medians: dict[str, list[float]]  # op: [median latency over the aging, count]
    fstrims: int


def probe_rows(probes: list[Probe]) -> list[Measurement]:
    """The state each probe saw, its `sample` the operations done by then; a probe a file
    system cannot answer (FUSE: no FIEMAP) gives no row, never a zero."""
    out = []
    for probe in probes:
        parts: dict[str, Mapping[str, object]] = {"used": probe.get("used") or {},
                                                  "free": probe.get("free") or {}}
        for part, key, metric in PROBED:
            seen = parts[part]
            value = seen.get(key)
            if (seen.get("not_measurable") or seen.get("measurable") is False
                    or not isinstance(value, int | float) or not math.isfinite(value)):
                continue
            out.append(Measurement("fs", metric, float(value), sample=int(probe["ops"]),
                                   note=PROBE))
    return out


def utilization_rows(text: str) -> list[Measurement]:
    """utilization.csv (t_s, ops, used_share), thinned to MAX_UTILIZATION_POINTS, the last
    point always kept."""
    points = [line.split(",") for line in text.splitlines()[1:] if line]
    step = max(1, math.ceil(len(points) / MAX_UTILIZATION_POINTS))
    kept = points[::step] + ([points[-1]] if points and (len(points) - 1) % step else [])
    return [Measurement("fs", "used_share", float(used), sample=int(ops), note=PROBE)
            for _, ops, used in kept]


def power_buckets(lengths: list[int]) -> list[tuple[int, int, int, int]]:
    """Power-of-two buckets (from, to, extents, bytes) like e2freefrag's: the one way
    fslab buckets extents (probes/freespace.py, the aging summary)."""
    buckets: dict[int, list[int]] = {}
    for length in lengths:
        low = 1 << (max(1, int(length)).bit_length() - 1)
        buckets.setdefault(low, []).append(int(length))
    return [(low, 2 * low - 1, len(v), sum(v)) for low, v in sorted(buckets.items())]


def in_time_order(t: np.ndarray, ops: np.ndarray,
                  latency_ns: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The op log's operations and latencies in the order of their times (a stable sort:
    operations logged at one time keep their order)."""
    order = np.argsort(t, kind="stable")
    return ops[order], latency_ns[order]


def aging_summary(record: AgingRecord, probes: list[Probe], ops: np.ndarray,
                  latency_ns: np.ndarray) -> AgingFigures:
    """What the report's aging figures and the latency trend read of one aging (a run's
    metadata `aging`): how it went, the free-space histogram at each probe, the used
    extents' sizes at the first probe and at the end, and each operation's median latency
    on SECTIONS stretches of the run with where each lies in it (0: start, 1: end: the
    share of the run's operations before its middle). `ops` and `latency_ns` in time
    order (in_time_order)."""
    count = len(ops)
    position = (np.arange(count) + 0.5) / max(count, 1)
    latency: dict[str, list[list[float]]] = {}
    medians: dict[str, list[float]] = {}  # op -> [median latency over the aging, count]
    for op in sorted(set(ops.tolist())):
        mine = ops == op
        parts = zip(sections(position[mine]), sections(latency_ns[mine].astype(float)),
                    strict=True)
        latency[str(op)] = [[round(float(where.mean()), 5), float(np.median(values)),
                             len(values)] for where, values in parts]
        medians[str(op)] = [float(np.median(latency_ns[mine])), int(mine.sum())]
    free = [ProbedHistogram(ops=int(p["ops"]), histogram=[
        list(map(int, h)) for h in p["free"].get("histogram") or []])
        for p in probes if isinstance(p.get("free"), dict)
        and not p["free"].get("not_measurable")]
    used = [ProbedHistogram(ops=int(p["ops"]), histogram=[
        list(h) for h in power_buckets(p["used"].get("extent_sizes") or [])])
        for p in probes if isinstance(p.get("used"), dict) and p["used"].get("measurable")]
    return AgingFigures(
        ops=record.ops_done, seconds=record.seconds, stopped_by=record.stopped_by,
        utilization=record.utilization, used_max=record.used_max,
        used_end=record.used_end, free_space=free,
        used_extents=[used[0], used[-1]] if len(used) > 1 else used,
        latency=latency, medians=medians, fstrims=record.fstrims)


def recorded(files: RawFiles) -> AgingRecord:
    """The aging's record, read from its aging.json."""
    return AgingRecord.from_json(read_json(files, AGING_RECORD))


def _parse(files: RawFiles) -> Parsed:
    import pyarrow.parquet as pq

    record = recorded(files)
    log = pq.read_table(io.BytesIO(files.read(OP_LOG)), columns=["t_s", "op", "latency_ns"])
    ops, latency_ns = in_time_order(log.column("t_s").to_numpy(),
                                    np.asarray(log.column("op").to_pylist(), dtype=object),
                                    log.column("latency_ns").to_numpy())
    out = latency_rows(ops, latency_ns)
    seconds = record.seconds
    out.append(Measurement("all", "ops_per_s",
                           record.ops_succeeded / seconds if seconds else math.nan))
    out.append(Measurement("all", "seconds", seconds))
    failed: dict[str, int] = {}
    for what, count in record.failures.items():
        op = what.split(" ", 1)[0]
        failed[op] = failed.get(op, 0) + int(count)
    out += [Measurement(op, "errors", float(count)) for op, count in sorted(failed.items())]
    probes: list[Probe] = read_json(files, PROBES) if PROBES in files.names() else []
    out += probe_rows(probes)
    if UTILIZATION in files.names():
        out += utilization_rows(read_text(files, UTILIZATION))
    return Parsed("aging", out, {"outcome": outcome(record),
                                 "aging": aging_summary(record, probes, ops, latency_ns)})


def outcome(record: AgingRecord) -> str:
    """How an aging run went, in one line (the report's runs table)."""
    return (f"{record.ops_succeeded} of {record.ops_attempted} operations succeeded "
            f"in {record.seconds:.1f} s; stopped by {record.stopped_by}")


AGING = RawKind("aging", "", lambda files: {AGING_RECORD, OP_LOG} <= set(files.names()),
                _parse)
