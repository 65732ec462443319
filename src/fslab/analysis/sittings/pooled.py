"""Pooling sittings: one question's ratio over k sittings (or machines) as a random effect,
with an interval for the mean and one for the next sitting. Arrays in, numbers out.

Each sitting i (a results directory: fresh file systems, one machine, one stretch of
time) gives its estimate y_i of the log ratio and its standard error s_i (the pair's own:
analysis.pairs.model). The model is y_i = μ + u_i + e_i with u_i ~ N(0, τ²) the
sitting's own effect (what makes the next sitting differ from this one) and e_i ~
N(0, s_i²) its iterations' noise.

- **The mean μ** ("on average"): the mean of the sittings' log ratios with a t interval on
  k − 1 df. For sittings of equal iterations the y_i are independent N(μ, τ² + σ²/n): the
  interval is exact whatever τ, and it is what the Hartung–Knapp–Sidik–Jonkman interval
  (Hartung & Knapp 2001; Sidik & Jonkman 2002) becomes with equal weights (a test holds
  it to statsmodels' `combine_effects`). Weighting by the sittings' own estimated
  variances, as HKSJ does, let its coverage fall to 90 % at τ = 0 here: each s_i rests on
  n − 1 = 4 df, and weights from noisy variances favour the sittings that happened to
  look steady.
- **τ and I²**: Paule–Mandel τ² (Paule & Mandel 1982), and I² = (Q − (k − 1))/Q from
  Cochran's Q (Higgins & Thompson 2002), by `combine_effects`.
- **The next sitting** ("next time"): where the next sitting's estimate should fall,
  ȳ ± t(k − 1) · s_y · √(1 + 1/k) — the exact prediction interval of one more draw of the
  same normal (it holds the next sitting's own iterations' noise, so it holds its true
  ratio too). It stands in for the Higgins–Thompson–Spiegelhalter interval (Higgins,
  Thompson & Spiegelhalter 2009; t on k − 2 df around the random-effects mean), which
  covered a new sitting's true ratio in 86.5–90.5 % at τ = 0.05 and k ≥ 5 here. It is
  given from k = 3: from two sittings the exact interval is t(1) = 12.7 times their
  spread, which decides nothing.
- **Two sittings with the host's history** (`spread`: analysis.sittings.repeat, the
  catalogue's earlier sittings of this host, the pooled sittings left out): τ is borrowed,
  for the mean and the next sitting alike — ȳ ± t(ν) · √((τ̃² + s̄²)/k) and
  ȳ ± t(ν) · √((τ̃² + s̄²)(1 + 1/k)), s̄² the sittings' mean squared standard error, ν by
  Welch–Satterthwaite over τ̃²'s degrees of freedom and the sittings' own: the next
  interval is then always √3 × the mean's, so what holds next time holds on average.

benchmarks/pool_coverage compares these with other candidates by simulation with known
truth (docs/statistics.md: which was chosen and why).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.special import stdtrit

from fslab.analysis.pairs.pair import decide
from fslab.analysis.sittings.repeat import quantile, satterthwaite
from fslab.core.environment_record import SittingSpread
from fslab.core.pair import Pair

METHOD = ("sittings as a random effect, in the order they sat: the spread between them "
          "from the host's history (else the stated prior τ0 = 0.05 on 2 df) and the "
          "sittings' own disagreement (the normal–normal model's posterior of τ, Röver "
          "2020), sittings weighted by their iterations (w = 1/(τ² + σ²/n), σ² pooled); "
          "the history not borrowed when Cochran's Q against it is past its 90 % "
          "quantile; the mean's interval and the next sitting's (τ² + σ²/m + Var μ̂) read "
          "at each look's level, α spent over the planned sittings by Hwang–Shih–DeCani "
          "γ = 4; the first look that decides decides (analysis/sittings/spread.py, "
          "looks.py)")
HOSTS_METHOD = ("hosts as a random effect: the mean of their log ratios with a t interval "
                "on k − 1 df (HKSJ with equal weights); τ by Paule–Mandel and I² from "
                "Cochran's Q; the next host's estimate by the exact prediction interval "
                "t(k − 1) · s · √(1 + 1/k), from 3 hosts")
TWO = ("two sittings: an interval for the mean (on 1 degree of freedom) but none for the next "
       "sitting — two points cannot tell the sittings' spread; the host's history can "
       "(fslab history add, or record campaigns with --catalogue), or a third sitting "
       "(fslab run --again DIR)")
BORROWED = "two sittings: both intervals borrow τ from this host's history"


@dataclass(frozen=True)
class Pooled:
    """One question pooled over k sittings, on the log scale."""

    k: int
    estimate: float  # μ̂: the sittings' mean log ratio
    se: float  # its standard error (the sittings' SD / √k)
    low: float  # the mean's interval (at the caller's level)
    high: float
    next_low: float  # where the next sitting's estimate should fall (NaN: cannot be said)
    next_high: float
    tau: float  # between-sitting SD of the log ratio (Paule–Mandel, of these sittings)
    i2: float  # share of the sittings' spread that is between them (Cochran's Q)
    fixed_se: float  # the fixed-effect (inverse-variance) standard error, for comparison
    note: str = ""


def pool(estimates: Sequence[float], ses: Sequence[float], level: float = 0.05,
         spread: SittingSpread | None = None, df: float = 4.0) -> Pooled:
    """k ≥ 2 sittings' log ratios and standard errors → Pooled, each interval at 1 − level
    (module docstring). `spread`: the host's between-sitting spread for this question,
    borrowed when there are only two; `df`: each sitting's own degrees of freedom."""
    y = np.asarray(estimates, dtype=float)
    s = np.asarray(ses, dtype=float)
    k = len(y)
    if k < 2:
        raise ValueError("pooling needs at least 2 sittings")
    estimate = float(y.mean())
    tau, i2, fixed_se = heterogeneity(y, s)
    if k == 2 and spread is not None and spread.sittings > 0:
        known, own = spread.tau ** 2, float(np.mean(s * s))
        crit = quantile(satterthwaite([(known, spread.tau_df), (own, k * df)]), level)
        se = math.sqrt((known + own) / k)
        half = crit * math.sqrt((known + own) * (1 + 1 / k))
        return Pooled(k, estimate, se, estimate - crit * se, estimate + crit * se,
                      estimate - half, estimate + half, tau, i2, fixed_se, BORROWED)
    sd = float(y.std(ddof=1)) if np.ptp(y) > 0 else 0.0  # identical: exactly none
    se = sd / math.sqrt(k)
    crit = quantile(k - 1, level)
    next_low = next_high = math.nan
    if k >= 3:
        half = crit * sd * math.sqrt(1 + 1 / k)
        next_low, next_high = estimate - half, estimate + half
    return Pooled(k, estimate, se, estimate - crit * se, estimate + crit * se, next_low,
                  next_high, tau, i2, fixed_se, "" if k >= 3 else TWO)


