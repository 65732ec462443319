"""A repeat interval for one sitting, from its machine's own history: what a repeat
sitting's estimate should show. Arrays in, numbers out.

A sitting's interval is about that sitting (repeatability); the next sitting on the same
machine differs by its own effect (ISO 5725's intermediate precision; Kalibera & Jones
2013's levels above the iteration). τ below is the SD of a sitting's own effect on a
ratio's log — how far a sitting's ratio moves about the machine's long-run one (two
sittings then differ by √2 τ) — not of each target's level: with targets moving
independently by S each (the simulator's `sitting`), τ = √2 S. Its size is read from
the machine's earlier sittings, in groups: one campaign × workload with at least two
sittings, each of its questions (pair × op × metric) giving its sittings' log ratios
y_qi and standard errors s_qi. Per group g, by the method of
moments (E Σ_i (y_i − ȳ)² = (k − 1)τ² + (1 − 1/k) Σ s_i²),

    τ̂²_g = Σ_q [Σ_i (y_qi − ȳ_q)² − (1 − 1/k_q) Σ_i s_qi²] / Σ_q (k_q − 1),

which rests on d_g = (k − 1)(C_g) degrees of freedom, C_g the group's independent
contrasts: its targets less one (six targets make fifteen pairs, but five contrasts; a
pair's ops and metrics move together), at most its pairs. The groups are pooled weighted
by their precision, w_g = d_g / (τ̃² + s̄_g²)² (s̄_g² the group's mean s²: a noisy
history tells little about a small τ), τ̂² = Σ w_g τ̂²_g / Σ w_g, on
df = τ̃⁴ Σ w_g = Σ d_g (τ̃² / (τ̃² + s̄_g²))² effective degrees of freedom (the χ²
approximation of τ̂²'s variance, 2(τ² + s̄²)² / d_g, by Satterthwaite), and shrunk toward
a prior τ0 on D degrees of freedom,

    τ̃² = (D · τ0² + df · τ̂²) / (D + df)   on D + df degrees of freedom

(the conjugate, scaled inverse χ², update), τ̃ and the weights solved together by
iteration. The host's τ̃ uses the prior PRIOR_TAU on PRIOR_DF; each workload's own (a
workload's sittings may differ more than another's: random I/O on a fragmented image
against sequential) uses the same rule on that workload's groups with the host's τ̃ as
its prior on WORKLOAD_DF, and a workload the history has not seen takes the host's τ̃
(never below the prior) on those WORKLOAD_DF degrees of freedom (`for_workload`). The
assumptions: a workload's questions share one τ; the sittings' effects are normal and
independent of their noise; a group's pairs carry its contrasts' information, no more.

A repeat sitting's estimate differs from today's by both sittings' effects and both
sittings' noise: y ± t(ν) · √(2τ̃² + s² (1 + n/m)), n today's iterations and m the
repeat's (`fslab run --again` repeats a resolved campaign at its first look's iterations),
ν by Welch–Satterthwaite over τ̃²'s and s²'s degrees of freedom; never narrower than the
exact interval for a repeat's estimate at τ = 0, t(df) · s · √(1 + n/m) (ν past today's
df shrinks the t quantile: without that floor the interval dipped below √2 × today's;
at the Bonferroni level of 15 pairs, 97 % of intervals did and 0.48 % missed, not 0.33 %).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from scipy.special import stdtrit

from fslab.core.environment_record import SittingSpread

# The prior spread between sittings of a ratio on one machine (log scale, ≈ 5 %), and its
# weight in degrees of freedom: two sittings' worth, so that a host with a few earlier
# sittings leans on its own. Measured here: ext4 -I 128 moved 1.21× → 1.06× between two
# sittings (a log difference of 0.13: τ ≈ 0.09), xfs logbsize 1.29× → 1.28× (τ ≈ 0.01),
# the default campaign's pairs held each other's estimates in 28 of 30 (τ small beside
# 5 iterations' noise): docs/statistics.md. tune/confirm.py stops a confirmation at it.
PRIOR_TAU = 0.05
PRIOR_DF = 2.0
# What the host's τ̃ weighs as the prior of one workload's: two degrees of freedom — a
# host's workloads may differ (benchmarks/pool_coverage: a history of random and
# sequential workloads), so no workload's spread is taken as known from the others'.
WORKLOAD_DF = 2.0

PRIOR = SittingSpread(PRIOR_TAU, PRIOR_DF, 0)


@dataclass(frozen=True)
class HistoryGroup:
    """One campaign × workload of a host's earlier sittings: each question's log ratios
    and standard errors over its sittings, and the group's independent contrasts."""

    workload: str
    estimates: Sequence[Sequence[float]]  # per question, per sitting
    ses: Sequence[Sequence[float]]
    contrasts: int = 1  # targets − 1, at most the pairs


@dataclass(frozen=True)
class _Moments:
    tau2: float  # τ̂²_g (may be below 0)
    noise: float  # s̄²_g
    df: float  # d_g


