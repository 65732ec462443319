"""Rankings: per primary question, every target ordered by geometric mean, grouped where
the evidence cannot separate them, each with its ratio to the best and that interval.

Groups are written as a chain, best first: "ext4 = xfs > btrfs". A ">" stands only at a
clean cut — every target before it is significantly better than every target after it —
so nothing a ">" implies is unproven; "=" joins neighbours shown the same within the
margin (analysis.pairs.decisions), "?" neighbours the data cannot yet tell apart either way.
Significant pairs inside a run without a cut (A ? B ? C with A better than C, but B
between them unseparated) are named after the chain, so a
headline never says "no difference" while a pair of that question differs. Every ratio
and interval is the pair's own row of pairwise.csv (analysis.pairs.comparisons): the ranking
cannot disagree with a pair.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from fslab.analysis.pairs.decisions import geomean, swapped
from fslab.core.metrics import HIGHER
from fslab.core.units import turned

RANKING_COLUMNS = ["workload", "op", "metric", "better", "rank", "target", "geomean",
                   "n", "best", "advantage", "ci_low", "ci_high", "p_adj", "alpha",
                   "estimable", "significant", "evidence", "size", "mde_ratio", "group"]
# Evidence (Bonferroni-adjusted p) in words, strongest first: what the data say against
# "no difference", not a probability that a hypothesis is true.
EVIDENCE_WORDS = ((0.001, "very strong evidence"), (0.01, "strong evidence"),
                  (0.05, "moderate evidence"))
# Size of a ratio in words: under 5 % rarely matters to a user of a disk, 25 % is what
# a tuning guide chases, 2× is a different class of result.
SIZE_WORDS = ((1.05, "small difference"), (1.25, "moderate difference"),
              (2.0, "large difference"))
LARGEST_SIZE = "very large difference"

# What this step does, in one statement the report prints (stats/methods.csv).
METHOD = ("Rankings chain targets with '>' only where every target before it is better than "
          'every one after it. Evidence is worded by the adjusted p (moderate < 0.05, strong < '
          '0.01, very strong < 0.001) and size by the ratio (small < 1.05×, moderate < 1.25×, '
          'large < 2×).')


def evidence(p_adj: float) -> str:
    """The strength of the evidence for a difference, in words."""
    if p_adj != p_adj:
        return "not tested"
    for threshold, words in EVIDENCE_WORDS:
        if p_adj < threshold:
            return words
    return "no detectable difference"


def size(advantage: float) -> str:
    """How large a ratio (≥ 1) is, in words."""
    if advantage != advantage:
        return ""
    folded = max(advantage, 1 / advantage) if advantage > 0 else math.inf
    for threshold, words in SIZE_WORDS:
        if folded < threshold:
            return words
    return LARGEST_SIZE


@dataclass(frozen=True)
class Oriented:
    """One pair as 'x is `advantage` times better than y' (≥ 1 when x is better)."""

    advantage: float
    low: float
    high: float
    p_adj: float
    alpha: float
    estimable: bool
    significant: bool
    mde: float
    decision: str = ""  # pairs.decisions: faster/slower (x against y), equivalent, unresolved
    needs: float = float("nan")  # iterations that would resolve it (unresolved pairs)
    needs_seconds: float = float("nan")
    margin: float = float("nan")


def orient(pairs: pd.DataFrame, x: str, y: str, better: str) -> Oriented | None:
    """The pair x, y from pairwise rows of one question, as x's advantage over y."""
    for index, names in enumerate(zip(pairs["a"], pairs["b"], strict=True)):
        if names in ((x, y), (y, x)):
            row = pairs.iloc[index]
            ratio, low, high = row.ratio, row.ratio_ci_low, row.ratio_ci_high
            if (row.a == x) != (better == HIGHER):  # advantage = x/y (higher) or y/x
                ratio, low, high = turned(ratio, low, high)
            decision = str(row.get("decision") or "")
            if row.a != x:  # faster/slower were said of a against b
                decision = swapped(decision)
            return Oriented(float(ratio), float(low), float(high), float(row.p_adj),
                            float(row.alpha), bool(row.estimable), bool(row.significant),
                            float(row.mde_ratio), decision,
                            _number(row.get("needs_iterations")),
                            _number(row.get("needs_seconds")), _number(row.get("margin")))
    return None


def _number(value: object) -> float:
    try:
        return float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return float("nan")


