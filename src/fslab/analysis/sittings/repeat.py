"""A repeat interval for one sitting, from its machine's own history: what a repeat
sitting's estimate should show. Arrays in, numbers out.

A sitting's interval is about that sitting (repeatability); the next sitting on the same
machine differs by its own effect (ISO 5725's intermediate precision; Kalibera & Jones
2013's levels above the iteration). Its size is read from the machine's earlier sittings:
every campaign with at least two sittings of the same cells on this host gives, per
question, the sittings' log ratios y_gi and standard errors s_gi, and

    τ̂² = max(0, [Σ_g Σ_i (y_gi − ȳ_g)² − Σ_g (1 − 1/k_g) Σ_i s_gi²] / Σ_g (k_g − 1))

(the method of moments: E Σ_i (y_i − ȳ)² = (k − 1)τ² + (1 − 1/k) Σ s_i²). With few such
sittings it is shrunk toward a prior: τ0 = PRIOR_TAU on PRIOR_DF degrees of freedom,

    τ̃² = (PRIOR_DF · τ0² + df · τ̂²) / (PRIOR_DF + df),   df = Σ_g (k_g − 1),

on PRIOR_DF + df degrees of freedom: the conjugate (scaled inverse χ²) update of the prior
as if the sittings' own effects were seen directly. (Counting the iterations' noise in
τ̂²'s variance as well, by Welch–Satterthwaite, left a history of 4 df with t on about 1
df and repeat intervals 25× wide: a history that small says little, but not nothing.)

A repeat sitting's estimate differs from today's by both sittings' effects and both
sittings' noise, so the repeat interval is y ± t(ν) · √(2 (τ̃² + s²)), ν by Welch–
Satterthwaite over τ̃²'s and s²'s degrees of freedom. At τ = 0 it is √2 × today's
interval: the floor for an interval that must hold another sitting's own estimate.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from scipy.special import stdtrit

# The prior spread between sittings of a ratio on one machine (log scale, ≈ 5 %), and its
# weight in degrees of freedom: two sittings' worth, so that a host with a few earlier
# sittings leans on its own. Measured here: ext4 -I 128 moved 1.21× → 1.06× between two
# sittings (a log difference of 0.13: τ ≈ 0.09), xfs logbsize 1.29× → 1.28× (τ ≈ 0.01),
# the default campaign's pairs held each other's estimates in 28 of 30 (τ small beside
# 5 iterations' noise): docs/statistics.md.
PRIOR_TAU = 0.05
PRIOR_DF = 2.0


@dataclass(frozen=True)
class SittingSpread:
    """A machine's between-sitting spread of ratios (log scale), shrunk toward the prior."""

    tau: float  # τ̃: what the repeat interval uses
    tau_df: float  # its degrees of freedom: the prior's and the history's, PRIOR_DF + df
    sittings: int  # earlier sittings it rests on (0: the prior alone)
    raw_tau: float = math.nan  # τ̂ from the history alone (NaN: none)
    df: float = 0.0  # Σ (k_g − 1) of the history


PRIOR = SittingSpread(PRIOR_TAU, PRIOR_DF, 0)


def spread_between_sittings(groups: Iterable[tuple[Sequence[float], Sequence[float]]]
                            ) -> SittingSpread:
    """The spread from earlier sittings: each group one campaign × question's sittings
    (log ratios, standard errors), groups of fewer than 2 left out (module docstring)."""
    between = within = 0.0
    df = 0
    count = 0
    for estimates, ses in groups:
        y = [float(v) for v in estimates]
        s2 = [float(v) ** 2 for v in ses]
        k = len(y)
        if k < 2 or not all(math.isfinite(v) for v in (*y, *s2)):
            continue
        mean = sum(y) / k
        between += sum((v - mean) ** 2 for v in y)
        within += (1 - 1 / k) * sum(s2)
        df += k - 1
        count += k
    if df == 0:
        return PRIOR
    raw = max(0.0, (between - within) / df)
    shrunk = (PRIOR_DF * PRIOR_TAU ** 2 + df * raw) / (PRIOR_DF + df)
    return SittingSpread(math.sqrt(shrunk), PRIOR_DF + df, count, math.sqrt(raw), float(df))


def satterthwaite(terms: Sequence[tuple[float, float]]) -> float:
    """The Welch–Satterthwaite degrees of freedom of a sum of variance estimates, each
    (value, its df); terms of 0 carry nothing."""
    total = sum(value for value, _ in terms)
    spread = sum(value * value / df for value, df in terms if value > 0 and df > 0)
    return total * total / spread if spread > 0 else math.inf


def repeat_interval(estimate: float, se: float, df: float, spread: SittingSpread,
                    level: float = 0.05) -> tuple[float, float]:
    """(low, high) on the log scale: where a repeat sitting's estimate should fall, at
    1 − level (module docstring)."""
    tau2 = spread.tau ** 2
    nu = satterthwaite([(tau2, spread.tau_df), (se * se, df)])
    half = float(stdtrit(min(nu, 1e6), 1 - level / 2)) * math.sqrt(2 * (tau2 + se * se))
    return estimate - half, estimate + half


def as_percent(tau: float) -> float:
    """How much two sittings' ratios typically differ, in percent: (e^τ − 1) · 100."""
    return 100 * math.expm1(tau)
