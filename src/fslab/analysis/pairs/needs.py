"""How many iterations resolve a pair: the fewest at which its own test decides it (its
interval excludes 1 or lies within the margin) with 80 % power, if the measured ratio and
spread hold — "needs N iterations" in pairwise.csv and the planner's count at another run
length. The power of each design is analysis.pairs.power's."""

from __future__ import annotations

import math
from collections.abc import Callable

from fslab.analysis.pairs.power import (
    COUNTS,
    POWER,
    Sampling,
    folded_share,
    welch_sampling,
)
from fslab.core.pair import Spread


def iterations_to_resolve(estimate: float, design_of: Callable[[int], tuple[Sampling, float]],
                          start: int, margin_log: float, power: float = POWER) -> float:
    """The fewest iterations (above `start`) at which a pair resolves with `power`, its
    true log ratio taken as `estimate`; `design_of(n)` -> (its test's Sampling, its true
    standard error) at n iterations. ∞ when more than power.MAX_ITERATIONS would be needed.
    The chance grows with n, so the answer is found by bisection over COUNTS."""

    def enough(n: int) -> bool:
        design, se = design_of(n)
        return se > 0 and design.resolving_power(abs(estimate) / se,
                                                 margin_log / se) >= power

    counts = [n for n in COUNTS if n > start]
    if not counts or not enough(counts[-1]):
        return math.inf
    low, high = 0, len(counts) - 1
    while low < high:
        middle = (low + high) // 2
        if enough(counts[middle]):
            high = middle
        else:
            low = middle + 1
    return float(counts[low])


def needs_iterations(ratio: float, spread: Spread, level: float, margin: float,
                     power: float = POWER) -> float:
    """The fewest iterations (per side) at which a pair's own test at `level` resolves it
    — its interval excludes 1 or lies within ±`margin` — with `power`, if the true ratio
    is `ratio` and the spread holds: ∞ past power.MAX_ITERATIONS, NaN when it cannot be told."""
    if not ratio > 0 or not math.isfinite(ratio):
        return math.nan
    if spread.paired:
        sd = spread.paired_sd
        if not sd > 0:
            return math.nan

        def design_of(n: int) -> tuple[Sampling, float]:
            return Sampling.paired(n, level), sd / math.sqrt(n)
    else:
        va, vb = spread.var_a, spread.var_b
        if not va + vb > 0:
            return math.nan
        share = folded_share(va / (va + vb))  # all the design depends on at n a side

        def design_of(n: int) -> tuple[Sampling, float]:
            return welch_sampling(n, level, share), math.sqrt(va / n + vb / n)
    return iterations_to_resolve(math.log(ratio), design_of, spread.now,
                                 math.log1p(margin), power)


def needs_at_length(ratio: float, paired_sd: float, now: int, relative_variance: float,
                    level: float, margin: float, power: float = POWER) -> float:
    """The iterations in all at which a paired pair resolves with `power` when its `now`
    iterations so far (per-iteration SD of log differences `paired_sd`) are followed by
    runs of another length, each of `relative_variance` times their variance: the pairs'
    weighted test (analysis.pairs.model, each iteration weighted by its precision) has
    the information now + (n − now) / relative_variance of equal runs, on n − 1 df."""
    if not ratio > 0 or not paired_sd > 0 or not relative_variance > 0 or now < 2:
        return math.nan

    def design_of(n: int) -> tuple[Sampling, float]:
        information = now + (n - now) / relative_variance
        return Sampling.paired(n, level), paired_sd / math.sqrt(information)

    return iterations_to_resolve(math.log(ratio), design_of, now, math.log1p(margin), power)
