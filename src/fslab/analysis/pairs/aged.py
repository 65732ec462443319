"""What age costs: aged/fresh ratios per workload, for targets started from one image.

A target started from an aged image (`image = X`) is paired with a fresh file system that
holds the same files (`fresh_copy_of = X`): same content, different layout. For each
workload × op × headline metric, the aged/fresh row is the pair's row of pairwise.csv,
seen from the aged target: one model, one interval, one p (analysis.pairs.model), so
aged_vs_fresh.csv and pairwise.csv never disagree about a pair.
"""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from fslab.analysis.step import Step
from fslab.core.environment_record import Environment
from fslab.core.metrics import HIGHER
from fslab.core.pair import Pair
from fslab.core.run_parts import TargetDescription

COLUMNS = ["workload", "op", "metric", "better", "primary", "aged", "fresh", "ratio",
           "ratio_ci_low", "ratio_ci_high", "p_adj", "test", "mde_ratio", "verdict"]

# What this step does, in one statement the report prints (stats/methods.csv).
METHOD = ('Aged vs fresh: each aged target is paired with a fresh file system holding the same '
          "files; its aged/fresh ratio is that pair's row of the comparisons (one model, one "
          'interval).')


def aged_fresh_pairs(targets: dict[str, TargetDescription]) -> list[tuple[str, str]]:
    """(aged target, fresh target) pairs that share an image."""
    aged = {n: d.image for n, d in targets.items() if d.state == "aged"}
    fresh = {n: d.image for n, d in targets.items() if d.state == "fresh"}
    return [(a, f) for a, image in aged.items() for f, other in fresh.items() if image == other]


def aged_vs_fresh(summary: pd.DataFrame, pairwise: Sequence[Pair],
                  targets: dict[str, TargetDescription]) -> pd.DataFrame:
    """One row per aged/fresh pair and compared metric, each its pair seen from the aged
    target."""
    pairs = aged_fresh_pairs(targets)
    if not pairs or not pairwise:
        return pd.DataFrame(columns=COLUMNS)
    direction = dict(zip(summary["metric"], summary["better"], strict=False))
    rows = []
    for aged, fresh in pairs:
        for found in pairwise:
            if {found.a, found.b} != {aged, fresh}:
                continue
            pair = found.seen_from(aged)
            better = direction.get(pair.metric, HIGHER)
            rows.append({"workload": pair.workload, "op": pair.op, "metric": pair.metric,
                         "better": better, "primary": pair.primary, "aged": aged,
                         "fresh": fresh, "ratio": pair.ratio,
                         "ratio_ci_low": pair.ratio_ci_low,
                         "ratio_ci_high": pair.ratio_ci_high, "p_adj": pair.p_adj,
                         "test": pair.test, "mde_ratio": pair.mde_ratio,
                         "verdict": _verdict(pair.ratio, pair.significant, better)
                         if pair.estimable else pair.note})
    return pd.DataFrame(rows, columns=COLUMNS)


def _verdict(ratio: float, significant: bool, better: str) -> str:
    if not significant:
        return "no detectable difference"
    worse = ratio < 1 if better == HIGHER else ratio > 1
    return "aged is worse" if worse else "aged is better"


def aged_verdicts(ages: pd.DataFrame) -> list[dict[str, str]]:
    """One verdict row (kind "aged") per aged/fresh pair of a primary question (the others
    are exploratory, in aged_vs_fresh.csv)."""
    primary = ages[ages["primary"].astype(bool)] if not ages.empty else ages
    return [{"kind": "aged", "workload": str(r.workload),
             "text": f"{r.aged} vs {r.fresh}: aged/fresh {r.ratio:.3g}× on {r.workload} {r.op} "
                     f"{r.metric} (95 % CI {r.ratio_ci_low:.3g}–{r.ratio_ci_high:.3g}×, "
                     f"p_adj = {r.p_adj:.3g}): {r.verdict}"} for r in primary.itertuples()]


def _aged(summary: pd.DataFrame, pairs: list[Pair], environment: Environment
          ) -> pd.DataFrame:
    return aged_vs_fresh(summary, pairs, environment.targets)


STEP = Step("aged", reads=("summary", "pairs", "environment"), makes=("aged",), run=_aged,
            method=METHOD, tables={"aged": "aged_vs_fresh.csv"}, optional=frozenset({"aged"}),
            stated=lambda done: not done["aged"].empty)
