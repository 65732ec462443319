"""Per-cell summaries (target × workload × op × metric) and the best target per row."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from fslab.analysis.cells import cachebound, median
from fslab.analysis.cells.median import median_ci
from fslab.analysis.cells.observations import observations, per_run
from fslab.analysis.cells.stats import log_ci, mad_outliers, mean_ci
from fslab.analysis.step import Step
from fslab.core.environment_record import Environment
from fslab.core.metrics import HIGHER, NOISY_HALF_WIDTH, PROBE, SECTION
from fslab.core.record import RunRecord

CELL = ["target", "fs", "fs_impl", "workload", "op", "metric", "unit", "better"]
SUMMARY_COLUMNS = [
    "target", "fs", "fs_impl", "workload", "op", "metric", "unit", "better",
    "n", "mean", "geomean", "median", "sd", "cv", "ci_low", "ci_high", "ci_scale",
    "median_ci_low", "median_ci_high", "median_ci_level",
    "margin_of_error", "ci_half_width_pct", "outliers", "noisy",
    "best", "best_clear", "of_raw", "note",
]

# What this step does, in one statement the report prints (stats/methods.csv).
METHOD = ('Per-cell intervals: on the log scale, like the comparisons (the geometric mean with '
          'a Student t interval of the logs; for an aging run, over its sections: the sectioned '
          'interval). Outliers are flagged by the median/MAD rule (3.5), never dropped.')


def summarize(metrics: pd.DataFrame, runs: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per cell: n, mean, geometric mean, median, sd, CV, the 95 % interval on the
    log scale (t interval of the logs around the geometric mean; the comparisons' scale),
    the median's exact interval with its achieved level; noisy and best flags.

    The observation is one run: several samples of one run are averaged first. `runs` is
    `per_run(metrics)` when the caller has it already.
    """
    if metrics.empty:
        return pd.DataFrame(columns=SUMMARY_COLUMNS)
    runs = per_run(metrics) if runs is None else runs
    notes = _notes(metrics)
    values = runs["value"].to_numpy(dtype=float)
    sections = runs["sample"].to_numpy() > 0 if "sample" in runs else np.zeros(len(runs), bool)
    rows = []
    for key, index in runs.groupby(CELL, sort=False, dropna=False).indices.items():
        cell = values[index]
        if sections[index].any():  # each an observation (analysis.cells.observations)
            notes[key] = notes.get(key) or f"{len(index)} sections of one run in time order"
        ci = mean_ci(cell)
        geo = log_ci(cell)
        finite = cell[np.isfinite(cell)]
        median_low, median_high, median_level = median_ci(finite)
        # On the log scale where every value is positive (rates, times, latencies: the
        # comparisons' scale); a cell with a 0 or a negative value keeps the t interval
        # of the mean, and says so in ci_scale.
        interval = geo if geo.n == ci.n and ci.n else None
        low, high = (interval.ci_low, interval.ci_high) if interval else (ci.ci_low, ci.ci_high)
        rel = interval.relative_half_width if interval else ci.relative_half_width
        rows.append({
            **dict(zip(CELL, key, strict=True)),
            "n": ci.n,
            "mean": ci.mean,
            "geomean": interval.center if interval else math.nan,
            "median": float(np.median(finite)) if finite.size else math.nan,
            "sd": ci.sd,
            "cv": ci.sd / abs(ci.mean) if ci.mean and not math.isnan(ci.sd) else math.nan,
            "ci_low": low,
            "ci_high": high,
            "ci_scale": "log" if interval else "linear",
            "median_ci_low": median_low,
            "median_ci_high": median_high,
            "median_ci_level": median_level,
            "margin_of_error": (high - low) / 2 if low == low else math.nan,
            "outliers": int(mad_outliers(finite).sum()) if finite.size else 0,
            "ci_half_width_pct": 100.0 * rel if not math.isnan(rel) else math.nan,
            "noisy": bool(math.isnan(rel) or rel > NOISY_HALF_WIDTH),
            "note": notes.get(key, ""),
        })
    if not rows:
        return pd.DataFrame(columns=SUMMARY_COLUMNS)
    summary = pd.DataFrame(rows).sort_values(CELL, kind="stable").reset_index(drop=True)
    summary["best"], summary["best_clear"] = _best_flags(summary)
    summary["of_raw"] = _fraction_of_raw(summary)
    return summary[SUMMARY_COLUMNS]


