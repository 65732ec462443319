"""Where the noise comes from, per cell: between fresh file systems, within a run, and
what a run costs beside measuring — and from them the run length that decides soonest.

A run of L seconds on a fresh file system gives log value = μ + b + w̄_L: b its file
system's luck (variance σ_b², one draw per run: only more runs average it), w̄_L the
disk's moment-to-moment noise averaged over L seconds (variance σ_w²/L for σ_w² the
variance of one second's mean: a longer run averages it). A run costs c + L machine
seconds (c its fixed cost: making the file system, laying out, dropping caches, starting
fio, the ramp). For n runs the mean's variance is (σ_b² + σ_w²/L)/n at a cost of n(c + L):
the cost of a given variance is least at L* = √(c σ_w² / σ_b²) (two-stage sampling,
Cochran 1977 §10.6), with n from the margin and the error rates.

Estimated per cell (target × workload × op of the primary metric), with 95 % intervals:
- σ_w at one second: from fio's per-interval log (intervals.parquet), each run's
  one-second block means' spread on the log scale, pooled over the runs (chi-square
  interval on the pooled degrees of freedom). Whether it falls with run length as
  independent noise does (a block twice as long, half the variance) is checked on half-
  and one-second blocks: a cell where it does not (the disk's cache filling, a write
  cliff, a thermal trend) says so, and its best run length is not trusted;
- σ_b: the runs' spread across iterations less the within-run part at their length
  (method of moments, at least 0; interval from the total's chi-square interval and σ_w's);
- c: the median of machine_s − measured_s over the cell's runs (run.json's steps).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import special

from fslab.analysis.statistic import Measured, Statistic

COLUMNS = ["cell", "target", "workload", "op", "metric", "iterations", "runtime_s",
           "sigma_between", "sigma_between_low", "sigma_between_high", "sigma_within_1s",
           "sigma_within_1s_low", "sigma_within_1s_high", "fixed_cost_s", "best_runtime_s",
           "falls_with_length", "note"]
BLOCK_S = 1.0  # σ_w is stated for one second of measuring
HALF_S = 0.5  # the finer block its scaling with run length is checked against
FULL_BLOCK = 0.8  # a block counts when it holds this share of its intervals
# Fewer one-second blocks than this (runs of a second or two) and σ_w is read off
# half-second blocks, scaled to a second as independent noise scales.
MIN_BLOCK_DF = 4
# The variance of a block twice as long is half for independent noise: a second's blocks
# varying more than that by an F test at this level says the spread does not fall with
# run length the way a planner assumes (a cache filling, a cliff, a trend within runs).
FALLS_ALPHA = 0.01
MIN_RUNTIME_S, MAX_RUNTIME_S = 1.0, 60.0  # the run lengths a plan chooses between
METHOD = ("Noise (noise.csv): per cell, the spread between fresh file systems (the runs' "
          "spread less the within-run part), within a run for one second of measuring (fio's "
          "per-interval log, one-second blocks pooled over the runs) and a run's fixed cost "
          "(machine seconds beside measuring), each with its 95 % interval; the run length "
          "that reaches a given precision for the fewest machine seconds is "
          "√(fixed cost × within² / between²) (two-stage sampling), within 1-60 s.")


@dataclass(frozen=True)
class Components:
    """One cell's noise: the spreads (log scale, ≈ relative SD) and a run's fixed cost."""

    between: float
    within_1s: float
    fixed_cost_s: float
    runtime_s: float  # the measuring seconds of the runs they were estimated from
    falls: bool = True  # whether the within-run spread falls with run length
    between_high: float = math.nan  # the upper end of between's 95 % interval

    def variance(self, runtime_s: float) -> float:
        """One run's variance at `runtime_s` seconds of measuring."""
        return self.between ** 2 + self.within_1s ** 2 / max(runtime_s, 1e-9)

    def best_runtime(self) -> float:
        return best_runtime(self.fixed_cost_s, self.within_1s, self.between)


