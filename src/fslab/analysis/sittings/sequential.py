"""One question decided over its sittings in order: each pool of the first k sittings is a
look (analysis/sittings/looks.py), its two intervals from the spread of both sources
(analysis/sittings/spread.py) at the look's nominal level, and the answer the first look
that decided gave — with the sitting that decided it — stands. Numbers in, one record out.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from fslab.analysis.pairs.pair import decide
from fslab.analysis.sittings.looks import PLANNED, look_level
from fslab.analysis.sittings.pooled import as_pair
from fslab.analysis.sittings.spread import (
    Between,
    SharedSpread,
    SittingEstimate,
    between_sittings,
)
from fslab.core.environment_record import SittingSpread
from fslab.core.pair import UNRESOLVED


@dataclass(frozen=True)
class Look:
    """The pool of the first k sittings at its look's level (log scale)."""

    k: int
    level: float  # the nominal two-sided level its intervals are read at
    between: Between
    low: float  # the mean's interval
    high: float
    next_low: float  # where the next sitting's estimate should fall
    next_high: float
    decision: str  # the rule on the mean's interval ("" past the planned sittings)
    next_decision: str  # the rule on the next sitting's interval


@dataclass(frozen=True)
class OverLooks:
    """A question over its sittings: every look, and the answer that stands."""

    looks: tuple[Look, ...]
    decision: str  # the first look's that decided, else unresolved
    decided_at: int  # the sitting whose look decided (0: none yet)
    planned: int

    @property
    def last(self) -> Look:
        """The pool of every sitting: the intervals printed."""
        return self.looks[-1]

    @property
    def spent(self) -> bool:
        """Past the planned sittings: nothing more is decided."""
        return self.last.k > self.planned


def over_looks(sittings: Sequence[SittingEstimate], history: SittingSpread | None,
               alpha: float, better: str, margin: float, next_iterations: float,
               planned: int = PLANNED, q_rule: bool = True,
               shared: Callable[[int], SharedSpread | None] | None = None) -> OverLooks:
    """The sittings in the order they sat (at least 2) as looks 2, 3, …: each pooled
    with `history` (spread.between_sittings), read at its look's level of `alpha` (the
    question's share of the family's) and decided by the verdicts' rule at `margin` in
    the metric's direction `better`; the next interval for a sitting of
    `next_iterations`. Past `planned` the intervals are read at the last planned look's
    level and decide nothing new."""
    if len(sittings) < 2:
        raise ValueError("a look needs at least two sittings")
    looks = []
    decision, decided_at = UNRESOLVED, 0
    for k in range(2, len(sittings) + 1):
        between = between_sittings(sittings[:k], history, q_rule,
                                   shared(k) if shared is not None else None)
        level = look_level(min(k, planned), alpha, planned)
        low, high = between.mean_interval(level)
        next_low, next_high = between.next_interval(level, next_iterations)
        ratio = math.exp(between.estimate)
        mean = _decided(ratio, low, high, better, margin) if k <= planned else ""
        following = _decided(ratio, next_low, next_high, better, margin)
        looks.append(Look(k, level, between, low, high, next_low, next_high, mean,
                          following))
        if not decided_at and mean not in ("", UNRESOLVED):
            decision, decided_at = mean, k
    return OverLooks(tuple(looks), decision, decided_at, planned)


def _decided(ratio: float, low: float, high: float, better: str, margin: float) -> str:
    """The verdicts' rule on an interval (log scale) about `ratio`."""
    pair = as_pair(ratio, math.exp(low), math.exp(high), better)
    return decide(pair, margin, needs=False).decision
