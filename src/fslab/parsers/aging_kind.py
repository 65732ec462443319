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
- successful operations per second, failed operations per op (`errors`), the run's time.
"""

from __future__ import annotations

import io
import math
from collections.abc import Iterator
from typing import Any

import numpy as np

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


def probe_rows(probes: list[dict[str, Any]]) -> list[Measurement]:
    """The state each probe saw, its `sample` the operations done by then; a probe a file
    system cannot answer (FUSE: no FIEMAP) gives no row, never a zero."""
    out = []
    for probe in probes:
        for part, key, metric in PROBED:
            seen = probe.get(part) or {}
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


def _parse(files: RawFiles) -> Parsed:
    import pyarrow.parquet as pq

    record = read_json(files, AGING_RECORD)
    log = pq.read_table(io.BytesIO(files.read(OP_LOG)), columns=["t_s", "op", "latency_ns"])
    order = np.argsort(log.column("t_s").to_numpy(), kind="stable")
    ops = np.asarray(log.column("op").to_pylist(), dtype=object)[order]
    out = latency_rows(ops, log.column("latency_ns").to_numpy()[order])
    seconds = float(record["seconds"])
    out.append(Measurement("all", "ops_per_s",
                           record["ops_succeeded"] / seconds if seconds else math.nan))
    out.append(Measurement("all", "seconds", seconds))
    failed: dict[str, int] = {}
    for what, count in (record.get("failures") or {}).items():
        op = what.split(" ", 1)[0]
        failed[op] = failed.get(op, 0) + int(count)
    out += [Measurement(op, "errors", float(count)) for op, count in sorted(failed.items())]
    if PROBES in files.names():
        out += probe_rows(read_json(files, PROBES))
    if UTILIZATION in files.names():
        out += utilization_rows(read_text(files, UTILIZATION))
    return Parsed("aging", out, {"outcome": outcome(record)})


def outcome(record: dict[str, Any]) -> str:
    """How an aging run went, in one line (the report's runs table)."""
    return (f"{record['ops_succeeded']} of {record['ops_attempted']} operations succeeded "
            f"in {float(record['seconds']):.1f} s; stopped by {record['stopped_by']}")


AGING = RawKind("aging", "", lambda files: {AGING_RECORD, OP_LOG} <= set(files.names()),
                _parse)
