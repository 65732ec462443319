"""A race's looks: multiple comparisons with the best, each pair on its own variance, the
error rate spent over looks whose number is fixed at the start.

Each configuration is compared with the best (the best centre among those `eligible`) by
the one model of pairs (analysis.pairs.decisions.decide_pair): a paired t on the logs of
the rounds both ran, so each comparison rests on that pair's own variance — a best with
twice the others' CV has its own wider interval, a drift every configuration of a round
shares cancels, and a configuration that joined late is compared only on the rounds it
shares with the best. Each bound is one-sided at the look's nominal level for the rounds
the pair shares.

The error budget (`Spending`) is fixed before the first round: the race's α (5 %), the
configurations that may ever enter it (`entries`: the width and every refill allowed),
and the most rounds it may take (`max_rounds`). The true best can be dropped only by a
configuration that overtakes it by chance at some look; each of the `entries` − 1 others
gets α/(entries − 1) for that, spent over its looks at the information fraction (rounds
shared)/`max_rounds` by a Lan–DeMets spending function of the Pocock type, α·ln(1 +
(e − 1)t) (Lan & DeMets 1983). A race looks in order to drop what is clearly behind early
and spend the freed rounds on candidates near the leaders: the Pocock type spends α about
evenly over the looks, so a configuration clearly behind leaves by mid-race; the
O'Brien–Fleming type keeps nearly all of it for the last looks, when the race is about to
end and a drop frees nothing (benchmarks/tune_race's spread field: of the configurations
below 0.8 of the best, 65 % dropped against 22 %). The boundaries are
those of a
running sum of independent normal rounds (`boundaries`: its density carried from look to
look, Armitage, McPherson & Rowe 1969); each look's t test takes the nominal level of its
boundary ("the same nominal level", Jennison & Turnbull 2000, §11.4). So, by the union
bound, **the chance that any look drops the true best is at most α**, however many
configurations enter late and whenever the race ends: a look that never happens spends
nothing. `benchmarks/tune_race` checks it with unequal spreads and refill on.

The winner the race hands on is a claim about the whole set, not about the observed best
alone: the best was selected as the largest of noisy centres, and a member merely shown
within the margin of it may be more than the margin behind another member that is the
true best. So a member is named the winner (other than the best) only when it is shown
equivalent within the margin to every other member of the set — the comparisons with the
best made against whichever member is best (Hsu 1984's multiple comparisons with the
best: a configuration is practically the best when its interval against every other lies
within the margin; Hsu, J. C., "Constrained simultaneous confidence intervals for multiple
comparisons with the best", Annals of Statistics 12, 1984; Hsu 1996, ch. 4), each pair
on the rounds both ran at the look's level (`equivalent_to_all`).

Bounds (--subject-to) are a second question with its own budget: a configuration is
dropped for breaking one when its one-sided bound of the metric's geometric mean (its
own log interval) lies past it, each configuration at α/entries spent the same way: the
chance that any configuration whose typical value keeps the bound is dropped for it is at
most α.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import TypeVar

import numpy as np

from fslab.analysis.cells.stats import geomean, log_ci
from fslab.analysis.pairs.decisions import best_of, decide_pair
from fslab.analysis.pairs.model import ALPHA
from fslab.analysis.pairs.selection import BestSet, block_fit
from fslab.core.pair import EQUIVALENT

K = TypeVar("K")
OBRIEN_FLEMING, POCOCK = "O'Brien-Fleming", "Pocock"
GRID_STEP = 0.02  # the running sum's grid, in SDs of one round


def spent(kind: str, fraction: float, alpha: float) -> float:
    """The α a Lan–DeMets spending function has spent by information `fraction` (0-1):
    O'Brien–Fleming type 2 − 2Φ(z_{α/2}/√t), Pocock type α·ln(1 + (e − 1)t)."""
    t = min(max(fraction, 0.0), 1.0)
    if t <= 0:
        return 0.0
    if kind == POCOCK:
        return alpha * math.log(1 + (math.e - 1) * t)
    if kind == OBRIEN_FLEMING:
        from scipy import stats  # scipy.stats: 0.5 s to import

        return float(2 * stats.norm.sf(stats.norm.isf(alpha / 2) / math.sqrt(t)))
    raise ValueError(f"no spending function {kind!r}")


