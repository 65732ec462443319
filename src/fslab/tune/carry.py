"""What carries to the next sitting: an option's contribution read as a promise about the
next sitting, not about the one that measured it. Numbers in, one record out.

An option's contribution is the recommendation against itself without that option; each
sitting measures it (tune/again.py). A `change` is what a person acts on next time, so it
is decided on an interval for the **next sitting's contribution**: μ̂ ± the quantile of
τ² + Var(μ̂) (the next sitting's own effect u ~ N(0, τ²) about the mean, and what the mean
is not known to), τ the between-sitting spread of option effects from both sources
(analysis/sittings/spread.py: the host's history of option effects,
history/option_effects.py, else the stated prior τ0 = 0.05 on 2 df, combined with the
sittings' own disagreement).

- **The sitting that chose** (the first: its screen and race picked the option on that
  sitting's data) says how much the option gave *then*; selected as a winner, its
  sitting effect reads high. "Holds next time" is decided on the sittings after it
  (`carried`), each pool of them a look of the sittings planned at the start: the pool of
  sittings 2..k is read at look k's level of α over the options (analysis/sittings/
  looks.py: Hwang–Shih–DeCani spending over 6 planned sittings, the first sitting look 1),
  and the first look that decides decides. An option not measured in the sitting that
  chose (the recommendation without it was not among its configurations) is judged on
  the later sittings alike.
- **One sitting with a history** (`first_sitting`): the next sitting's contribution from
  the chosen sitting alone and the history's spread (variance 2τ² + s²: this sitting's
  and the next one's effects), at α over the options: `change` is printed only where its
  worse end shows the gain ("at least 1.04× next time"); else "this sitting only", with
  the sittings of `fslab tune --again` it would take (`sittings_needed`).
- **One sitting without a history**: the answer is this sitting's (nothing says how far
  an option moves between sittings on this host).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from fslab.analysis.pairs.decisions import sign
from fslab.analysis.pairs.pair import decide
from fslab.analysis.sittings.looks import LEVEL_SPENT, PLANNED, look_level
from fslab.analysis.sittings.pooled import as_pair
from fslab.analysis.sittings.spread import SittingEstimate, between_sittings, known_before
from fslab.analysis.sittings.words import HOLDS_NEXT, MAY_NOT_NEXT
from fslab.core.environment_record import SittingSpread
from fslab.core.pair import FASTER, UNRESOLVED

WHOLE = -1  # the key of the whole configuration's gain beside each option's share
THIS_ONLY = "this sitting only"  # won this sitting, not shown for the next one
THIS_SITTINGS = "this sitting's answer"  # no history: nothing said of the next sitting
ENDLESS = 10 ** 6  # the next sitting (of a sitting's estimate): its own noise is none
NEVER = 0  # sittings_needed: no number of sittings within the planned ones would do


@dataclass(frozen=True)
class Carried:
    """One option's contribution as a promise about the next sitting (module doc); ratios
    in the metric's direction are not turned: the contribution as measured."""

    sittings: int  # sittings that measured the contribution, the one that chose included
    later: int  # the sittings after the one that chose, pooled (0: the first sitting's)
    ratio: float  # the later sittings' pooled contribution (the first's alone: later 0)
    low: float  # its interval (NaN: none)
    high: float
    next_low: float  # where the next sitting's contribution should fall (NaN: no history)
    next_high: float
    decision: str  # the rule on the mean's interval ("": not decided on the later ones)
    next_decision: str  # the rule on the next sitting's interval
    verdict: str  # HOLDS_NEXT, MAY_NOT_NEXT, THIS_ONLY or THIS_SITTINGS
    level: float  # the level its intervals are read at
    source: str  # what the spread rests on (spread.HISTORY, STATED, NOT_BORROWED)
    tau: float  # the spread the intervals used (τ's posterior median)
    decided_at: int = 0  # the sitting whose look decided (0: none)
    needed: int = NEVER  # more sittings that would carry it, if its estimate holds


