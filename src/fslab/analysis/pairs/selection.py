"""The best of several configurations, and those the evidence cannot tell from it: one
question, answered for a sweep's best configuration (best.csv) and for a tuner's race.

The best is the configuration with the best centre in the metric's direction (among
those `eligible`: a race's best keeps its latency bounds). Every other one is compared
with it, the ratio other/best with its interval read by the one rule
(analysis.pairs.pair.decide, read AGAINST_BEST): behind when the interval excludes 1, equivalent
when it lies within the margin, else unresolved. Those not behind are within reach: the
set the data cannot tell from the best.

Each pair is compared by the one model of pairs (a paired t on the iterations both ran:
model.compare), its interval two-sided, Bonferroni over the caller's family; the centre
is the geometric mean. (The tuner's race compares each configuration with its best by
its own paired t too: tune/against_best.py. `block_fit`, the additive model of
configuration and round on the logs, is kept for the centres it adjusts for the rounds a
configuration missed.)
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace
from typing import Generic, TypeVar

import numpy as np

from fslab.analysis.cells.stats import geomean
from fslab.analysis.pairs.decisions import best_of
from fslab.analysis.pairs.model import compare
from fslab.analysis.pairs.pair import decide
from fslab.core.pair import AGAINST_BEST, BEHIND, Pair

K = TypeVar("K")
PAIRS = "pairs"


@dataclass
class BestSet(Generic[K]):
    """The best and every other configuration's answer against it."""

    best: K | None
    centres: dict[K, float]  # each configuration's centre (geometric mean, round-adjusted)
    against: dict[K, Pair] = field(default_factory=dict)  # other / best, decided

    def within_reach(self) -> list[K]:
        """The best and those the data cannot tell from it."""
        if self.best is None:
            return []
        return [self.best, *(k for k, answer in self.against.items()
                             if answer.word(AGAINST_BEST) != BEHIND)]


def best_and_within_reach(groups: Mapping[K, Mapping[int, float]], better: str,
                          margin: float, alpha: float, *, model: str = PAIRS,
                          family: int | None = None, blocked: bool = True,
                          eligible: Collection[K] | None = None) -> BestSet[K]:
    """The best of `groups` ({configuration: {round: value}}) and each other's answer
    against it (module doc). PAIRS: a two-sided interval at `alpha` over `family` pairs
    (default: every pair with the best)."""
    measured = {k: dict(v) for k, v in groups.items() if any(x > 0 for x in v.values())}
    if model != PAIRS:
        raise ValueError(f"model {model!r}: only {PAIRS!r} compares with the best")
    centres = {k: geomean(v.values()) for k, v in measured.items()}
    best = best_of({k: c for k, c in centres.items() if eligible is None or k in eligible},
                   better)
    found = BestSet(best, centres)
    if best is None or len(measured) < 2:
        return found
    names = {k: f"c{number}" for number, k in enumerate(measured)}
    compared = compare({names[k]: v for k, v in measured.items()}, blocked, alpha,
                       family=family or len(measured) - 1, better=better)
    for k in measured:
        if k == best:
            continue
        pair = None if isinstance(compared, str) else next(
            (p for p in compared.pairs if {p.a, p.b} == {names[k], names[best]}), None)
        found.against[k] = _answer(pair, names[k], better, margin, centres[k] / centres[best],
                                   compared if isinstance(compared, str) else "")
    return found


def _answer(pair: Pair | None, first: str, better: str, margin: float,
            centre: float, why: str) -> Pair:
    """`first` against the best, decided; without an interval, the ratio of their centres."""
    if pair is None:
        return decide(Pair(a=first, b="best", better=better, ratio=centre,
                           note=why or "not compared"), margin)
    seen = pair.seen_from(first)
    if not pair.estimable:
        return decide(replace(seen, ratio=centre, ratio_ci_low=math.nan,
                              ratio_ci_high=math.nan), margin, needs=False)
    return decide(seen, margin)


@dataclass(frozen=True)
class BlockFit(Generic[K]):
    """The additive model of configuration and round on the logs: each configuration's
    effect (its log centre, adjusted for the rounds it missed), the residual SD and df."""

    effects: dict[K, float]
    sigma: float
    df: int


def block_fit(groups: Mapping[K, Mapping[int, float]]) -> BlockFit[K] | None:
    """Least squares of log value = configuration + round (None with no residual df)."""
    keys = [k for k, v in groups.items() if any(x > 0 for x in v.values())]
    cells = [(k, r, math.log(x)) for k in keys for r, x in groups[k].items() if x > 0]
    rounds = sorted({r for _, r, _ in cells})
    if len(keys) < 2 or not cells:
        return None
    order = {k: i for i, k in enumerate(keys)}
    column = {r: len(keys) + i - 1 for i, r in enumerate(rounds) if i}
    design = np.zeros((len(cells), len(keys) + len(rounds) - 1))
    for row, (k, r, _) in enumerate(cells):
        design[row, order[k]] = 1.0
        if r in column:
            design[row, column[r]] = 1.0
    y = np.array([v for _, _, v in cells])
    beta, _, rank, _ = np.linalg.lstsq(design, y, rcond=None)
    df = len(y) - int(rank)
    if df < 1:
        return None
    residual = y - design @ beta
    sigma = math.sqrt(float(residual @ residual) / df)
    return BlockFit({k: float(beta[i]) for k, i in order.items()}, sigma, df)
