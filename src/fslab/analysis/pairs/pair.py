"""The rule that decides a compared pair (core.pair.Pair: the record and its row).

The rule (DESIGN.md, "Decisions"): faster or slower (a against b, in the metric's
direction) when the interval excludes 1; equivalent when it lies inside [1/(1 + margin),
1 + margin] (equivalence by the interval, two one-sided tests at the same level:
Schuirmann 1987), so it can never contradict the interval; else unresolved, with the
iterations at which that pair's own test resolves it 4 times in 5 if the measured ratio
and spread hold (analysis.pairs.needs). `decide` is the one place it is applied.
"""

from __future__ import annotations

import math
from dataclasses import replace

from fslab.analysis.pairs.needs import needs_iterations
from fslab.core.metrics import HIGHER
from fslab.core.pair import EQUIVALENT, FASTER, NAN, SLOWER, UNRESOLVED, Pair


def decide(pair: Pair, margin: float, *, needs_level: float | None = None,
           per_iteration_s: float = NAN, machine_s: float = NAN, needs: bool = True) -> Pair:
    """The pair with the rule's answer (module doc) at `margin`; unresolved, the
    iterations that resolve it (its test at `needs_level`, default its own α) and what
    they cost at `per_iteration_s` (its two cells' seconds per iteration); `machine_s`,
    what its runs took. The one place a pair is decided."""
    decision = decided(pair.estimable, pair.significant, pair.ratio, pair.ratio_ci_low,
                       pair.ratio_ci_high, pair.better, margin)
    wanted = NAN
    if needs and decision == UNRESOLVED:
        wanted = needs_iterations(pair.ratio, pair.spread,
                                  pair.alpha if needs_level is None else needs_level, margin)
    cost = NAN
    if math.isfinite(wanted):
        cost = (wanted - pair.iterations) * per_iteration_s
    elif math.isinf(wanted):
        cost = math.inf
    return replace(pair, decision=decision, margin=margin, needs_iterations=wanted,
                   needs_seconds=cost, machine_s=machine_s)


def decided(estimable: bool, significant: bool, ratio: float, low: float, high: float,
            better: str, margin: float) -> str:
    """The rule: faster/slower (a relative to b) when the interval excludes 1, equivalent
    when it lies inside the margin, else unresolved. Called by `decide` alone."""
    if not estimable:
        return UNRESOLVED
    if significant:
        return FASTER if (ratio > 1) == (better == HIGHER) else SLOWER
    return EQUIVALENT if within_margin(low, high, margin) else UNRESOLVED


def within_margin(low: float, high: float, margin: float) -> bool:
    """Whether the interval [low, high] lies inside [1/(1 + margin), 1 + margin]."""
    return low >= 1 / (1 + margin) and high <= 1 + margin
