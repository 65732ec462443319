"""Cache-bound cells: results that are not a property of the file system.

A cell is cache-bound when
- its mean IOPS or bandwidth exceeds what the device under the loop images delivered for
  the same job (the ceiling: fslab/run/ceiling.py) by more than CEILING_MARGIN — where the
  ceiling was measured in the same rounds as the cell (the campaign's first iterations:
  run/ceiling.py CEILING_ITERATIONS), as the geometric mean over those iterations of each
  iteration's value over that iteration's ceiling (the disk's drift, shared within a
  round, cancels as it does between targets); else the cell's mean over the ceiling
  measured before the campaign, or the largest measured in rounds — or
- its runs did buffered I/O on a file set that fits in the machine's RAM (a study preset
  reproduced verbatim, e.g. basic5): the page cache can hold all of it.
Such a cell is marked, never crowned, and verdicts about it say so instead of naming a
winner. Pure: tables in, table out.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import pandas as pd

from fslab.analysis.cells.stats import geomean
from fslab.core.environment_record import ByIteration, Ceilings, Environment
from fslab.core.record import RunRecord

# A single ceiling measurement on a loop device swings (PLATFORM.md: 2-4x between runs);
# a result counts as above it only beyond this factor.
CEILING_MARGIN = 1.25
RATE_METRICS = ("iops", "bw_bytes")

# What this step does, in one statement the report prints (stats/methods.csv).
METHOD = ("Cache-bound: a cell whose IOPS or bandwidth exceeds 1.25× what the loop images' own "
          'disk delivered for the same job (a raw loop device with direct I/O on data just '
          'written, measured in the same rounds as the cells in the first two iterations and '
          "compared iteration by iteration: environment.json 'ceilings_by_iteration'; for "
          "cells without such an iteration, the largest of them; for jobs not measured in "
          "rounds, the better of two runs before the campaign: 'ceilings'), or whose runs did "
          'buffered I/O on files that fit in RAM, is marked and never ranked.')


def mark_cache_bound(summary: pd.DataFrame, records: Iterable[RunRecord],
                     environment: Environment,
                     per_run: pd.DataFrame | None = None) -> pd.DataFrame:
    """`summary` with cache_bound / cache_bound_reason columns (and of_raw from the
    ceiling where no raw target ran); cache-bound cells lose their best flags. `per_run`
    (analysis.cells.observations.per_run) pairs cells with ceilings measured in their rounds."""
    out = summary.copy()
    reasons: dict[tuple[str, str], list[str]] = {
        key: [reason] for key, reason in _buffered_in_ram(records, environment).items()}
    ceilings = environment.ceilings
    paired = paired_ratios(per_run, environment.ceilings_by_iteration)
    noted: set[tuple[str, str, str]] = set()  # (target, workload, op): IOPS or bandwidth, once
    of_raw = out["of_raw"].to_numpy(dtype=float, copy=True) if "of_raw" in out else None
    for index, row in enumerate(out.itertuples()):
        if row.metric not in RATE_METRICS or not isinstance(row.mean, float):
            continue
        key = (str(row.target), str(row.workload), str(row.op), str(row.metric))
        ratio, when = paired.get(key), "in the same rounds"
        if ratio is None:
            ceiling = ceiling_of(ceilings, *key[1:])
            if not ceiling:
                continue
            ratio, when = row.mean / ceiling, "for this job"
        if of_raw is not None and math.isnan(of_raw[index]):
            of_raw[index] = ratio
        if ratio > CEILING_MARGIN and key[:3] not in noted:
            noted.add(key[:3])
            reasons.setdefault(key[:2], []).append(
                f"{row.op} {ratio:.1f}× what the disk under the image delivered {when}")
    if of_raw is not None:
        out["of_raw"] = of_raw
    keys = list(zip(out["target"].astype(str), out["workload"].astype(str), strict=True))
    out["cache_bound_reason"] = ["; ".join(dict.fromkeys(reasons.get(key, [])))
                                 for key in keys]
    out["cache_bound"] = out["cache_bound_reason"] != ""
    for column in ("best", "best_clear"):
        if column in out:
            out[column] = out[column] & ~out["cache_bound"]
    return out


def paired_ratios(per_run: pd.DataFrame | None, by_iteration: ByIteration
                  ) -> dict[tuple[str, str, str, str], float]:
    """(target, workload, op, metric) -> geometric mean over iterations of the cell's
    value over the ceiling measured in the same iteration's rounds."""
    if per_run is None or per_run.empty or not by_iteration:
        return {}
    ratios: dict[tuple[str, str, str, str], list[float]] = {}
    rates = per_run[per_run["metric"].isin(RATE_METRICS)]
    for row in rates.itertuples():
        ceiling = by_iteration.get(str(row.workload), {}).get(str(row.op), {}).get(
            str(row.metric), {}).get(str(int(row.iteration)))
        if ceiling and row.value > 0:
            key = (str(row.target), str(row.workload), str(row.op), str(row.metric))
            ratios.setdefault(key, []).append(row.value / ceiling)
    return {key: geomean(values) for key, values in ratios.items()}


def _buffered_in_ram(records: Iterable[RunRecord],
                     environment: Environment) -> dict[tuple[str, str], str]:
    memory = environment.memory_bytes
    found: dict[tuple[str, str], str] = {}
    if not memory:  # imported results: no machine to compare with (and no need to read)
        return found
    for record in records:
        io = record.workload_metadata.section("io")
        if io.get("direct", True):
            continue
        size = int(io.get("file_set_bytes") or 0)
        if size < memory:  # the job's cell and each of its sections' (their own names)
            sections = {str(m["workload"]) for m in record.metrics if m.get("workload")}
            for workload in {record.workload, *sections}:
                found[(record.target, workload)] = (
                    f"buffered I/O on {size / 2**20:.0f} MiB of files, which the "
                    f"{memory / 2**30:.0f} GiB of RAM can cache")
    return found


def ceiling_of(ceilings: Ceilings, workload: str, op: str, metric: str) -> float | None:
    """The largest ceiling measured for a workload's op and metric on any device (None if
    none; environment.json "ceilings", written by fslab/run/ceiling.py). Sections of a job
    (`<job>/<section>`) were measured as such."""
    found = [ops.get(workload, {}).get(op, {}).get(metric)
             for ops in ceilings.values() if isinstance(ops, dict)]
    values = [float(v) for v in found if isinstance(v, (int, float))]
    return max(values) if values else None