def best_runtime(fixed_cost_s: float, within_1s: float, between: float) -> float:
    """L* = √(c σ_w² / σ_b²) within MIN_RUNTIME_S..MAX_RUNTIME_S (module doc)."""
    if not within_1s > 0:
        return MIN_RUNTIME_S
    if not between > 0:
        return MAX_RUNTIME_S
    optimal = math.sqrt(max(fixed_cost_s, 0.0) * within_1s ** 2 / between ** 2)
    return min(MAX_RUNTIME_S, max(MIN_RUNTIME_S, optimal))


def noise_table(measured: Measured) -> pd.DataFrame:
    """stats/noise.csv: one row per primary cell (module doc)."""
    runs = measured.runs
    steps_timed = any(getattr(r, "measured_s", 0) > 0 for r in measured.records)
    if runs.empty or "primary" not in measured.summary or not (
            steps_timed or (measured.intervals is not None and not measured.intervals.empty)):
        return pd.DataFrame(columns=COLUMNS)  # imports: nothing says where noise comes from
    primary = measured.summary[measured.summary["primary"].astype(bool)]
    wanted = set(map(tuple, primary[list(CELL)].astype(str).itertuples(index=False)))
    seconds = _seconds(measured.records)
    series = _all_series(measured.intervals)
    rows = []
    keys = runs[list(CELL)].astype(str)
    for key, index in keys.groupby(list(CELL), sort=True).groups.items():
        if key not in wanted:
            continue
        mine = runs.loc[index]
        ids = mine["run_id"].astype(str).tolist()
        timed = [seconds[r] for r in ids if r in seconds]
        cell = dict(zip(CELL, key, strict=True))
        found = estimate(mine["value"].astype(float).tolist(), [m for _, m in timed],
                         [t - m for t, m in timed],
                         [series[(r, key[2], key[3])] for r in ids
                          if (r, key[2], key[3]) in series])
        rows.append({**cell, "cell": f"{cell['target']} {cell['workload']}", **found})
    return pd.DataFrame(rows, columns=COLUMNS)


CELL = ("target", "workload", "op", "metric")


def _all_series(intervals: pd.DataFrame | None
                ) -> dict[tuple[str, str, str], tuple[np.ndarray, np.ndarray]]:
    """{(run id, op, metric): its per-interval (seconds, value)}; a run with reads and
    writes also has their sum as op `total` (a mixed job's question is about the two)."""
    if intervals is None or intervals.empty:
        return {}
    out = {}
    for (run, op, metric), rows in intervals.groupby(["run_id", "op", "metric"],
                                                      observed=True, sort=False):
        out[(str(run), str(op), str(metric))] = (rows["t_s"].to_numpy(dtype=float),
                                                 rows["value"].to_numpy(dtype=float))
    both = intervals[intervals["op"].astype(str).isin(("read", "write"))]
    summed = both.groupby(["run_id", "metric", "t_s"], observed=True)["value"].agg(
        ["sum", "count"]).reset_index()
    summed = summed[summed["count"] == 2]
    for (run, metric), rows in summed.groupby(["run_id", "metric"], observed=True):
        out.setdefault((str(run), "total", str(metric)), (
            rows["t_s"].to_numpy(dtype=float), rows["sum"].to_numpy(dtype=float)))
    return out


def _seconds(records: Any) -> dict[str, tuple[float, float]]:
    """{run id: (machine seconds, measuring seconds)} of the runs that recorded steps."""
    out = {}
    for record in records or ():
        if record.status == "ok" and record.measured_s > 0:
            out[record.run_id] = (float(record.machine_s), float(record.measured_s))
    return out


