"""Power of a two-sided t test, and the smallest effect it detects (minimum detectable
effect), solved directly on the noncentral t distribution.

statsmodels' `solve_power` returns non-solutions without a warning at the small n and
strict α fslab uses (n = 3 with 3 pairs: an effect with power 0.61, not 0.80;
tests/analysis/test_power.py),
so the equation is solved here by bisection on its bracket (the power grows with the
noncentrality) and every answer's achieved power is checked before it is returned.

Power of a two-sided level-α t test with `df` degrees of freedom and noncentrality δ:
    power(δ) = P(T' > c) + P(T' < −c),  T' ~ t'(df, δ),  c = t(1 − α/2, df)
(e.g. Cohen 1988, ch. 2; Julious 2004, Stat. Med. 23:1921). For a paired t on n
differences δ = d·√n with df = n − 1; for two samples δ = d / √(1/n_a + 1/n_b) with
df = n_a + n_b − 2, d in units of the SD behind the test.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from scipy import special

# scipy.special, not scipy.stats (a second to import, paid by every `fslab run`): the t,
# noncentral t and chi distributions below are its functions, held to scipy.stats and to
# a simulation by tests/analysis/test_power.py. scipy.integrate (rarely needed) is imported where it
# is used; scipy.optimize not at all (increasing_root).

POWER = 0.80
# A solution is accepted when its achieved power is this close to the goal.
POWER_TOLERANCE = 1e-6

# What this step does, in one statement the report prints (stats/methods.csv).
METHOD = ("'Could have found R×' is the ratio that pair's test finds 4 times in 5 (80 % power, "
          'two-sided, noncentral t solved directly and its achieved power checked) at its n, '
          'noise and adjusted level.')


def t_power(noncentrality: float, df: float, alpha: float) -> float:
    """Power of the two-sided level-`alpha` t test at noncentrality δ (see module doc).

    Computed as an expectation over the t statistic's denominator U = √(χ²_df / df):
    power = E[Φ(δ − c·U) + Φ(−δ − c·U)], by adaptive quadrature, wherever scipy's
    noncentral t answers NaN (its far tails at small df: nct.cdf at δ ≈ 10, df = 2), which
    a root finder cannot step over. The tests hold both to a simulation."""
    c = -float(special.stdtrit(df, alpha / 2))
    upper = 1 - float(special.nctdtr(df, noncentrality, c))
    lower = _lower_tail(df, noncentrality, c)
    if math.isfinite(upper) and math.isfinite(lower):
        return min(1.0, max(0.0, upper + lower))
    return _power_by_quadrature(noncentrality, df, c)


NEGLIGIBLE = 1e-12  # far below POWER_TOLERANCE


def _lower_tail(df: float, noncentrality: float, c: float) -> float:
    """P(T' < −c), the test's wrong-side rejections. Where scipy's noncentral t answers NaN
    (large δ at small df), by the reflection P(T'(δ) < −c) = 1 − P(T'(−δ) ≤ c), else by
    its bound Φ(−δ) (T' < −c < 0 needs Z + δ < 0) when that is negligible: scipy.integrate,
    the quadrature's, costs 0.36 s to import."""
    found = float(special.nctdtr(df, noncentrality, -c))
    if math.isfinite(found):
        return found
    reflected = 1 - float(special.nctdtr(df, -noncentrality, c))
    if math.isfinite(reflected):
        return reflected
    bound = float(special.ndtr(-noncentrality))
    return 0.0 if bound < NEGLIGIBLE else math.nan


def _power_by_quadrature(noncentrality: float, df: float, c: float) -> float:
    from scipy import integrate

    def integrand(x: float) -> float:
        return float((special.ndtr(noncentrality - c * x) + special.ndtr(-noncentrality - c * x))
                     * _u_pdf(x, df))

    low, middle, high = (_u_quantile(q, df) for q in (1e-15, 0.5, 1 - 1e-15))
    value = sum(integrate.quad(integrand, a, b, epsabs=1e-13, epsrel=1e-11, limit=200)[0]
                for a, b in ((low, middle), (middle, high)))
    return min(1.0, max(0.0, value))


def _u_pdf(x: float, df: float) -> float:
    """Density of U = √(χ²_df / df) at x: U² · df is χ²_df, so the density is the χ²
    density at x²·df times its Jacobian 2·x·df."""
    if x <= 0:
        return 0.0
    y = x * x * df
    log_chi2 = (df / 2 - 1) * math.log(y) - y / 2 - (df / 2) * math.log(2) - special.gammaln(
        df / 2)
    return math.exp(log_chi2) * 2 * x * df


def _u_quantile(q: float, df: float) -> float:
    """The q-quantile of U = √(χ²_df / df): χ²_df's q-quantile is 2·P⁻¹(df/2, q) with P
    the regularised incomplete gamma function (its complement's inverse above the median,
    where 1 − q keeps the digits q would lose)."""
    chi2 = (2 * special.gammaincinv(df / 2, q) if q < 0.5
            else 2 * special.gammainccinv(df / 2, 1 - q))
    return math.sqrt(float(chi2) / df)


@functools.lru_cache(maxsize=4096)
def detectable_noncentrality(df: float, alpha: float, power: float = POWER) -> float:
    """The noncentrality at which the two-sided level-`alpha` t test on `df` degrees of
    freedom reaches `power`; NaN when no finite one does (df ≤ 0)."""
    if df <= 0 or not 0 < alpha < 1:
        return math.nan
    high = -float(special.stdtrit(df, alpha / 2)) + 10.0
    while t_power(high, df, alpha) < power:  # widen the bracket: power grows with δ
        high *= 2
        if high > 1e7:
            return math.nan
    root = increasing_root(lambda nc: t_power(nc, df, alpha) - power, 0.0, high)
    if abs(t_power(root, df, alpha) - power) > POWER_TOLERANCE:
        return math.nan  # never print a figure whose power was not reached
    return root


def increasing_root(f: Callable[[float], float], low: float, high: float,
                    tolerance: float = 1e-12) -> float:
    """The root of `f`, increasing on [low, high] with f(low) ≤ 0 ≤ f(high), by bisection
    to `tolerance` (relative to the root, absolute near 0).

    Not scipy.optimize.brentq: importing scipy.optimize costs 0.2 s of CPU, paid by every
    analysis (benchmarks/import_speed); power is monotone in the noncentrality, so
    bisection is exact enough in ~45 steps of a few µs. tests/analysis/test_power.py holds it to
    brentq over a randomised sweep."""
    for _ in range(200):
        middle = (low + high) / 2
        if high - low <= tolerance * max(1.0, abs(middle)):
            break
        if f(middle) < 0:
            low = middle
        else:
            high = middle
    return (low + high) / 2


def paired_detectable_d(n: int, alpha: float, power: float = POWER) -> float:
    """Effect in SDs of the differences that a paired t on `n` pairs detects with `power`."""
    if n < 2:
        return math.nan
    return detectable_noncentrality(float(n - 1), alpha, power) / math.sqrt(n)


# A question no reasonable budget resolves: past this many iterations fslab says so.
MAX_ITERATIONS = 100
# The iteration counts a "needs N" can name: every one up to 20, then steps of about a
# tenth (an answer rounds up to the next: a few iterations more on a question that takes
# 40 is within what its estimate can tell). Few counts mean few Welch designs to build.
COUNTS = (*range(2, 21), 22, 24, 26, 28, 30, 33, 36, 40, 44, 48, 53, 58, 64, 70, 77, 85,
          92, MAX_ITERATIONS)


# Points of the quantile grid over the spread's sampling distribution (per dimension):
# the expectations below are averages over these, within about 0.003 of a simulation.
GRID = 96


@dataclass(frozen=True)
class Sampling:
    """A test's standard error as it will be estimated: at each grid point, the estimate
    over the true standard error (U) and the critical value there (c), equally weighted.
    Paired: U² ~ χ²(n−1)/(n−1), c fixed; Welch: U and c (its df) from both variances."""

    u: np.ndarray
    c: np.ndarray

    @classmethod
    def paired(cls, n: int, level: float) -> Sampling:
        df = float(n - 1)
        u = np.sqrt(_chi2_grid(df) / df)
        return cls(u, np.full_like(u, -float(special.stdtrit(df, level / 2))))

    @classmethod
    def welch(cls, var_a: float, var_b: float, n_a: int, n_b: int, level: float) -> Sampling:
        # each target's estimated variance of its mean, over the grid of both
        ga = np.broadcast_to((_chi2_grid(n_a - 1.0) / (n_a - 1))[:, None] * var_a / n_a,
                             (GRID, GRID)).ravel()
        gb = np.broadcast_to((_chi2_grid(n_b - 1.0) / (n_b - 1))[None, :] * var_b / n_b,
                             (GRID, GRID)).ravel()
        se2 = ga + gb
        with np.errstate(divide="ignore", invalid="ignore"):  # Welch–Satterthwaite
            df = se2 ** 2 / (ga ** 2 / (n_a - 1) + gb ** 2 / (n_b - 1))
        df = np.where(np.isfinite(df), df, n_a + n_b - 2.0)
        u = np.sqrt(se2 / (var_a / n_a + var_b / n_b))
        # t's quantile is smooth in df: read off 256 log-spaced knots (relative error
        # ~1e-5 here) instead of 9,216 quantiles, each an inverse incomplete beta
        knots = np.geomspace(df.min(), df.max(), 256) if df.max() > df.min() else df[:1]
        return cls(u, np.interp(df, knots, -special.stdtrit(knots, level / 2)))

    def difference_power(self, z: float) -> float:
        """Power of the two-sided test at true effect z standard errors."""
        cu = self.c * self.u
        return float(np.mean(special.ndtr(z - cu) + special.ndtr(-z - cu)))

    def resolving_power(self, z: float, margin_z: float) -> float:
        """P(the interval excludes 0 or lies inside ±margin), effect and margin in true
        standard errors: |d̂| > cU or |d̂| ≤ margin − cU (everything when margin ≥ 2cU)."""
        a = self.c * self.u
        b = margin_z - a
        beyond = special.ndtr(-a - z) + special.ndtr(z - a)
        inside = np.where(b > 0, special.ndtr(b - z) - special.ndtr(-b - z), 0.0)
        return float(np.mean(np.where(b >= a, 1.0, beyond + inside)))


@functools.lru_cache(maxsize=512)
def _chi2_grid(df: float) -> np.ndarray:
    """GRID quantile midpoints of χ²(df), read-only: a campaign asks for the same few
    degrees of freedom thousands of times (10,323 calls, 2.5 s in a profiled run of the
    check tier)."""
    q = (np.arange(GRID) + 0.5) / GRID
    grid = 2 * special.gammaincinv(df / 2, q)
    grid.setflags(write=False)
    return grid


def welch_detectable_log(var_a: float, var_b: float, n_a: int, n_b: int, level: float,
                         power: float = POWER) -> float:
    """The log ratio Welch's test (its own df, estimated variances) finds with `power`
    at these true variances and sizes; NaN when it cannot be told."""
    if n_a < 2 or n_b < 2 or not var_a + var_b > 0:
        return math.nan
    share = (var_a / n_a) / (var_a / n_a + var_b / n_b)  # all the design depends on
    z = _welch_detectable_z(n_a, n_b, level, round(share, SHARE_DIGITS), power)
    return z * math.sqrt(var_a / n_a + var_b / n_b)


# The power moves by far less than its tolerance when the share of the standard error that
# one target's spread makes changes in the third digit: a cache keyed by it serves every
# pair of a campaign (and the simulations) from a few hundred solutions.
SHARE_DIGITS = 2


@functools.lru_cache(maxsize=8192)
def _welch_detectable_z(n_a: int, n_b: int, level: float, share: float,
                        power: float) -> float:
    """The detectable effect of Welch's test in true standard errors (see above)."""
    design = Sampling.welch(share * n_a, (1 - share) * n_b, n_a, n_b, level)

    def gap(z: float) -> float:
        return design.difference_power(z) - power

    # bracket around the noncentral t's answer at the smaller df, then regula falsi
    low = high = max(detectable_noncentrality(float(min(n_a, n_b) - 1), level, power), 1.0)
    while gap(low) > 0:
        low /= 2
    while gap(high) < 0:
        high *= 2
        if high > 1e6:
            return math.nan
    return falsi_root(gap, low, high)


# Iterations to resolve are a whole number read off a power curve: the share of the
# standard error one side makes moves it by less than one iteration within a step of
# 0.05, and n a side makes the design the same for a share and its complement. So a
# campaign's pairs (180 in an import of 60 jobs × 3 targets) need a dozen designs per n,
# not one each (each a 96 × 96 grid of t quantiles: 5 ms).
SHARE_STEP = 0.05


def folded_share(share: float) -> float:
    return round(min(share, 1 - share) / SHARE_STEP) * SHARE_STEP


@functools.lru_cache(maxsize=8192)
def welch_sampling(n: int, level: float, share: float) -> Sampling:
    """Welch's Sampling at n a side where one side makes `share` of the variance (a
    cache: each costs a 96 × 96 grid of t quantiles)."""
    return Sampling.welch(share, 1 - share, n, n, level)


def falsi_root(f: Callable[[float], float], low: float, high: float,
               tolerance: float = 1e-9) -> float:
    """The root of increasing `f` on [low, high] (f(low) ≤ 0 ≤ f(high)) by the Illinois
    variant of regula falsi: a handful of evaluations for a smooth f, where each costs a
    grid average (bisection would need ~30)."""
    f_low, f_high, side = f(low), f(high), 0
    middle = low
    for _ in range(100):
        middle = (low * f_high - high * f_low) / (f_high - f_low)
        f_middle = f(middle)
        if abs(f_middle) < tolerance or high - low < tolerance * max(1.0, middle):
            break
        if f_middle < 0:
            low, f_low = middle, f_middle
            if side == -1:
                f_high /= 2
            side = -1
        else:
            high, f_high = middle, f_middle
            if side == 1:
                f_low /= 2
            side = 1
    return middle


# Sample sizes: how many iterations a goal takes (adaptive runs' second stage, an
# unresolved pair's "needs N iterations"). One place for every "how many".

# A second stage's smallest size: 2 df for its t (at 1 df an interval is ±12.7 SE).
MIN_SECOND_STAGE = 3
CONFIDENCE = 0.95


def detectable_sizes(sd_log: np.ndarray, percent: float, level: float,
                     max_n: int) -> np.ndarray:
    """Iterations for a paired test at per-pair `level` to detect a ratio of
    1 + percent/100 with 80 % power, given each pair's SD of log differences
    (vectorised; max_n where even max_n would not do)."""
    sizes = np.arange(MIN_SECOND_STAGE, max(max_n, MIN_SECOND_STAGE) + 1)
    needed_sd = np.array([math.log1p(percent / 100) / paired_detectable_d(int(n), level)
                          for n in sizes])  # the largest SD each n copes with (rising)
    return _first_enough(np.asarray(sd_log, dtype=float), needed_sd, sizes)


def interval_sizes(sd_log: np.ndarray, percent: float, max_n: int) -> np.ndarray:
    """Iterations for a cell's 95 % interval on logs to be within ×/÷ (1 + percent/100),
    given each cell's SD of logs (vectorised)."""
    sizes = np.arange(MIN_SECOND_STAGE, max(max_n, MIN_SECOND_STAGE) + 1)
    t = -special.stdtrit(sizes - 1, (1 - CONFIDENCE) / 2)
    needed_sd = math.log1p(percent / 100) * np.sqrt(sizes) / t
    return _first_enough(np.asarray(sd_log, dtype=float), needed_sd, sizes)


def _first_enough(sd: np.ndarray, allowed: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """The first size whose allowed SD reaches each sd (NaN sd: the largest size)."""
    index = np.searchsorted(allowed, np.nan_to_num(sd, nan=np.inf), side="left")
    return sizes[np.minimum(index, len(sizes) - 1)]
