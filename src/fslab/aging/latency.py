"""Per-operation latency of an aging run: mean and median, each with a 95 % interval.

An aging run's latencies are neither independent nor stationary: the file system fills,
fragments and is trimmed while they are taken, and neighbouring operations share caches
and journal commits. An interval that treats 100,000 latencies as independent draws is
far too narrow. We use sectioning (Asmussen & Glynn, *Stochastic Simulation*, IV.5): the
estimate comes from the whole run; its spread from the same estimate on SECTIONS
contiguous stretches of the run in time order, as θ̂ ± t(K−1) · s / √K. It holds for any
statistic (the median included) and widens, honestly, when the run drifts.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import stats

SECTIONS = 20
MIN_PER_SECTION = 5  # fewer sections when an operation ran rarely; none below 2
# How the intervals are made, in the words every report uses.
METHOD = (f"95 % intervals by sectioning ({SECTIONS} stretches of the run in time order), so "
          "neighbouring operations are not counted as independent")
COLUMNS = ["op", "n", "mean_us", "mean_ci_low", "mean_ci_high", "median_us",
           "median_ci_low", "median_ci_high", "sections"]


def sectioned(values: np.ndarray, statistic: str) -> tuple[float, float, float, int]:
    """(estimate, CI low, CI high, sections) of `statistic` (mean or median) over values
    in time order; the interval is NaN when there are too few values for two sections."""
    estimate = float(np.mean(values) if statistic == "mean" else np.median(values))
    count = min(SECTIONS, len(values) // MIN_PER_SECTION)
    if count < 2:
        return estimate, math.nan, math.nan, 0
    parts = np.array_split(values, count)
    per_part = np.array([np.mean(p) if statistic == "mean" else np.median(p) for p in parts])
    half = stats.t.ppf(0.975, count - 1) * per_part.std(ddof=1) / math.sqrt(count)
    return estimate, estimate - half, estimate + half, count


def latency_table(log: pd.DataFrame) -> pd.DataFrame:
    """One row per operation type of an op log (t_s, op, latency_ns; successes only)."""
    rows = []
    for op, group in log.sort_values("t_s", kind="stable").groupby("op", sort=True):
        micros = group["latency_ns"].to_numpy(dtype=float) / 1e3
        mean, mean_low, mean_high, sections = sectioned(micros, "mean")
        median, median_low, median_high, _ = sectioned(micros, "median")
        rows.append([op, len(micros), mean, mean_low, mean_high, median, median_low,
                     median_high, sections])
    return pd.DataFrame(rows, columns=COLUMNS)


def ratio_interval(base: pd.Series, new: pd.Series, which: str) -> tuple[float, float, float]:
    """new/base of one statistic (mean or median) with a 95 % interval, from the two runs'
    sectioned intervals: on the log scale, standard errors added, Welch–Satterthwaite df."""
    b, n = float(base[f"{which}_us"]), float(new[f"{which}_us"])
    if not (b > 0 and n > 0):
        return math.nan, math.nan, math.nan
    ratio = n / b
    errors, dfs = [], []
    for row, value in ((base, b), (new, n)):
        k = int(row["sections"])
        if k < 2:
            return ratio, math.nan, math.nan
        half = (float(row[f"{which}_ci_high"]) - float(row[f"{which}_ci_low"])) / 2
        errors.append(half / stats.t.ppf(0.975, k - 1) / value)  # se of log(value)
        dfs.append(k - 1)
    se = math.hypot(*errors)
    if se == 0:
        return ratio, ratio, ratio
    df = se**4 / sum(e**4 / d for e, d in zip(errors, dfs, strict=True))
    half = stats.t.ppf(0.975, df) * se
    return ratio, ratio * math.exp(-half), ratio * math.exp(half)