def first_sitting(estimate: SittingEstimate, history: SittingSpread | None, alpha: float,
                  better: str, margin: float) -> Carried:
    """The chosen sitting's contribution alone (module doc): with a history, its next
    sitting's interval at `alpha` (the option's share of the family) and the verdict;
    without, this sitting's answer."""
    ratio = math.exp(estimate.estimate)
    if history is None or history.sittings <= 0:
        return Carried(1, 0, ratio, math.nan, math.nan, math.nan, math.nan, "", "",
                       THIS_SITTINGS, alpha, "", math.nan)
    between = between_sittings([estimate], history)
    next_low, next_high = between.next_interval(alpha, ENDLESS)
    following = _decided(ratio, next_low, next_high, better, margin)
    holds = following == FASTER
    return Carried(1, 0, ratio, math.nan, math.nan, math.exp(next_low), math.exp(next_high),
                   "", following, HOLDS_NEXT if holds else THIS_ONLY, alpha, between.source,
                   between.tau, 1 if holds else 0,
                   0 if holds else sittings_needed(estimate, between.prior, alpha, better))


def carried(sittings: Sequence[SittingEstimate | None], history: SittingSpread | None,
            alpha: float, better: str, margin: float) -> Carried:
    """The option over its sittings in the order they sat, the first the one that chose
    (None where a sitting did not measure it): the later ones pooled, each pool a look
    (module doc)."""
    measured = [s for s in sittings if s is not None]
    decision, decided_at, last = UNRESOLVED, 0, None
    for k in range(2, len(sittings) + 1):
        later = [s for s in sittings[1:k] if s is not None]
        if not later:
            continue
        level = look_level(min(k, PLANNED), alpha)
        if level == LEVEL_SPENT:
            level = look_level(PLANNED, alpha)
        between = between_sittings(later, history)
        low, high = between.mean_interval(level)
        next_low, next_high = between.next_interval(level, ENDLESS)
        ratio = math.exp(between.estimate)
        mean = _decided(ratio, low, high, better, margin) if k <= PLANNED else ""
        last = (between, level, ratio, low, high, next_low, next_high,
                _decided(ratio, next_low, next_high, better, margin))
        if not decided_at and mean not in ("", UNRESOLVED):
            decision, decided_at = mean, k
    if last is None:
        if not measured:
            raise ValueError("no sitting measured the option")
        return first_sitting(measured[0], history, alpha, better, margin)
    between, level, ratio, low, high, next_low, next_high, following = last
    holds = decision == FASTER and following == FASTER
    verdict = HOLDS_NEXT if holds else MAY_NOT_NEXT
    later = [s for s in sittings[1:] if s is not None]
    return Carried(len(measured), len(later), ratio, math.exp(low), math.exp(high),
                   math.exp(next_low), math.exp(next_high), decision, following, verdict,
                   level, between.source, between.tau, decided_at,
                   0 if holds else sittings_needed(later[-1], between.prior, alpha, better,
                                                   done=len(sittings)))


def _decided(ratio: float, low: float, high: float, better: str, margin: float) -> str:
    """The verdicts' rule (analysis.pairs.pair.decide) on an interval (log scale)."""
    return decide(as_pair(ratio, math.exp(low), math.exp(high), better), margin,
                  needs=False).decision


def sittings_needed(estimate: SittingEstimate, known: SittingSpread, alpha: float,
                    better: str, done: int = 1) -> int:
    """The more sittings that would carry the option (NEVER: none within the planned
    ones), if its contribution and this spread hold: the fewest j sittings after the
    first, each measuring as this one did, whose next-sitting interval's worse end,
    μ̂ − z·√(τ² + (τ² + s²)/j) at look j + 1's level, is past 1, less those after the
    first so far (`done`: the sittings so far; τ the spread known before)."""
    from scipy import stats  # scipy.stats: 0.5 s to import

    tau2 = known_before(known).tau ** 2
    gain = sign(better) * estimate.estimate
    for j in range(done, PLANNED):
        level = look_level(j + 1, alpha)
        if level <= 0:
            break
        z = float(stats.norm.isf(level / 2))
        if gain - z * math.sqrt(tau2 + (tau2 + estimate.se ** 2) / j) > 0:
            return j - (done - 1)
    return NEVER
