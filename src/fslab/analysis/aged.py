"""What age costs: aged/fresh ratios per workload, for targets started from one image.

A target started from an aged image (`image = X`) is paired with a fresh file system that
holds the same files (`fresh_copy_of = X`): same content, different layout. For each
workload × op × headline metric: the ratio of means aged/fresh, its bootstrap CI, and
the adjusted p of the post-hoc comparison between the two targets.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from fslab.analysis.bootstrap import ratio_ci
from fslab.analysis.observations import per_run
from fslab.metrics import HEADLINE_METRICS, HIGHER

COLUMNS = ["workload", "op", "metric", "better", "aged", "fresh", "ratio", "ratio_ci_low",
           "ratio_ci_high", "p_adj", "test", "verdict"]


def aged_fresh_pairs(targets: dict[str, dict[str, Any]]) -> list[tuple[str, str]]:
    """(aged target, fresh target) pairs that share an image."""
    aged = {n: d.get("image") for n, d in targets.items() if d.get("state") == "aged"}
    fresh = {n: d.get("image") for n, d in targets.items() if d.get("state") == "fresh"}
    return [(a, f) for a, image in aged.items() for f, other in fresh.items() if image == other]


def aged_vs_fresh(metrics: pd.DataFrame, pairwise: pd.DataFrame,
                  targets: dict[str, dict[str, Any]]) -> pd.DataFrame:
    pairs = aged_fresh_pairs(targets)
    if not pairs or metrics.empty:
        return pd.DataFrame(columns=COLUMNS)
    values = per_run(metrics)
    values = values[values["metric"].isin(HEADLINE_METRICS)]
    rows = []
    for (workload, op, metric), group in values.groupby(["workload", "op", "metric"]):
        by_target = {t: g["value"].to_numpy(dtype=float) for t, g in group.groupby("target")}
        better = group["better"].iloc[0]
        for aged, fresh in pairs:
            if aged not in by_target or fresh not in by_target:
                continue
            a, f = by_target[aged], by_target[fresh]
            ratio = float(np.mean(a) / np.mean(f)) if np.mean(f) else math.nan
            low, high = ratio_ci(a, f)
            p_adj, test = _posthoc(pairwise, workload, op, metric, aged, fresh)
            rows.append({"workload": workload, "op": op, "metric": metric, "better": better,
                         "aged": aged, "fresh": fresh, "ratio": ratio, "ratio_ci_low": low,
                         "ratio_ci_high": high, "p_adj": p_adj, "test": test,
                         "verdict": _verdict(ratio, low, high, p_adj, better)})
    return pd.DataFrame(rows, columns=COLUMNS)


def _posthoc(pairwise: pd.DataFrame, workload: str, op: str, metric: str, a: str,
             b: str) -> tuple[float, str]:
    if pairwise.empty:
        return math.nan, ""
    rows = pairwise[(pairwise.workload == workload) & (pairwise.op == op)
                    & (pairwise.metric == metric) & ~pairwise["test"].str.startswith("Wilcoxon")
                    & (((pairwise.a == a) & (pairwise.b == b))
                       | ((pairwise.a == b) & (pairwise.b == a)))]
    if rows.empty:
        return math.nan, ""
    return float(rows["p_adj"].iloc[0]), str(rows["test"].iloc[0])


def _verdict(ratio: float, low: float, high: float, p: float, better: str) -> str:
    if not (p == p and p < 0.05):
        return "no significant difference"
    worse = ratio < 1 if better == HIGHER else ratio > 1
    return "aged is worse" if worse else "aged is better"