def question_rows(runs: pd.DataFrame, question: tuple[str, str, str]) -> pd.DataFrame:
    """The per-run rows of one question (workload, op, metric). Compared as they are: the
    columns are categoricals in an analysis, and a categorical compares by its codes
    (casting 10^5 rows to text per question cost an import's analysis ~0.5 s)."""
    workload, op, metric = question
    return runs[(runs["workload"] == workload) & (runs["op"] == op)
                & (runs["metric"] == metric)]


def geomeans(runs: pd.DataFrame, question: tuple[str, str, str]) -> pd.Series:
    """Each target's geometric mean (decisions.geomean) of one question's per-run values."""
    rows = question_rows(runs, question)
    means = rows.groupby(rows["target"].astype(str))["value"].agg(
        lambda values: geomean(values.astype(float)))
    return means[means == means]


def rank(runs: pd.DataFrame, pairs: pd.DataFrame, question: tuple[str, str, str],
         better: str, left_out: set[str] = frozenset(),  # type: ignore[assignment]
         names: dict[str, str] | None = None) -> tuple[pd.DataFrame, str]:
    """(one row per ranked target, the chain text, each target by its name in `names`:
    as short as the campaign allows) for one primary question."""
    compared = set(pairs["a"].astype(str)) | set(pairs["b"].astype(str))
    means = geomeans(runs, question)
    means = means[[t for t in means.index if t in compared and t not in left_out]]
    order = list(means.sort_values(ascending=better != HIGHER).index)
    if len(order) < 2:
        return pd.DataFrame(columns=RANKING_COLUMNS), ""
    rows = question_rows(runs, question)
    counts = rows.groupby(rows["target"].astype(str))["value"].count()
    best = order[0]
    rows = []
    for position, target in enumerate(order, 1):
        row = {"workload": question[0], "op": question[1], "metric": question[2],
               "better": better, "rank": position, "target": target,
               "geomean": float(means[target]), "n": int(counts.get(target, 0)),
               "best": best}
        pair = orient(pairs, best, target, better) if target != best else None
        if pair is not None:
            row |= {"advantage": pair.advantage, "ci_low": pair.low, "ci_high": pair.high,
                    "p_adj": pair.p_adj, "alpha": pair.alpha, "estimable": pair.estimable,
                    "significant": pair.significant, "evidence": evidence(pair.p_adj),
                    "size": size(pair.advantage), "mde_ratio": pair.mde}
        rows.append(row)
    table = pd.DataFrame(rows, columns=RANKING_COLUMNS)
    table["group"] = groups(order, pairs, better)
    return table, chain(order, pairs, better, names)


def _beats(pairs: pd.DataFrame, x: str, y: str, better: str) -> bool:
    pair = orient(pairs, x, y, better)
    return pair is not None and pair.significant and pair.advantage > 1


def _same(pairs: pd.DataFrame, x: str, y: str, better: str) -> bool:
    pair = orient(pairs, x, y, better)
    return pair is not None and pair.decision == "equivalent"


def groups(order: list[str], pairs: pd.DataFrame, better: str) -> list[int]:
    """Each ranked target's group (0 the best's): a new group begins at each clean cut,
    where every target before it is better than every one after it (chain's '>')."""
    out, group = [0], 0
    for i in range(1, len(order)):
        group += all(_beats(pairs, x, y, better) for x in order[:i] for y in order[i:])
        out.append(group)
    return out


def chain(order: list[str], pairs: pd.DataFrame, better: str,
          names: dict[str, str] | None = None) -> str:
    """'a = b > c ? d' — '>' at clean cuts only, '=' between neighbours the same within
    the margin, '?' between neighbours not yet told apart — then '; but a > c' for
    separations inside a run. Targets by their names in `names` (default: as they are)."""
    def shown(target: str) -> str:
        return (names or {}).get(target, target)

    text = shown(order[0])
    cuts = []
    for i in range(1, len(order)):
        clean = all(_beats(pairs, x, y, better) for x in order[:i] for y in order[i:])
        cuts.append(clean)
        mark = ">" if clean else ("=" if _same(pairs, order[i - 1], order[i], better)
                                  else "?")
        text += f" {mark} {shown(order[i])}"
    extra = []
    for i, x in enumerate(order):
        for j in range(i + 1, len(order)):
            y = order[j]
            separated_by_cut = any(cuts[k - 1] for k in range(i + 1, j + 1))
            if not separated_by_cut and _beats(pairs, x, y, better):
                extra.append(f"{shown(x)} > {shown(y)}")
    return text + (f"; but {', '.join(extra)}" if extra else "")
