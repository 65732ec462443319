"""Verdicts in words, honouring each metric's direction and the tests' significance."""

from __future__ import annotations

import math

import pandas as pd

from fslab.analysis.comparisons import significant
from fslab.metrics import HEADLINE_METRICS, HIGHER

TITLES = {
    "iops": "IOPS", "bw_bytes": "bandwidth", "ops_per_s": "operations/s",
    "seconds": "time", "clat_mean_ns": "mean latency", "clat_p99_ns": "p99 latency",
    "lat_max_ns": "max latency", "sync_seconds": "sync time",
}


def verdicts(summary: pd.DataFrame, tests: pd.DataFrame, pairwise: pd.DataFrame) -> list[str]:
    """One line per headline comparison: who wins, by how much, how sure."""
    lines = []
    post = pairwise[~pairwise["test"].str.startswith("Wilcoxon")] if not pairwise.empty \
        else pairwise
    for _, test in tests.iterrows():
        if test["metric"] not in HEADLINE_METRICS:
            continue
        op = "" if test["op"] in str(test["workload"]) else f" {test['op']}"
        what = f"{test['workload']}{op} {TITLES.get(test['metric'], test['metric'])}"
        if test["test"] == "none":
            lines.append(f"{what}: not tested — {test['reason']}")
            continue
        if not significant(test["p_value"]):
            lines.append(f"{what}: no significant difference between targets "
                         f"({test['test']} p {_p(test['p_value'])})")
            continue
        rows = post[(post.workload == test["workload"]) & (post.op == test["op"])
                    & (post.metric == test["metric"])]
        better = _direction(summary, test)
        for _, pair in rows.iterrows():
            lines.append(_pair_line(what, pair, better))
    return lines


def _direction(summary: pd.DataFrame, test: pd.Series) -> str:
    cells = summary[(summary.workload == test["workload"]) & (summary.op == test["op"])
                    & (summary.metric == test["metric"])]
    return str(cells["better"].iloc[0]) if not cells.empty else HIGHER


def _pair_line(what: str, pair: pd.Series, better: str) -> str:
    ratio, low, high = pair["ratio"], pair["ratio_ci_low"], pair["ratio_ci_high"]
    a_wins = (ratio >= 1) == (better == HIGHER)
    winner, loser = (pair["a"], pair["b"]) if a_wins else (pair["b"], pair["a"])
    if not a_wins:  # express as winner / loser
        ratio, low, high = 1 / ratio, 1 / high if high else math.nan, 1 / low if low else math.nan
    direction = "" if better == HIGHER else ", lower is better"
    p_text = f"{pair['test']} p {_p(pair['p_adj'])}"
    if not significant(pair["p_adj"]):
        return (f"{what}: {pair['a']} vs {pair['b']}: no significant difference "
                f"({ratio:.3g}×, 95 % CI {low:.3g}–{high:.3g}×, {p_text})")
    return (f"{winner}: {ratio:.3g}× the {what} of {loser}{direction} (95 % CI "
            f"{low:.3g}–{high:.3g}×, {p_text}, {pair['magnitude']} effect)")


def _p(value: float) -> str:
    if value != value:
        return "= n/a"
    return "< 0.001" if value < 0.001 else f"= {value:.3g}"
