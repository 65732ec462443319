"""Rankings: per primary question, every target ordered by geometric mean, grouped where
the evidence cannot separate them, each with its ratio to the best and that interval.

Groups are written as a chain, best first: "ext4 = xfs > btrfs". A ">" stands only at a
clean cut — every target before it is significantly better than every target after it —
so nothing a ">" implies is unproven; "=" joins neighbours shown the same within the
margin (analysis.pairs.pair), "?" neighbours the data cannot yet tell apart either way.
Significant pairs inside a run without a cut (A ? B ? C with A better than C, but B
between them unseparated) are named after the chain, so a
headline never says "no difference" while a pair of that question differs. Every ratio
and interval is the pair's own row of pairwise.csv (analysis.pairs.comparisons): the ranking
cannot disagree with a pair.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd

from fslab.analysis.cells.stats import geomean
from fslab.analysis.pairs import power
from fslab.analysis.step import Step
from fslab.core.metrics import HIGHER
from fslab.core.pair import EQUIVALENT, Pair, views

RANKING_COLUMNS = ["workload", "op", "metric", "better", "rank", "target", "geomean",
                   "n", "best", "advantage", "ci_low", "ci_high", "p_adj", "alpha",
                   "estimable", "significant", "evidence", "size", "mde_ratio", "group"]
HEADLINE_COLUMNS = ["workload", "op", "metric", "better", "targets", "n", "observed", "ranking",
                    "best", "family", "alpha", "left_out", "verdict"]
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


def rank(runs: pd.DataFrame, pairs: Sequence[Pair], question: tuple[str, str, str],
         better: str, left_out: set[str] = frozenset(),  # type: ignore[assignment]
         names: dict[str, str] | None = None) -> tuple[pd.DataFrame, str]:
    """(one row per ranked target, the chain text, each target by its name in `names`:
    as short as the campaign allows) for one primary question, from its pairs."""
    compared = {p.a for p in pairs} | {p.b for p in pairs}
    means = geomeans(runs, question)
    means = means[[t for t in means.index if t in compared and t not in left_out]]
    order = list(means.sort_values(ascending=better != HIGHER).index)
    if len(order) < 2:
        return pd.DataFrame(columns=RANKING_COLUMNS), ""
    rows = question_rows(runs, question)
    counts = rows.groupby(rows["target"].astype(str))["value"].count()
    best = order[0]
    seen = views(pairs)
    rows = []
    for position, target in enumerate(order, 1):
        row = {"workload": question[0], "op": question[1], "metric": question[2],
               "better": better, "rank": position, "target": target,
               "geomean": float(means[target]), "n": int(counts.get(target, 0)),
               "best": best}
        pair = seen.get((best, target))
        if pair is not None:
            advantage, low, high = pair.advantage
            row |= {"advantage": advantage, "ci_low": low, "ci_high": high,
                    "p_adj": pair.p_adj, "alpha": pair.alpha, "estimable": pair.estimable,
                    "significant": pair.significant, "evidence": evidence(pair.p_adj),
                    "size": size(advantage), "mde_ratio": pair.mde_ratio}
        rows.append(row)
    table = pd.DataFrame(rows, columns=RANKING_COLUMNS)
    table["group"] = groups(order, seen)
    return table, chain(order, pairs, names)


def _beats(seen: dict[tuple[str, str], Pair], x: str, y: str) -> bool:
    pair = seen.get((x, y))
    return pair is not None and pair.significant and pair.advantage[0] > 1


def _same(seen: dict[tuple[str, str], Pair], x: str, y: str) -> bool:
    pair = seen.get((x, y))
    return pair is not None and pair.decision == EQUIVALENT


def groups(order: list[str], seen: dict[tuple[str, str], Pair]) -> list[int]:
    """Each ranked target's group (0 the best's): a new group begins at each clean cut,
    where every target before it is better than every one after it (chain's '>');
    `seen`: the question's pairs as views() gives them."""
    out, group = [0], 0
    for i in range(1, len(order)):
        group += all(_beats(seen, x, y) for x in order[:i] for y in order[i:])
        out.append(group)
    return out


def chain(order: list[str], pairs: Sequence[Pair], names: dict[str, str] | None = None
          ) -> str:
    """'a = b > c ? d' — '>' at clean cuts only, '=' between neighbours the same within
    the margin, '?' between neighbours not yet told apart — then '; but a > c' for
    separations inside a run, each pair in its metric's direction. Targets by their names
    in `names` (default: as they are)."""
    def shown(target: str) -> str:
        return (names or {}).get(target, target)

    seen = views(pairs)
    text = shown(order[0])
    cuts = []
    for i in range(1, len(order)):
        clean = all(_beats(seen, x, y) for x in order[:i] for y in order[i:])
        cuts.append(clean)
        mark = ">" if clean else ("=" if _same(seen, order[i - 1], order[i]) else "?")
        text += f" {mark} {shown(order[i])}"
    extra = []
    for i, x in enumerate(order):
        for j in range(i + 1, len(order)):
            y = order[j]
            separated_by_cut = any(cuts[k - 1] for k in range(i + 1, j + 1))
            if not separated_by_cut and _beats(seen, x, y):
                extra.append(f"{shown(x)} > {shown(y)}")
    return text + (f"; but {', '.join(extra)}" if extra else "")


def rankings(summary: pd.DataFrame, tests: pd.DataFrame, pairs: Sequence[Pair],
             runs: pd.DataFrame, names: dict[str, str] | None = None
             ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(headline: one row per primary question, ranking: one row per ranked target); the
    ranking's text names targets by `names` (analysis.factors.levels.target_names)."""
    heads, ranked = [], []
    primary = tests[tests["primary"].astype(bool)] if not tests.empty else tests
    for test in primary.itertuples():
        question = (str(test.workload), str(test.op), str(test.metric))
        better = _better(summary, test.metric)
        base = {"workload": question[0], "op": question[1], "metric": question[2],
                "better": better, "family": test.family, "alpha": test.alpha}
        if test.test == "none":
            heads.append({**base, "verdict": f"not compared: {test.reason}"})
            continue
        cached = cache_bound(summary, question[0])
        table, text = rank(runs, [p for p in pairs if p.question == question], question,
                           better, set(cached), names)
        left_out = [f"{t} is cache-bound, not ranked ({why})"
                    for t, why in sorted(cached.items())]
        if isinstance(test.dropped, str) and test.dropped:
            left_out.append(f"left out: {test.dropped}")
        heads.append({**base, "targets": len(table), "n": _n_text(table),
                      "observed": _observed(runs, question),
                      "ranking": text, "best": table["best"].iloc[0] if len(table) else "",
                      "left_out": "; ".join(left_out),
                      "verdict": text or "; ".join(left_out) or "fewer than 2 targets to rank"})
        ranked.append(table)
    headline = pd.DataFrame(heads, columns=HEADLINE_COLUMNS)
    ranking = (pd.concat(ranked, ignore_index=True) if ranked
               else pd.DataFrame(columns=RANKING_COLUMNS))
    return headline, ranking


def cache_bound(summary: pd.DataFrame, workload: str) -> dict[str, str]:
    """Targets whose cells of this workload are cache-bound, with the reason."""
    if "cache_bound" not in summary:
        return {}
    cells = summary[(summary.workload == workload) & summary["cache_bound"].astype(bool)]
    return dict(zip(cells["target"], cells["cache_bound_reason"], strict=True))


def _better(summary: pd.DataFrame, metric: str) -> str:
    cells = summary[summary.metric == metric]
    return str(cells["better"].iloc[0]) if not cells.empty else HIGHER


def _observed(runs: pd.DataFrame, question: tuple[str, str, str]) -> str:
    """What a question's n counts: iterations, or the sections of one run each (an aging
    run's latency: analysis/cells/observations.py)."""
    if "sample" not in runs:
        return "iterations"
    rows = question_rows(runs, question)
    return "sections of one run each" if (rows["sample"] > 0).any() else "iterations"


def _n_text(table: pd.DataFrame) -> str:
    ns = sorted(set(table["n"].astype(int))) if len(table) else []
    return "/".join(map(str, ns))


STEP = Step("ranking", reads=("summary", "tests", "pairs", "runs", "names"),
            makes=("headline", "ranking"), run=rankings, method=METHOD,
            rests_on=(("power", power.METHOD),),
            tables={"headline": "headline.csv", "ranking": "ranking.csv"})