@lru_cache(maxsize=512)
def boundaries(kind: str, alpha: float, first: int, last: int) -> tuple[float, ...]:
    """The one-sided nominal level of each look at rounds first, first + 1, …, last
    (information n/last) at which a running sum of independent N(0, 1) rounds crosses
    at look n, not before, with chance spent(n/last) − spent((n − 1)/last): its density
    carried on a grid from look to look, the mass past each boundary taken off."""
    from scipy import signal, stats  # scipy.stats: 0.5 s to import

    last = max(last, first)
    top = 8.0 * math.sqrt(last) + 8.0
    grid = np.arange(-top, top + GRID_STEP / 2, GRID_STEP)
    density = stats.norm.pdf(grid, scale=math.sqrt(first)) * GRID_STEP
    kernel = stats.norm.pdf(np.arange(-8.0, 8.0 + GRID_STEP / 2, GRID_STEP)) * GRID_STEP
    levels = []
    before = 0.0
    for n in range(first, last + 1):
        now = spent(kind, n / last, alpha)
        share = max(now - before, 0.0)
        before = now
        tail = np.cumsum(density[::-1])[::-1]  # mass at or above each grid point
        index = int(np.searchsorted(-tail, -share, side="left"))  # the first tail ≤ share
        if share <= 0 or index >= len(grid):
            levels.append(0.0)
            continue
        edge = float(grid[index])
        levels.append(float(stats.norm.sf(edge / math.sqrt(n))))
        density[index:] = 0.0
        if n < last:
            density = signal.fftconvolve(density, kernel, mode="same")
    return tuple(levels)


@dataclass(frozen=True)
class Spending:
    """A race's error budget, fixed before its first round (module doc)."""

    entries: int  # configurations that may ever enter: the family
    first_look: int
    max_rounds: int
    alpha: float = ALPHA
    kind: str = POCOCK

    def level(self, shared: int) -> float:
        """Each one-sided bound's level of a comparison with the best on `shared` rounds."""
        return self._level(self.alpha / max(1, self.entries - 1), shared)

    def bound_level(self, rounds: int) -> float:
        """Each one-sided bound's level of a configuration's bounded metric."""
        return self._level(self.alpha / max(1, self.entries), rounds)

    def _level(self, alpha: float, n: int) -> float:
        if n < self.first_look:
            return 0.0
        levels = boundaries(self.kind, alpha, self.first_look,
                            max(self.max_rounds, self.first_look))
        return levels[min(n, len(levels) + self.first_look - 1) - self.first_look]


def centres_of(groups: Mapping[K, Mapping[int, float]]) -> dict[K, float]:
    """Each configuration's centre: its effect in the additive model of configuration and
    round on the logs (a late entry's adjusted for the rounds it missed), or its
    geometric mean where that model has no residual."""
    fit = block_fit(groups)
    if fit is not None:
        return {k: math.exp(e) for k, e in fit.effects.items()}
    return {k: geomean(v.values()) for k, v in groups.items() if v}


def against_best(groups: Mapping[K, Mapping[int, float]], better: str, margin: float,
                 spending: Spending, eligible: Collection[K] | None = None) -> BestSet[K]:
    """The best of `groups` ({configuration: {round: value}}, among `eligible`) and each
    other's answer against it (other/best), each on the rounds both ran at the level of
    their shared rounds (module doc)."""
    measured = {k: dict(v) for k, v in groups.items() if any(x > 0 for x in v.values())}
    centres = centres_of(measured)
    best = best_of({k: c for k, c in centres.items() if eligible is None or k in eligible},
                   better)
    found = BestSet(best, centres)
    if best is None:
        return found
    for k, values in measured.items():
        if k == best:
            continue
        shared = len(set(values) & set(measured[best]))
        level = spending.level(shared)
        found.against[k] = decide_pair(values, measured[best], better, margin,
                                       alpha=2 * level if level > 0 else 1e-12)
    return found


def equivalent_to_all(groups: Mapping[K, Mapping[int, float]], candidate: K,
                      members: Collection[K], better: str, margin: float,
                      spending: Spending) -> bool:
    """Whether `candidate` is shown equivalent within the margin to every other member of
    the set (module doc: multiple comparisons with the best), each pair on the rounds both
    ran at the level of their shared rounds."""
    mine = groups.get(candidate) or {}
    for other in members:
        if other == candidate:
            continue
        theirs = groups.get(other) or {}
        shared = len(set(mine) & set(theirs))
        level = spending.level(shared)
        if level <= 0 or decide_pair(mine, theirs, better, margin,
                                     alpha=2 * level).decision != EQUIVALENT:
            return False
    return True


def breaks_bound(values: list[float], level: float, value: float, at_most: bool) -> bool:
    """Whether a bounded metric's geometric mean is shown past `value` (its one-sided
    bound at `level`, its own log interval, lies beyond)."""
    if level <= 0:
        return False
    interval = log_ci(values, 1 - 2 * level)
    if interval.n < 2:
        return False
    return interval.ci_low > value if at_most else interval.ci_high < value
