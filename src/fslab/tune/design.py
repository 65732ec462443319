"""The configurations each stage measures, from a maintained design-of-experiments library
(pyDOE: Lee et al.), never hand-written:

- screen: two-level factors only, a fractional factorial of resolution IV or better
  (pydoe.fracfact_by_res: main effects are aliased with no two-factor interaction);
  mixed levels, a generalized subset design (pydoe.gsd, Surowiec et al. 2017), the
  smallest reduction that still estimates every main effect with room for the noise.
  The reference (every factor at its first level) is always measured.
- race: every configuration of the factors the screen kept when there are few; else the
  ones the screen's main-effects model ranks best, and the reference.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

from fslab.tune.space import Config

# A race of more configurations than this measures the model's best ones instead.
MAX_RACE = 16
# A screen needs this many runs per parameter it estimates (main effects and the blocks),
# so that its residual has degrees of freedom to spare.
RUNS_PER_PARAMETER = 2


def screen_design(levels: list[int], runs_allowed: int, iterations: int,
                  resolution: int = 4) -> list[Config]:
    """The screen's configurations: a fraction of `resolution` (IV, or III where a budget
    is small: main effects then alias two-factor interactions) for two-level factors, or
    a generalized subset design (mixed levels) that fits `runs_allowed` at `iterations`
    each (resolution III: one run per parameter to spare, not two), the reference always
    among them (module doc)."""
    import pydoe

    parameters = 1 + sum(n - 1 for n in levels)
    spare = RUNS_PER_PARAMETER if resolution >= 4 else 1
    if all(n == 2 for n in levels):
        if len(levels) <= 2 or (len(levels) == 3 and resolution >= 4):
            rows = [tuple(r) for r in itertools.product(*(range(n) for n in levels))]
        else:
            matrix = pydoe.fracfact_by_res(len(levels), resolution)
            rows = [tuple(int(v > 0) for v in row) for row in matrix]
    else:  # the largest subset design that fits, never one too small to estimate
        rows = []
        for reduction in range(2, max(levels) + 8):
            candidate = [tuple(int(v) for v in row) for row in pydoe.gsd(list(levels),
                                                                         reduction)]
            if len(candidate) < spare * parameters and rows:
                break
            rows = candidate
            if len(candidate) * iterations <= runs_allowed:
                break
    reference = tuple(0 for _ in levels)
    if reference not in rows:
        rows.insert(0, reference)
    return sorted(dict.fromkeys(rows), key=lambda r: (sum(1 for v in r if v), r))


def race_candidates(levels: list[int], kept: list[int],
                    rankings: list[Callable[[Config], Any]],
                    maximum: int = MAX_RACE) -> list[Config]:
    """The race's configurations: the reference, then every combination of the kept
    factors' levels (the others at their reference) taken in turn from each of
    `rankings` (sort keys, smaller first: the screen's cautious and bold readings), so
    that the best of each is raced; the first `maximum`."""
    combos = [tuple(choice[kept.index(i)] if i in kept else 0 for i in range(len(levels)))
              for choice in itertools.product(*(range(levels[i]) for i in kept))]
    reference = tuple(0 for _ in levels)
    orders = [_ranked([c for c in combos if c != reference], rank) for rank in rankings]
    out = [reference]
    for taken in itertools.zip_longest(*orders):
        out += [c for c in taken if c is not None and c not in out]
    return out[:maximum]


def _ranked(configs: list[Config], rank: Callable[[Config], Any]) -> list[Config]:
    return sorted(configs, key=lambda c: (rank(c), c))


def neighbours(leaders: list[Config], levels: list[int], kept: list[int],
               rank: Callable[[Config], Any]) -> list[Config]:
    """Configurations one kept option away from a leader (irace samples around its elites
    so), the first leader's first, each leader's best first by `rank`: what a race adds
    where eliminations freed its budget, so that two options that help only together
    can still meet."""
    out: list[Config] = []
    for leader in leaders:
        near = [tuple(level if j == i else v for j, v in enumerate(leader))
                for i in kept for level in range(levels[i]) if level != leader[i]]
        near.sort(key=lambda c: (rank(c), c))
        out += [c for c in near if c not in out]
    return out