def _moments(group: HistoryGroup) -> _Moments | None:
    between = within = 0.0
    df = 0
    noise: list[float] = []
    for estimates, ses in zip(group.estimates, group.ses, strict=True):
        pairs = [(float(y), float(s) ** 2) for y, s in zip(estimates, ses, strict=True)]
        pairs = [(y, s2) for y, s2 in pairs if math.isfinite(y) and math.isfinite(s2)]
        k = len(pairs)
        if k < 2:
            continue
        mean = sum(y for y, _ in pairs) / k
        between += sum((y - mean) ** 2 for y, _ in pairs)
        within += (1 - 1 / k) * sum(s2 for _, s2 in pairs)
        df += k - 1
        noise += [s2 for _, s2 in pairs]
    if not df:
        return None
    questions = sum(1 for e in group.estimates if len(e) >= 2)
    return _Moments((between - within) / df, sum(noise) / len(noise),
                    df / max(questions, 1) * max(1, min(group.contrasts, questions)))


def shrunk(groups: Sequence[_Moments], prior_tau: float, prior_df: float, sittings: int
           ) -> SittingSpread:
    """τ̃ of these groups toward a prior τ on `prior_df` degrees of freedom (module
    docstring): the precision-weighted moments and τ̃ solved together."""
    prior2 = prior_tau ** 2
    if not groups or prior_df <= 0:
        return SittingSpread(prior_tau, prior_df, 0)
    tau2, raw, df = prior2, 0.0, 0.0
    for _ in range(200):
        weights = [g.df / (tau2 + g.noise) ** 2 if tau2 + g.noise > 0 else 0.0
                   for g in groups]
        if not sum(weights):  # no noise and no spread: the sittings agree exactly
            raw, df = max(0.0, sum(g.tau2 * g.df for g in groups)
                          / sum(g.df for g in groups)), sum(g.df for g in groups)
        else:
            raw = max(0.0, sum(w * g.tau2 for w, g in zip(weights, groups, strict=True))
                      / sum(weights))
            df = tau2 * tau2 * sum(weights)
        following = (prior_df * prior2 + df * raw) / (prior_df + df)
        if abs(following - tau2) <= 1e-12 * max(prior2, 1e-12):
            tau2 = following
            break
        tau2 = following
    return SittingSpread(math.sqrt(tau2), prior_df + df, sittings, math.sqrt(raw), df)


def spread_between_sittings(groups: Iterable[HistoryGroup], sittings: int | None = None
                            ) -> SittingSpread:
    """The host's spread from its earlier sittings (module docstring), and each workload's
    shrunk toward it; `sittings`: how many distinct sittings the groups hold (default:
    the largest group's)."""
    found = [(g, m) for g in groups if (m := _moments(g)) is not None]
    if not found:
        return PRIOR
    count = sittings if sittings is not None else max(
        max(len(e) for e in g.estimates) for g, _ in found)
    host = shrunk([m for _, m in found], PRIOR_TAU, PRIOR_DF, count)
    workloads = {}
    for name in sorted({g.workload for g, _ in found}):
        own = [(g, m) for g, m in found if g.workload == name]
        workloads[name] = shrunk([m for _, m in own], host.tau,
                                 min(host.tau_df, WORKLOAD_DF),
                                 max(max(len(e) for e in g.estimates) for g, _ in own))
    return replace(host, workloads=workloads)


def for_workload(spread: SittingSpread, workload: str) -> SittingSpread:
    """The spread a question of `workload` reads: the workload's own where the history
    has it; else the host's, never below the prior, on WORKLOAD_DF degrees of freedom
    (no workload's spread is known from the others': a host whose history is all steady
    sequential I/O says little of random I/O); the prior alone where the host has no
    history."""
    if workload in spread.workloads:
        return spread.workloads[workload]
    if not spread.sittings:
        return spread
    return replace(spread, tau=max(spread.tau, PRIOR_TAU),
                   tau_df=min(spread.tau_df, WORKLOAD_DF), workloads={})


def satterthwaite(terms: Sequence[tuple[float, float]]) -> float:
    """The Welch–Satterthwaite degrees of freedom of a sum of variance estimates, each
    (value, its df); terms of 0 carry nothing."""
    total = sum(value for value, _ in terms)
    spread = sum(value * value / df for value, df in terms if value > 0 and df > 0)
    return total * total / spread if spread > 0 else math.inf


def quantile(df: float, level: float) -> float:
    """t's two-sided 1 − level quantile on `df` (a normal's past 10⁶)."""
    return float(stdtrit(min(df, 1e6), 1 - level / 2))


def repeat_interval(estimate: float, se: float, df: float, spread: SittingSpread,
                    level: float = 0.05, iterations_ratio: float = 1.0
                    ) -> tuple[float, float]:
    """(low, high) on the log scale: where a repeat sitting's estimate should fall, at
    1 − level (module docstring); `iterations_ratio`: today's iterations over the
    repeat's (n/m)."""
    tau2 = spread.tau ** 2
    noise = se * se * (1 + iterations_ratio)
    nu = satterthwaite([(2 * tau2, spread.tau_df), (noise, df)])
    half = max(quantile(nu, level) * math.sqrt(2 * tau2 + noise),
               quantile(df, level) * math.sqrt(noise))
    return estimate - half, estimate + half


def as_percent(tau: float) -> float:
    """How far a sitting's ratio moves about the machine's long-run one, 1 SD, in
    percent: (e^τ − 1) · 100 (two sittings differ by √2 times that)."""
    return 100 * math.expm1(tau)
