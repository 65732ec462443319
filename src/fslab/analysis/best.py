"""The best configuration of each swept job, and every one the evidence cannot separate
from it.

A configuration is a target with the workload's levels ("ext4 iodepth=32"). The best is
the one with the best geometric mean of the job's primary metric, in the metric's
direction. Each other configuration is compared with it by the pairs' own model (the
paired t on log ratios over the iterations both ran: analysis.model.compare), every
such comparison of the campaign one Bonferroni family; those whose interval includes 1
are within reach (the same within the margin, or not resolved yet), the rest are behind
and not listed. Cache-bound configurations are not candidates (analysis.cachebound).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from fslab.analysis.decisions import EQUIVALENT, UNRESOLVED
from fslab.analysis.factors import configuration, job_of
from fslab.analysis.model import ALPHA, Comparison, compare
from fslab.core.metrics import HIGHER

BEST_COLUMNS = ["workload", "op", "metric", "better", "role", "configuration", "target",
                "variant", "geomean", "n", "ratio", "ratio_ci_low", "ratio_ci_high",
                "p_adj", "decision", "note"]
BEST, WITHIN_REACH = "best", "within reach"


def best_table(runs: pd.DataFrame, questions: dict[str, tuple[str, str]],
               blocked_allowed: bool, margin: float, cache_bound: set[tuple[str, str]],
               alpha: float = ALPHA) -> pd.DataFrame:
    """stats/best.csv: per swept job, its best configuration and those within reach."""
    jobs = runs["workload"].astype(str).map(job_of) if not runs.empty else pd.Series()
    candidates: list[tuple[str, str, str, pd.DataFrame]] = []
    for job, (op, metric) in questions.items():
        rows = runs[(jobs == job) & (runs["op"].astype(str) == op)
                    & (runs["metric"].astype(str) == metric)]
        keep = [(str(t), str(w)) not in cache_bound
                for t, w in zip(rows["target"], rows["workload"], strict=True)]
        rows = rows[keep]
        if rows.empty:
            continue
        configs = {configuration(t, w) for t, w in zip(rows["target"], rows["workload"],
                                                         strict=True)}
        if len(configs) > 1:
            candidates.append((job, op, metric, rows))
    family = sum(len({configuration(t, w) for t, w in zip(r["target"], r["workload"],
                                                           strict=True)}) - 1
                 for *_, r in candidates) or 1
    out: list[dict[str, Any]] = []
    for job, op, metric, rows in candidates:
        out += _job_rows(job, op, metric, rows, blocked_allowed, margin, family, alpha)
    return pd.DataFrame(out, columns=BEST_COLUMNS)


def _job_rows(job: str, op: str, metric: str, rows: pd.DataFrame, blocked_allowed: bool,
              margin: float, family: int, alpha: float) -> list[dict[str, Any]]:
    better = str(rows["better"].iloc[0])
    groups: dict[str, dict[int, float]] = {}
    names: dict[str, tuple[str, str]] = {}
    for target, workload, iteration, value in zip(rows["target"], rows["workload"],
                                                  rows["iteration"], rows["value"], strict=True):
        name = configuration(str(target), str(workload))
        groups.setdefault(name, {})[int(iteration)] = float(value)
        names[name] = (str(target), str(workload))
    geomeans = {name: float(np.exp(np.mean(np.log([v for v in values.values() if v > 0]))))
                if any(v > 0 for v in values.values()) else math.nan
                for name, values in groups.items()}
    finite = {k: v for k, v in geomeans.items() if v == v}
    pick = max if better == HIGHER else min
    best = pick(finite, key=lambda k: finite[k])
    base = {"workload": job, "op": op, "metric": metric, "better": better}
    out = [{**base, "role": BEST, "configuration": best, "target": names[best][0],
            "variant": names[best][1], "geomean": geomeans[best], "n": len(groups[best]),
            "ratio": 1.0, "note": ""}]
    compared = compare(groups, blocked_allowed, alpha, family=family)
    if isinstance(compared, str):
        out[0]["note"] = f"not tested: {compared}"
        return out
    limit = math.log1p(margin)
    for pair in _pairs_with(compared, best):
        other, ratio, low, high, significant = pair
        if significant:
            continue
        same = low >= math.exp(-limit) and high <= math.exp(limit)
        p_adj = next(p.p_adj for p in compared.pairs if {p.a, p.b} == {best, other})
        out.append({**base, "role": WITHIN_REACH, "configuration": other,
                    "target": names[other][0], "variant": names[other][1],
                    "geomean": geomeans[other], "n": len(groups[other]), "ratio": ratio,
                    "ratio_ci_low": low, "ratio_ci_high": high, "p_adj": p_adj,
                    "decision": EQUIVALENT if same else UNRESOLVED, "note": ""})
    return sorted(out, key=lambda row: (row["role"] != BEST, abs(math.log(row["ratio"]))
                                        if row["ratio"] > 0 else math.inf))


def _pairs_with(compared: Comparison, best: str) -> list[tuple[str, float, float, float, bool]]:
    """(other, other / best, its interval, significant) for every pair with the best."""
    out = []
    for pair in compared.pairs:
        if best not in (pair.a, pair.b) or not pair.estimable:
            continue
        if pair.a == best:
            high = 1 / pair.ratio_ci_low if pair.ratio_ci_low > 0 else math.inf
            out.append((pair.b, 1 / pair.ratio, 1 / pair.ratio_ci_high, high,
                        pair.significant))
        else:
            out.append((pair.a, pair.ratio, pair.ratio_ci_low, pair.ratio_ci_high,
                        pair.significant))
    return out