def estimate(values: list[float], runtimes: list[float], fixed_costs: list[float],
             series: list[tuple[np.ndarray, np.ndarray]]) -> dict[str, object]:
    """noise.csv's figures of one cell from its runs' values, their measuring seconds,
    their fixed costs and their per-interval series (module doc)."""
    runtime = float(np.mean(runtimes)) if runtimes else math.nan
    fixed = float(np.median(fixed_costs)) if fixed_costs else math.nan
    row: dict[str, object] = {"iterations": len(values), "runtime_s": runtime,
                           "fixed_cost_s": fixed, "note": ""}
    within, within_df = within_spread(series, BLOCK_S)
    half, half_df = within_spread(series, HALF_S)
    if within_df < MIN_BLOCK_DF <= half_df:  # short runs (slices): half-second blocks
        within, within_df = half, half_df
    low_w, high_w = _sd_interval(within, within_df)
    row.update(sigma_within_1s=within, sigma_within_1s_low=low_w, sigma_within_1s_high=high_w)
    falls = True
    if within_df and half_df and within > 0 and half > 0 and within is not half:
        # both scaled to one second: equal where the noise is independent
        falls = float(special.fdtrc(within_df, half_df, within ** 2 / half ** 2)) >= FALLS_ALPHA
        if not falls:
            row["note"] = (f"the spread within a run does not fall with its length (a "
                           f"second's blocks vary {within / half * math.sqrt(2):.2g}× what "
                           "independent noise would): its best run length is not trusted")
    row["falls_with_length"] = falls
    logs = np.log([v for v in values if v > 0])
    if len(logs) < 2 or not math.isfinite(within) or not math.isfinite(runtime):
        row.update(sigma_between=math.nan, sigma_between_low=math.nan,
                   sigma_between_high=math.nan, best_runtime_s=math.nan)
        if not row["note"]:
            row["note"] = "needs 2 iterations and fio's per-interval log of its runs"
        return row
    total = float(np.var(logs, ddof=1))
    low_t, high_t = _variance_interval(total, len(logs) - 1)
    between = math.sqrt(max(0.0, total - within ** 2 / runtime))
    row.update(sigma_between=between,
               sigma_between_low=math.sqrt(max(0.0, low_t - high_w ** 2 / runtime)),
               sigma_between_high=math.sqrt(max(0.0, high_t - low_w ** 2 / runtime)),
               best_runtime_s=best_runtime(fixed, within, between) if falls and
               math.isfinite(fixed) else math.nan)
    return row


def within_spread(series: list[tuple[np.ndarray, np.ndarray]], block_s: float
                  ) -> tuple[float, int]:
    """(σ of a `block_s` block's log mean within a run, scaled to one second, its pooled
    degrees of freedom) of runs' per-interval (seconds, value) series."""
    squares, df = 0.0, 0
    for t, v in series:
        if len(t) < 2:
            continue
        step = float(np.median(np.diff(np.sort(t)))) or 0.1
        per_block = max(1, round(block_s / step))
        block = np.floor((t - t.min()) / block_s + 1e-9).astype(int)
        counts = np.bincount(block)
        sums = np.bincount(block, weights=v)
        full = (counts >= FULL_BLOCK * per_block) & (sums > 0)
        means = sums[full] / counts[full]
        if len(means) >= 2:
            logs = np.log(means)
            squares += float(((logs - logs.mean()) ** 2).sum())
            df += len(logs) - 1
    if not df:
        return math.nan, 0
    return math.sqrt(squares / df * block_s / BLOCK_S), df


def _variance_interval(variance: float, df: int, level: float = 0.95) -> tuple[float, float]:
    """The chi-square interval of a variance on `df` degrees of freedom."""
    tail = (1 - level) / 2
    return (variance * df / special.chdtri(df, tail),
            variance * df / special.chdtri(df, 1 - tail))


def _sd_interval(sd: float, df: int) -> tuple[float, float]:
    if not df or not math.isfinite(sd):
        return math.nan, math.nan
    low, high = _variance_interval(sd ** 2, df)
    return math.sqrt(low), math.sqrt(high)


def components_of(row: pd.Series) -> Components | None:
    """A noise.csv row as Components (None where they could not be estimated)."""
    values = [row["sigma_between"], row["sigma_within_1s"], row["fixed_cost_s"],
              row["runtime_s"]]
    if not all(isinstance(v, float | int) and math.isfinite(float(v)) for v in values):
        return None
    return Components(float(row["sigma_between"]), float(row["sigma_within_1s"]),
                      float(row["fixed_cost_s"]), float(row["runtime_s"]),
                      bool(row["falls_with_length"]), float(row["sigma_between_high"]))


STATISTIC = Statistic("noise", METHOD, noise_table)
