"""Shared variation: iterations in which a workload ran faster or slower on every target.

On a shared or virtual disk the device speeds up and slows down, and in this VM's
measurements a quarter to a third of the run-to-run spread of a cell was shared by the
same workload on every target within an iteration.
It widens each cell's interval, which must include it (it is real variation of "this
cell on this machine"), while the comparisons, blocked by iteration, remove it. Saying
how much of the spread it is tells a user why the per-cell intervals are wide while the
verdicts can still be sure.

Measured on IOPS (bandwidth where there is none) per target · workload · op, as log
ratios to each cell's own geometric mean; an iteration's factor is the geometric mean
of its ratios over all cells; the share with its interval by shared_variation.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import pandas as pd
from scipy.special import fdtri  # F quantile; scipy.stats costs a second to import

from fslab.analysis.step import Step

THROUGHPUT = ("iops", "bw_bytes")
WORTH_SAYING = 0.05  # iteration factors spanning less than ±5 % are not mentioned
COLUMNS = ["iteration", "factor", "cells", "same_direction"]

# What this step does, in one statement the report prints (stats/methods.csv).
METHOD = ('Shared variation: the share of the log variance shared by every target within an '
          'iteration (intraclass correlation of the two-way layout, iterations × targets), with '
          'its exact F-based 95 % interval.')


class Shared(NamedTuple):
    """The share of the run-to-run (log) variance shared by every target within an
    iteration, with its 95 % interval; NaN when it cannot be estimated."""

    share: float
    low: float
    high: float


UNKNOWN = Shared(math.nan, math.nan, math.nan)


def iteration_drift(per_run: pd.DataFrame) -> tuple[pd.DataFrame, Shared]:
    """(one row per iteration: factor, cells, share of cells moved its way; the share of
    the cells' log variance shared by all targets within an iteration and workload·op,
    with its interval). Empty with fewer than 3 iterations or 2 cells."""
    rows = per_run[per_run["metric"].isin(THROUGHPUT) & (per_run["op"] != "total")
                   & (per_run["value"] > 0)].copy()
    rows = rows[rows["metric"] == "iops"] if (rows["metric"] == "iops").any() else rows
    if rows.empty or rows["iteration"].nunique() < 3:
        return pd.DataFrame(columns=COLUMNS), UNKNOWN
    rows["log"] = np.log(rows["value"].astype(float))
    cell = ["target", "workload", "op", "metric"]
    rows["residual"] = rows["log"] - rows.groupby(cell, observed=True)["log"].transform("mean")
    if rows.groupby(cell, observed=True).ngroups < 2:
        return pd.DataFrame(columns=COLUMNS), UNKNOWN
    by_iteration = rows.groupby("iteration")["residual"]
    shift = by_iteration.mean()
    rows["agrees"] = np.sign(rows["residual"]) == np.sign(rows["iteration"].map(shift))
    table = pd.DataFrame({
        "iteration": shift.index, "factor": np.exp(shift.to_numpy()),
        "cells": by_iteration.size().to_numpy(),
        "same_direction": rows.groupby("iteration")["agrees"].mean().to_numpy(),
    })
    return table, shared_variation(rows)


def shared_variation(rows: pd.DataFrame, confidence: float = 0.95) -> Shared:
    """What the comparisons' blocking removes, as a share of the run-to-run variance.

    Each workload · op · metric is a two-way layout, iterations (random) × targets
    (fixed), of log values; the share is the consistency intraclass correlation
    ICC(3,1) = (MS_iter − MS_err) / (MS_iter + (k − 1)·MS_err), with the exact interval
    from F = MS_iter / MS_err ~ F(df_iter, df_err) scaled (McGraw & Wong 1996, case 3;
    Shrout & Fleiss 1979). The layouts' sums of squares are pooled. The estimate is the
    ANOVA (moment) one, unbiased before it is cut at 0 — a block-mean estimate reads
    0.19–0.24 where the truth is 0 (2 targets, n = 3–5). Only iterations in which
    every target of the layout ran are used."""
    ss_iter = ss_err = df_iter = df_err = weighted_k = 0.0
    blocks = rows.groupby(["workload", "op", "metric"], observed=True, sort=False).indices
    logs = rows["log"].to_numpy(dtype=float)
    iterations = rows["iteration"].to_numpy()
    targets = rows["target"].astype(str).to_numpy()
    for index in blocks.values():
        values = _complete_layout(iterations[index], targets[index], logs[index])
        n, k = values.shape
        if n < 2 or k < 2:
            continue
        grand = values.mean()
        row_means, col_means = values.mean(axis=1), values.mean(axis=0)
        ss_iter += k * float(((row_means - grand) ** 2).sum())
        residual = values - row_means[:, None] - col_means[None, :] + grand
        ss_err += float((residual**2).sum())
        df_iter += n - 1
        df_err += (n - 1) * (k - 1)
        weighted_k += (n - 1) * k
    if df_iter < 1 or df_err < 1 or ss_err <= 0:
        return UNKNOWN
    k = weighted_k / df_iter
    ms_iter, ms_err = ss_iter / df_iter, ss_err / df_err
    f = ms_iter / ms_err
    tail = (1 - confidence) / 2
    f_low = f / float(fdtri(df_iter, df_err, 1 - tail))
    f_high = f * float(fdtri(df_err, df_iter, 1 - tail))

    def icc(x: float) -> float:
        return min(1.0, max(0.0, (x - 1) / (x + k - 1)))

    return Shared(icc(f), icc(f_low), icc(f_high))


def _complete_layout(iterations: np.ndarray, targets: np.ndarray,
                     logs: np.ndarray) -> np.ndarray:
    """Iterations × targets matrix of mean logs, keeping the iterations every target ran."""
    rows, row_codes = np.unique(iterations, return_inverse=True)
    cols, col_codes = np.unique(targets, return_inverse=True)
    sums = np.zeros((len(rows), len(cols)))
    counts = np.zeros((len(rows), len(cols)))
    np.add.at(sums, (row_codes, col_codes), logs)
    np.add.at(counts, (row_codes, col_codes), 1)
    complete = (counts > 0).all(axis=1)
    return sums[complete] / counts[complete]


def drift_note(table: pd.DataFrame, shared: Shared) -> str | None:
    """One plain sentence about the drift, or None when there is little to say."""
    if table.empty or not math.isfinite(shared.share):
        return None
    low, high = float(table["factor"].min()), float(table["factor"].max())
    if high / low < 1 + 2 * WORTH_SAYING and shared.share < 0.25:
        return None
    slowest = table.loc[table["factor"].idxmin()]
    return (f"Shared variation: within an iteration, a workload ran faster or slower on "
            f"every target alike — {shared.share:.0%} of the run-to-run variation (95 % CI "
            f"{shared.low:.0%}–{shared.high:.0%}; whole iterations ran at {low:.2f}–"
            f"{high:.2f}× of the cells' means; iteration {int(slowest['iteration'])}: "
            f"{slowest['factor']:.2f}×). The per-cell intervals include it; the "
            "comparisons, blocked by iteration, remove it.")


def _drift(runs: pd.DataFrame) -> tuple[pd.DataFrame, str | None]:
    table, shared = iteration_drift(runs)
    return table, drift_note(table, shared)


STEP = Step("drift", reads=("runs",), makes=("drift", "drift_note"), run=_drift, method=METHOD,
            tables={"drift": "drift.csv"})
