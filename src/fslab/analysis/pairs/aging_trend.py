"""Does latency grow as a file system ages? (stats/aging_trend.csv)

The statistic is a robust slope, not an eyeballed curve: each operation's median latency
on the aging's 20 stretches (parsers/aging_kind.aging_summary) against where each lies in
the aging (0: its start, 1: its end), on the log scale, Theil–Sen's slope (the median of
the pairwise slopes: Sen 1968, scipy.stats.theilslopes). exp(slope) is the latency at the
end of the aging over the start, as the line through the stretches says.
- One aging of a target × level (`fslab age`, or age_reuse): its interval is Theil–Sen's
  own (Kendall's τ; the stretches are long enough to be nearly independent: its coverage
  is checked on a correlated process with a known trend,
  tests/analysis/test_aging_trend.py).
- Several (a campaign's iterations, each its own aging): each aging's exp(slope) is one
  observation and the interval is the pairs' t over them (decide_pair against no
  change), so it includes the aging's own randomness.
Every trend of the table is one Bonferroni family, decided by the verdicts' rule and
margin: "latency grows" (the interval above 1), "latency falls", "steady" (inside the
margin) or "unresolved".
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from fslab.analysis.cells.aging_series import agings
from fslab.analysis.pairs.decisions import decide_pair
from fslab.analysis.pairs.model import ALPHA
from fslab.analysis.pairs.pair import decide
from fslab.analysis.statistic import Measured, Statistic
from fslab.core.metrics import HIGHER
from fslab.core.pair import EQUIVALENT, FASTER, SLOWER, UNRESOLVED, Pair
from fslab.core.units import DEFAULT_MARGIN, parse_margin

COLUMNS = ["target", "level", "op", "agings", "ratio", "ratio_ci_low", "ratio_ci_high",
           "decision", "method", "alpha", "family", "sections"]
GROWS, FALLS, STEADY = "latency grows", "latency falls", "steady"
WORDS = {FASTER: GROWS, SLOWER: FALLS, EQUIVALENT: STEADY, UNRESOLVED: UNRESOLVED}
MIN_SECTIONS = 3  # fewer stretches (an operation that ran a handful of times): no slope
ONE, SEVERAL = "Theil–Sen within the aging", "t over the agings' Theil–Sen slopes"
METHOD = ("Latency trend over the aging (aging_trend.csv): per target, level and "
          "operation, Theil–Sen's slope of the log median latency of the aging's 20 "
          "stretches against where each lies in the aging; exp(slope) is the latency at the "
          "end over the start. One aging: Theil–Sen's own interval; several (iterations): "
          "the t interval over their slopes. Bonferroni over every trend of the table, "
          "decided by the verdicts' rule and margin: latency grows, falls, steady or "
          "unresolved.")


def slope(points: list[list[float]]) -> float:
    """Theil–Sen's slope of log latency against position (NaN with too few stretches)."""
    if len(points) < MIN_SECTIONS:
        return math.nan
    from scipy import stats

    x = np.array([p[0] for p in points], dtype=float)
    y = np.log(np.array([p[1] for p in points], dtype=float))
    return float(stats.theilslopes(y, x).slope)


def one_aging(points: list[list[float]], level: float) -> tuple[float, float, float]:
    """(exp slope, interval low, high) at confidence 1 − level, Theil–Sen's own."""
    from scipy import stats

    x = np.array([p[0] for p in points], dtype=float)
    y = np.log(np.array([p[1] for p in points], dtype=float))
    found = stats.theilslopes(y, x, alpha=1 - level)
    return math.exp(found.slope), math.exp(found.low_slope), math.exp(found.high_slope)


def trend_table(measured: Measured) -> pd.DataFrame:
    """stats/aging_trend.csv (module doc); empty without agings."""
    margin = parse_margin(measured.settings.get("margin", DEFAULT_MARGIN))
    cells: dict[tuple[str, str, str], list[list[list[float]]]] = {}
    for target, level, _, summary in agings(measured.records):
        for op, points in (summary.get("latency") or {}).items():
            if len(points) >= MIN_SECTIONS and all(p[1] > 0 for p in points):
                cells.setdefault((target, level, op), []).append(points)
    family = max(1, len(cells))
    rows: list[dict[str, Any]] = []
    for (target, level, op), found in sorted(cells.items()):
        rows.append({"target": target, "level": level, "op": op, "agings": len(found),
                     "alpha": ALPHA / family, "family": family,
                     "sections": min(len(p) for p in found),
                     **_trend(found, margin, family)})
    return pd.DataFrame(rows, columns=COLUMNS)


def _trend(found: list[list[list[float]]], margin: float, family: int) -> dict[str, Any]:
    if len(found) == 1:
        ratio, low, high = one_aging(found[0], ALPHA / family)
        trend = decide(Pair(a="end", b="start", test=ONE, ratio=ratio, ratio_ci_low=low,
                            ratio_ci_high=high, significant=low > 1 or high < 1,
                            alpha=ALPHA / family, family=family, better=HIGHER),
                       margin, needs=False)
        return {"ratio": ratio, "ratio_ci_low": low, "ratio_ci_high": high,
                "decision": WORDS[trend.decision], "method": ONE}
    slopes = {k: math.exp(slope(points)) for k, points in enumerate(found)}
    answer = decide_pair(slopes, dict.fromkeys(slopes, 1.0), HIGHER, margin, paired=True,
                         family=family)
    return {"ratio": answer.ratio, "ratio_ci_low": answer.ratio_ci_low,
            "ratio_ci_high": answer.ratio_ci_high, "decision": WORDS[answer.decision],
            "method": SEVERAL}


STATISTIC = Statistic("aging_trend", METHOD, trend_table)