def _notes(metrics: pd.DataFrame) -> dict[tuple, str]:
    """Why values of a cell are missing (e.g. bonnie++'s "+++++"), most common first."""
    if "note" not in metrics or not _has_note(metrics).any():
        return {}  # the usual case: no observation filtering to pay for
    rows = observations(metrics)
    noted = rows[_has_note(rows)]
    return {key: group["note"].mode().iloc[0]
            for key, group in noted.groupby(CELL, sort=False, dropna=False)}


def _has_note(rows: pd.DataFrame) -> pd.Series:
    """Rows whose note says why a value is missing (not what a sample is)."""
    # notna first: fillna("") fails on a categorical column without "" among its values
    return rows["note"].notna() & ~rows["note"].isin(["", SECTION, PROBE])


def _fraction_of_raw(summary: pd.DataFrame) -> pd.Series:
    """Each cell's mean as a fraction of the raw device's mean for the same job (or NaN)."""
    raw = summary[summary["fs"] == "raw"]
    if raw.empty:
        return pd.Series(math.nan, index=summary.index)
    ceiling = raw.groupby(["workload", "op", "metric"])["mean"].first()
    keys = list(zip(summary["workload"], summary["op"], summary["metric"], strict=True))
    return pd.Series([summary["mean"].iloc[i] / ceiling[k]
                      if k in ceiling.index and ceiling[k] else math.nan
                      for i, k in enumerate(keys)], index=summary.index)


def _best_flags(summary: pd.DataFrame) -> tuple[pd.Series, pd.Series]:
    """Mark the best mean in each workload × op × metric row, honouring the direction.

    `best_clear` is True only when the winner's CI does not overlap the runner-up's: a
    conservative hedge until a proper test says more (overlapping 95 % CIs do not prove
    "no difference", but separated ones are a difference nobody should argue with).
    """
    mean = summary["mean"].to_numpy(dtype=float)
    low, high = (summary[c].to_numpy(dtype=float) for c in ("ci_low", "ci_high"))
    higher = (summary["better"] == HIGHER).to_numpy()
    best, clear = np.zeros(len(summary), bool), np.zeros(len(summary), bool)
    for index in summary.groupby(["workload", "op", "metric"], sort=False).indices.values():
        index = index[np.isfinite(mean[index])]
        if len(index) < 2:
            continue
        up = bool(higher[index[0]])
        winner, runner_up = index[np.argsort(-mean[index] if up else mean[index],
                                             kind="stable")][:2]
        best[winner] = True
        clear[winner] = low[winner] > high[runner_up] if up else high[winner] < low[runner_up]
    return pd.Series(best, index=summary.index), pd.Series(clear, index=summary.index)


def cell_summary(metrics: pd.DataFrame, runs: pd.DataFrame, records: list[RunRecord],
                 environment: Environment, asked: set[tuple[str, str, str]]
                 ) -> pd.DataFrame:
    """The per-cell summary with cache-bound cells marked (analysis.cells.cachebound) and
    the primary questions' cells flagged (the history reads the flag)."""
    summary = cachebound.mark_cache_bound(summarize(metrics, runs), records, environment,
                                          runs)
    summary["primary"] = [key in asked for key in zip(
        summary["workload"].astype(str), summary["op"].astype(str),
        summary["metric"].astype(str), strict=True)]
    return summary


# The summary with each cell's factors as columns is summary.csv (factors/levels.py).
STEP = Step("summary", reads=("metrics", "runs", "records", "environment", "asked"),
            makes=("cell_summary",), run=cell_summary, method=METHOD,
            rests_on=(("median", median.METHOD), ("cachebound", cachebound.METHOD)))
