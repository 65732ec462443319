"""Decisions at looks: a campaign that measures more where a question is not resolved
(`fslab run --resolve`) decides each primary pair at the first look where its interval
excludes 1 (faster or slower) or lies inside the margin (the same), at that look's own
level; a pair decided at a look keeps that answer and interval.

Error control: look k (1, 2, …) tests at α/2^k of the campaign's α — Bonferroni across
looks as well as across the campaign's primary pairs — so the chance of any false call
over every look is at most α/2 + α/4 + … < α, however many looks are taken and however
the size of the next one was chosen from the data before it (a union bound needs no
independence between looks). The first look of such a campaign is stricter than a plain
campaign's (α/2 instead of α): the price of the option to go on. Checked by simulation
(tests/run/test_resolve.py: A/A campaigns call a difference in ≤ 5 %; a true 1.2× is never
called the same within ±10 %).
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

import numpy as np

from fslab.analysis.pairs.model import ALPHA, IMPORTED, compare
from fslab.analysis.pairs.pair import UNRESOLVED, Pair, decide

METHOD = ("Resolve (--resolve): the campaign measured more iterations only where a primary "
          "question was unresolved, deciding each pair at the first look whose interval "
          "excludes 1 or lies inside the margin; look k tests at α/2^k (Bonferroni across "
          "looks and pairs), so every look together keeps the campaign's 95 %.")


def look_alpha(look: int, alpha: float = ALPHA) -> float:
    """The campaign-wide α that look `look` (1, 2, …) spends."""
    return alpha / 2 ** look


def iteration_weights(resolve: dict[str, Any] | None) -> dict[str, dict[int, float]]:
    """{workload: {iteration: weight}} of a campaign that resolves ([resolve] in
    campaign.toml): each round's runs at the weight its plan gave them (their precision
    relative to the campaign's own runs, run/resolve.py); the campaign's own iterations
    weigh 1 and are left out."""
    out: dict[str, dict[int, float]] = {}
    looks = list((resolve or {}).get("looks", []))
    for number, cells in enumerate((resolve or {}).get("cells", [])):
        start = looks[number] if number < len(looks) else 0
        for cell in cells:
            workload, last = str(cell[1]), int(cell[2])
            weight = float(cell[4]) if len(cell) > 4 else 1.0
            for iteration in range(start + 1, last + 1):
                out.setdefault(workload, {})[iteration] = weight
    return out


def at_looks(groups: dict[str, dict[int, float]], looks: list[int], family: int,
             margin: float, better: str, blocked_allowed: bool = True,
             not_blocks: str = IMPORTED, weights: dict[int, float] | None = None
             ) -> dict[tuple[str, str], tuple[Pair, int]]:
    """{(a, b): (the pair as decided, the look it was decided at, 1-based)}: each pair at
    its first deciding look, an undecided one at the last look (what an unresolved one
    needs is the caller's to ask, at its next look's level)."""
    out: dict[tuple[str, str], tuple[Pair, int]] = {}
    for number, until in enumerate(looks, start=1):
        seen = {name: {i: v for i, v in values.items() if i <= until}
                for name, values in groups.items()}
        found = compare(seen, blocked_allowed, look_alpha(number), family=family,
                        not_blocks=not_blocks, weights=weights, better=better)
        if isinstance(found, str):
            continue
        for pair in found.pairs:
            key = (pair.a, pair.b)
            if key in out and out[key][0].decision != UNRESOLVED:
                continue  # decided at an earlier look: its answer stands
            out[key] = (decide(pair, margin, needs=False), number)
    return out


GRID_STEP = 0.02  # of the running sum's grid, in SDs of one round (crossing to 1e-5)


@lru_cache(maxsize=256)
def pocock_level(looks: int, alpha: float, first: int = 3) -> float:
    """The nominal one-sided level of each of `looks` looks at rounds first, first + 1, …
    such that the chance that any of them crosses is `alpha` for one comparison (Pocock
    1977: one constant boundary). A tuner's race looks after every round."""
    from scipy import optimize, stats

    if looks <= 1:
        return alpha
    low, high = float(stats.norm.isf(alpha)), float(stats.norm.isf(alpha / looks))
    z = optimize.brentq(lambda c: crossing(c, looks, first) - alpha, low, high + 1e-6,
                        xtol=1e-5)
    return float(stats.norm.sf(z))


def crossing(z: float, looks: int, first: int = 3) -> float:
    """The chance that a running sum of independent N(0, 1) rounds reaches z·√n at one of
    the looks n = first, …, first + looks − 1: its density carried on a grid from look to
    look, the mass past the boundary taken off at each (Armitage, McPherson & Rowe 1969)."""
    from scipy import stats

    last = first + looks - 1
    reach = z * math.sqrt(last) + 8.0
    grid = np.arange(-8.0 * math.sqrt(last), reach + GRID_STEP, GRID_STEP)
    density = stats.norm.pdf(grid, scale=math.sqrt(first)) * GRID_STEP
    kernel_x = np.arange(-8.0, 8.0 + GRID_STEP / 2, GRID_STEP)
    kernel = stats.norm.pdf(kernel_x) * GRID_STEP
    crossed = 0.0
    for n in range(first, last + 1):
        past = grid >= z * math.sqrt(n)
        crossed += float(density[past].sum())
        density[past] = 0.0
        if n < last:
            density = np.convolve(density, kernel, mode="same")
    return crossed