def heterogeneity(estimates: np.ndarray, ses: np.ndarray) -> tuple[float, float, float]:
    """(τ, I², the fixed-effect standard error): Paule–Mandel τ², and I² from Cochran's Q
    (Higgins & Thompson 2002), by statsmodels' `combine_effects` (a sitting of identical
    values weighs as a very precise one)."""
    import warnings

    from statsmodels.stats.meta_analysis import combine_effects

    variance = np.maximum(ses * ses, 1e-24)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        found = combine_effects(estimates, variance, method_re="iterated")
    i2 = float(found.i2) if float(found.q) > len(estimates) - 1 else 0.0
    return (math.sqrt(max(float(found.tau2), 0.0)), min(max(i2, 0.0), 1.0),
            math.sqrt(float(found.var_eff_w_fe)))


def fixed_effect(estimates: Sequence[float], ses: Sequence[float], dfs: Sequence[float],
                 level: float = 0.05) -> tuple[float, float, float]:
    """(estimate, low, high): the fixed-effect pool of the same runs, as if the sittings'
    iterations were one campaign's — the mean of the sittings' estimates, its variance
    their pooled within-sitting variance over k, the t quantile on their df added up
    (exact at τ = 0 for sittings of equal iterations). What a random-effects interval is
    compared with at τ = 0 (benchmarks/pool_coverage)."""
    y = np.asarray(estimates, dtype=float)
    s2 = np.asarray(ses, dtype=float) ** 2
    d = np.asarray(dfs, dtype=float)
    estimate = float(y.mean())
    within = float((d * s2).sum() / d.sum())  # each sitting's s² weighted by its df
    half = float(stdtrit(float(d.sum()), 1 - level / 2)) * math.sqrt(within / len(y))
    return estimate, estimate - half, estimate + half


def ratio_interval(pooled: Pooled) -> tuple[float, float, float, float, float]:
    """(ratio, low, high, next_low, next_high) on the ratio scale."""
    return (math.exp(pooled.estimate), math.exp(pooled.low), math.exp(pooled.high),
            math.exp(pooled.next_low), math.exp(pooled.next_high))


NO_SPREAD = "the sittings gave the same estimate: no spread to read an interval from"


def as_pair(ratio: float, low: float, high: float, better: str, note: str = "") -> Pair:
    """An interval about a pooled ratio as the pair record the verdicts' rule reads: it
    excludes 1 or not; without an interval (`note`, or none to read: NaN, or sittings
    that agree exactly) it is not estimable."""
    if not note and not (math.isfinite(low) and math.isfinite(high)):
        note = "no interval"
    elif not note and high <= low:
        note = NO_SPREAD
    return Pair(ratio=ratio, ratio_ci_low=low, ratio_ci_high=high, better=better,
                significant=not note and (low > 1 or high < 1), note=note)


def decisions(pooled: Pooled, better: str, margin: float) -> tuple[str, str]:
    """(on average, next time): each interval read by the verdicts' rule and margin (the
    pooled estimate as a pair record with that interval, decided by analysis.pairs.pair.
    decide): faster or slower when it excludes 1, equivalent inside the margin, else
    unresolved; no interval is unresolved."""
    ratio, low, high, next_low, next_high = ratio_interval(pooled)
    mean = as_pair(ratio, low, high, better)
    following = as_pair(ratio, next_low, next_high, better,
                        "" if math.isfinite(next_low) else pooled.note or "no interval")
    return (decide(mean, margin, needs=False).decision,
            decide(following, margin, needs=False).decision)
