"""The best of several configurations, and those the evidence cannot tell from it: one
question, answered for a sweep's best configuration (best.csv) and for a tuner's race.

The best is the configuration with the best centre in the metric's direction (among
those `eligible`: a race's best keeps its latency bounds). Every other one is compared
with it, the ratio other/best with its interval read by the one rule
(analysis.pairs.pair.decide, read AGAINST_BEST): behind when the interval excludes 1, equivalent
when it lies within the margin, else unresolved. Those not behind are within reach: the
set the data cannot tell from the best.

Two models of the comparisons:
- PAIRS (best.csv): each pair by the one model of pairs (a paired t on the iterations
  both ran: model.compare), its interval two-sided, Bonferroni over the caller's family;
  the centre is the geometric mean.
- BLOCKS (a race): one additive model of configuration and round on the logs, its
  residual variance pooled over every configuration — multiple comparisons with the best
  in a randomised complete block design (Hsu 1996, ch. 4; Nelson et al. 2001 for
  configurations that entered at different rounds). At 3 rounds of 13 configurations it
  has 24 degrees of freedom where one pair alone has 2, and a configuration that joined
  late is compared on the rounds it shares, its centre adjusted for the rounds it
  missed. It assumes one spread for all (the log scale makes that a common CV). Each
  bound is one-sided at `alpha` / (k − 1), k the configurations compared: the chance that
  some configuration falls behind the true best at this look is at most `alpha`.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace
from typing import Generic, TypeVar

import numpy as np
from scipy import special

from fslab.analysis.pairs.decisions import best_of, geomean
from fslab.analysis.pairs.model import NOT_ESTIMABLE, compare, ratio_exp
from fslab.analysis.pairs.pair import AGAINST_BEST, BEHIND, Pair, decide

K = TypeVar("K")
PAIRS, BLOCKS = "pairs", "blocks"
BLOCK_MODEL = "configuration + round on logs, pooled residual (multiple comparisons with the best)"


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
    (default: every pair with the best); BLOCKS: one-sided bounds at `alpha`/(k − 1)."""
    measured = {k: dict(v) for k, v in groups.items() if any(x > 0 for x in v.values())}
    if model == BLOCKS:
        return _by_blocks(measured, better, margin, alpha, eligible)
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
    effect, their covariance (per unit of residual variance), the residual SD and df."""

    effects: dict[K, float]
    covariance: np.ndarray
    order: dict[K, int]
    sigma: float
    df: int
    rounds: dict[K, int]

    def contrast(self, a: K, b: K) -> tuple[float, float]:
        """(log a − log b, its standard error)."""
        i, j = self.order[a], self.order[b]
        v = self.covariance
        variance = v[i, i] + v[j, j] - 2 * v[i, j]
        return self.effects[a] - self.effects[b], self.sigma * math.sqrt(max(variance, 0.0))


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
    covariance = np.linalg.pinv(design.T @ design)[:len(keys), :len(keys)]
    return BlockFit({k: float(beta[i]) for k, i in order.items()}, covariance, order, sigma,
                    df, {k: len(groups[k]) for k in keys})


def _by_blocks(groups: dict[K, dict[int, float]], better: str, margin: float, alpha: float,
               eligible: Collection[K] | None) -> BestSet[K]:
    fit = block_fit(groups)
    if fit is None:  # too few rounds for a residual: centres only
        centres = {k: geomean(v.values()) for k, v in groups.items()}
        best = best_of({k: c for k, c in centres.items()
                        if eligible is None or k in eligible}, better)
        return BestSet(best, centres)
    centres = {k: math.exp(e) for k, e in fit.effects.items()}
    best = best_of({k: c for k, c in centres.items() if eligible is None or k in eligible},
                   better)
    found = BestSet(best, centres)
    if best is None:
        return found
    others = [k for k in fit.effects if k != best]
    level = alpha / max(1, len(others))  # one-sided, each bound
    for k in others:
        estimate, se = fit.contrast(k, best)
        found.against[k] = decide(_block_pair(estimate, se, fit.df, level, len(others),
                                              fit.rounds[k], fit.rounds[best], better),
                                  margin)
    return found


def _block_pair(estimate: float, se: float, df: int, level: float, family: int, n_a: int,
                n_b: int, better: str) -> Pair:
    """One contrast of the block model as a pair (a = the other, b = the best), each
    bound one-sided at `level`."""
    pair = Pair(a="a", b="b", test=BLOCK_MODEL, n_a=n_a, n_b=n_b, df=float(df),
                ratio=ratio_exp(estimate), se_log=se, alpha=level, family=family,
                n_pairs=min(n_a, n_b), better=better)
    if not se > 0:
        return replace(pair, note=NOT_ESTIMABLE)
    t = estimate / se
    p = float(special.stdtr(df, -abs(t)))  # one-sided, towards the side the estimate is on
    half = float(special.stdtrit(df, 1 - level)) * se
    return replace(pair, ratio_ci_low=ratio_exp(estimate - half),
                   ratio_ci_high=ratio_exp(estimate + half), t=t, p_value=p,
                   p_adj=min(1.0, family * p), significant=bool(p < level),
                   noise=se / math.sqrt(2) * math.sqrt(min(n_a, n_b)))

