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
of its ratios over all cells.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

THROUGHPUT = ("iops", "bw_bytes")
WORTH_SAYING = 0.05  # iteration factors spanning less than ±5 % are not mentioned
COLUMNS = ["iteration", "factor", "cells", "same_direction"]


def iteration_drift(per_run: pd.DataFrame) -> tuple[pd.DataFrame, float]:
    """(one row per iteration: factor, cells, share of cells moved its way; the share of
    the cells' log variance shared by all targets within an iteration and workload·op).
    Empty with fewer than 3 iterations or 2 cells."""
    rows = per_run[per_run["metric"].isin(THROUGHPUT) & (per_run["op"] != "total")
                   & (per_run["value"] > 0)].copy()
    rows = rows[rows["metric"] == "iops"] if (rows["metric"] == "iops").any() else rows
    if rows.empty or rows["iteration"].nunique() < 3:
        return pd.DataFrame(columns=COLUMNS), math.nan
    rows["log"] = np.log(rows["value"].astype(float))
    cell = ["target", "workload", "op", "metric"]
    rows["residual"] = rows["log"] - rows.groupby(cell)["log"].transform("mean")
    if rows.groupby(cell).ngroups < 2:
        return pd.DataFrame(columns=COLUMNS), math.nan
    by_iteration = rows.groupby("iteration")["residual"]
    shift = by_iteration.mean()
    rows["agrees"] = np.sign(rows["residual"]) == np.sign(rows["iteration"].map(shift))
    table = pd.DataFrame({
        "iteration": shift.index, "factor": np.exp(shift.to_numpy()),
        "cells": by_iteration.size().to_numpy(),
        "same_direction": rows.groupby("iteration")["agrees"].mean().to_numpy(),
    })
    return table, shared_share(rows)


def shared_share(rows: pd.DataFrame) -> float:
    """What the comparisons' blocking removes, as a share of the run-to-run variance: a
    variance-components estimate (one-way random effects, blocks = iteration × workload ×
    op × metric, the targets inside) — the block means' variance less what the targets'
    own noise puts into them, over the total."""
    block = rows.groupby(["iteration", "workload", "op", "metric"])["residual"]
    means, sizes = block.mean(), block.size()
    usable = sizes >= 2
    if usable.sum() < 2:
        return math.nan
    deviations = rows["residual"] - block.transform("mean")
    within = float((deviations**2).sum()) / float((sizes[usable] - 1).sum())
    between = float((means[usable] ** 2).mean()) - within / float(sizes[usable].mean())
    between = max(between, 0.0)
    return between / (between + within) if between + within > 0 else math.nan


def drift_note(table: pd.DataFrame, share: float) -> str | None:
    """One plain sentence about the drift, or None when there is little to say."""
    if table.empty or not math.isfinite(share):
        return None
    low, high = float(table["factor"].min()), float(table["factor"].max())
    if high / low < 1 + 2 * WORTH_SAYING and share < 0.25:
        return None
    slowest = table.loc[table["factor"].idxmin()]
    return (f"Shared variation: within an iteration, a workload ran faster or slower on "
            f"every target alike — {share:.0%} of the run-to-run variation (whole "
            f"iterations ran at {low:.2f}–{high:.2f}× of the cells' means; iteration "
            f"{int(slowest['iteration'])}: {slowest['factor']:.2f}×). The intervals above "
            "include it; the comparisons, blocked by iteration, remove it, so they can be "
            "sure where the intervals overlap. More iterations narrow the intervals.")
