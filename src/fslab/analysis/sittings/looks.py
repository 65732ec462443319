"""Deciding again after every sitting without losing the error rate: α spent over the
sittings planned at the start. Numbers in, numbers out.

Each `fslab run --again` pools every sitting so far and decides again; testing at α after
each would let a false "faster" through at some sitting far more often than α (with
nothing different, τ = 0.05: 5 % at the second sitting, 15.3 % by the sixth, issue 58).
So the sittings are the looks of a group-sequential design planned at the start
(PLANNED sittings, look k at information fraction k/PLANNED), and the error is spent by
the Hwang–Shih–DeCani function α(t) = α (1 − e^(−γt)) / (1 − e^(−γ)) (Hwang, Shih &
DeCani, Stat Med 9:1439, 1990; the spending approach of Lan & DeMets, Biometrika 70:659,
1983). With γ = 4 over 6 sittings it spends 3.75 % by the second look, where pooling
starts (the first sitting is not a look of the pool: what it would have spent is the
second look's), so a second sitting that agrees decides nearly what one sitting decides
on its own, where a Pocock-type function (1.9 %) or O'Brien–Fleming's (0.1 %) would not
(issue 58's simulation: 95 %, 82 % and about none of the replicates one sitting alone
decided 97 % of).

Each look's nominal two-sided level is that of a running sum of independent N(0, 1)
sittings crossing ±c_k at look k and not before with chance α(t_k) − α(t_(k−1)) (its
density carried on a grid from look to look, Armitage, McPherson & Rowe 1969), and the
pooled intervals of look k are read at that level ("the same nominal level", Jennison &
Turnbull, Group Sequential Methods, 2000, §7.2 and §11.4): they are repeated confidence
intervals, all of them covering together with chance 1 − α, so a decision read off any of
them — at whichever sitting it comes — keeps the error rate α. Past the planned sittings
nothing is left to spend: no new decision is made (LEVEL_SPENT).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

PLANNED = 6  # sittings planned at the start (the looks the error is spent over)
GAMMA = 4.0  # Hwang–Shih–DeCani γ (γ = 1 is Pocock-like, γ = −4 O'Brien–Fleming-like)
FIRST = 2  # the first look: pooling starts at the second sitting
STEP = 0.02  # the running sum's grid, in SDs of one sitting
LEVEL_SPENT = 0.0  # the level of a look past the planned sittings: nothing to decide


def spent(fraction: float, alpha: float, gamma: float = GAMMA) -> float:
    """The α the Hwang–Shih–DeCani function has spent by information `fraction` (0–1)."""
    t = min(max(fraction, 0.0), 1.0)
    if gamma == 0:
        return alpha * t
    return alpha * (1 - math.exp(-gamma * t)) / (1 - math.exp(-gamma))


@lru_cache(maxsize=256)
def look_levels(alpha: float, planned: int = PLANNED, gamma: float = GAMMA
                ) -> tuple[float, ...]:
    """Each look's nominal two-sided level at sittings FIRST, FIRST + 1, …, `planned`
    (module doc)."""
    from scipy import signal, stats  # scipy.stats: 0.5 s to import

    planned = max(planned, FIRST)
    half = math.ceil((8.0 * math.sqrt(planned) + 8.0) / STEP)
    grid = STEP * np.arange(-half, half + 1)  # symmetric: grid[half + j] = j · STEP
    density = stats.norm.pdf(grid, scale=math.sqrt(FIRST)) * STEP
    kernel = stats.norm.pdf(STEP * np.arange(-400, 401)) * STEP
    levels, before = [], 0.0
    for k in range(FIRST, planned + 1):
        now = spent(k / planned, alpha, gamma)
        share, before = max(now - before, 0.0), now
        folded = density[half:] + density[half::-1]  # |S| at j · STEP
        folded[0] = density[half]
        tail = np.cumsum(folded[::-1])[::-1]  # mass at or past |S| = j · STEP
        index = int(np.searchsorted(-tail, -share, side="left"))
        if share <= 0 or index >= len(tail):
            levels.append(0.0)
            continue
        edge = (index - 0.5) * STEP  # cell j holds |S| in (j ∓ 1/2) · STEP
        if index > 0:  # between the cells' edges, linearly
            edge -= STEP * (share - tail[index]) / (tail[index - 1] - tail[index])
        levels.append(float(2 * stats.norm.sf(edge / math.sqrt(k))))
        density = np.where(np.abs(grid) < edge, density, 0.0)
        if k < planned:
            density = signal.fftconvolve(density, kernel, mode="same")
    return tuple(levels)


def look_level(k: int, alpha: float, planned: int = PLANNED) -> float:
    """The nominal two-sided level of the pool of k sittings (LEVEL_SPENT past the
    planned ones; one sitting is not a look: α)."""
    if k < FIRST:
        return alpha
    if k > planned:
        return LEVEL_SPENT
    return look_levels(alpha, planned)[k - FIRST]
