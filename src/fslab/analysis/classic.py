"""The classic tests the analysis chooses between, written out with numpy and scipy.special.

scipy.stats has them all, but importing it costs about a second (scipy 1.17 builds every
distribution's docstring at import) and each call another ~2 ms of argument handling:
together more than the whole analysis of 10,000 imported runs. These follow scipy's
definitions and its choices of method (exact or asymptotic, continuity, ties), so the
p-values are the same; tests hold every function to scipy.stats on random and tied data.

- Shapiro–Wilk: Royston's algorithm AS R94 (Appl. Statist. 44(4), 1995), as in scipy and R.
- Levene with center="median" (Brown–Forsythe) and one-way ANOVA: F ratios.
- Kruskal–Wallis with the tie correction.
- Mann–Whitney U, two-sided: the exact distribution when a sample has at most 8 values
  and nothing ties, else the normal approximation with tie and continuity corrections.
- Wilcoxon signed-rank on pairs (zeros dropped): exact without ties or zeros for
  n ≤ 50; with them, every sign flip enumerated for n ≤ 13; else the normal approximation.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from numpy.polynomial import polynomial
from scipy.special import chdtrc, fdtrc, ndtr, ndtri

Samples = list[np.ndarray]


def rankdata(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Average ranks (1-based, ties share their mean rank) and the size of each tie group."""
    values = np.asarray(values, dtype=float)
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    starts = np.r_[True, ordered[1:] != ordered[:-1]]
    group = np.cumsum(starts) - 1
    sizes = np.bincount(group)
    average = np.cumsum(sizes) - (sizes - 1) / 2.0
    ranks = np.empty(len(values))
    ranks[order] = average[group]
    return ranks, sizes


def f_oneway(samples: Samples) -> tuple[float, float]:
    """One-way ANOVA: F and its p."""
    data = np.concatenate(samples)
    grand = data.mean()
    between = sum(len(s) * (s.mean() - grand) ** 2 for s in samples)
    within = sum(((s - s.mean()) ** 2).sum() for s in samples)
    return _f_ratio(between, within, len(samples) - 1, len(data) - len(samples))


def levene_median(samples: Samples) -> tuple[float, float]:
    """Brown–Forsythe: the ANOVA F of absolute deviations from each group's median."""
    return f_oneway([np.abs(s - np.median(s)) for s in samples])


def _f_ratio(between: float, within: float, df_between: int, df_within: int
             ) -> tuple[float, float]:
    with np.errstate(divide="ignore", invalid="ignore"):
        f = np.float64(between / df_between) / np.float64(within / df_within)
    return float(f), float(fdtrc(df_between, df_within, f))


def kruskal(samples: Samples) -> tuple[float, float]:
    """Kruskal–Wallis H (corrected for ties) and its chi-square p."""
    ranks, ties = rankdata(np.concatenate(samples))
    total = len(ranks)
    bounds = np.cumsum([0] + [len(s) for s in samples])
    h = 12.0 / (total * (total + 1)) * sum(
        ranks[bounds[i]:bounds[i + 1]].sum() ** 2 / len(s) for i, s in enumerate(samples)
    ) - 3 * (total + 1)
    h /= 1 - (ties**3 - ties).sum() / float(total**3 - total)
    return float(h), float(chdtrc(len(samples) - 1, h))


def mannwhitneyu_p(x: np.ndarray, y: np.ndarray) -> float:
    """Two-sided p of the Mann–Whitney U test."""
    n1, n2 = len(x), len(y)
    ranks, ties = rankdata(np.concatenate([x, y]))
    u1 = ranks[:n1].sum() - n1 * (n1 + 1) / 2.0
    u = max(u1, n1 * n2 - u1)
    if (n1 > 8 and n2 > 8) or np.any(ties > 1):
        n = n1 + n2
        spread = math.sqrt(n1 * n2 / 12.0 * ((n + 1) - (ties**3 - ties).sum() / (n * (n - 1))))
        p = 2.0 * float(ndtr(-(u - n1 * n2 / 2.0 - 0.5) / spread))
    else:
        counts = _u_counts(min(n1, n2), max(n1, n2))
        p = 2.0 * counts[int(u):].sum() / counts.sum()
    return min(max(p, 0.0), 1.0)


@functools.lru_cache(maxsize=256)
def _u_counts(m: int, n: int) -> np.ndarray:
    """How many of the C(m+n, m) rankings give each U: the coefficients of the Gaussian
    binomial [m+n choose m]_q = Π_{i=1..m} (1 − q^(n+i)) / (1 − q^i)."""
    counts = np.zeros(m * n + 1)
    counts[0] = 1.0
    for i in range(1, m + 1):
        counts[n + i:] -= counts[:-(n + i)].copy()  # × (1 − q^(n+i))
        for start in range(i):  # ÷ (1 − q^i): a running sum with stride i
            counts[start::i] = np.cumsum(counts[start::i])
    return counts


def wilcoxon_p(x: np.ndarray, y: np.ndarray) -> float:
    """Two-sided p of the Wilcoxon signed-rank test on pairs (x_i, y_i), zeros dropped."""
    d = np.asarray(x, dtype=float) - np.asarray(y, dtype=float)
    n = len(d)
    nonzero = d[d != 0]
    count = len(nonzero)
    ranks, ties = rankdata(np.abs(nonzero))
    positive = nonzero > 0
    r_plus = float(ranks[positive].sum())
    exact = n <= 50 and count == n and not np.any(ties > 1)
    if exact:
        counts = _signed_rank_counts(count)
        total = counts.sum()
        upper = counts[math.floor(r_plus):].sum() / total
        lower = counts[:math.ceil(r_plus) + 1].sum() / total
        return min(max(2.0 * min(upper, lower), 0.0), 1.0)
    if n <= 13:  # ties or zeros: every sign flip, as scipy's permutation test does
        flips = (np.arange(2**n)[:, None] >> np.arange(n)) & 1  # 1: the sign flips
        full_ranks = np.zeros(n)
        full_ranks[d != 0] = ranks
        signs = np.where(flips == 1, -np.sign(d), np.sign(d))
        null = (signs > 0) @ full_ranks
        gamma = abs(np.finfo(float).eps * 100 * r_plus)
        less = np.count_nonzero(null <= r_plus + gamma) / 2**n
        greater = np.count_nonzero(null >= r_plus - gamma) / 2**n
        return min(max(2.0 * min(less, greater), 0.0), 1.0)
    mean = count * (count + 1) * 0.25
    spread = math.sqrt((count * (count + 1) * (2 * count + 1) - (ties**3 - ties).sum() / 2) / 24)
    z = (r_plus - mean) / spread
    return min(2.0 * float(ndtr(-abs(z))), 1.0)


@functools.lru_cache(maxsize=64)
def _signed_rank_counts(n: int) -> np.ndarray:
    """How many of the 2^n sign assignments give each rank sum: Π_{i=1..n} (1 + q^i)."""
    counts = np.zeros(n * (n + 1) // 2 + 1)
    counts[0] = 1.0
    for i in range(1, n + 1):
        counts[i:] += counts[:-i].copy()
    return counts


# Royston's polynomial coefficients (lowest order first).
SW_C1 = (0.0, 0.221157, -0.147981, -2.07119, 4.434685, -2.706056)
SW_C2 = (0.0, 0.042981, -0.293762, -1.752461, 5.682633, -3.582633)
SW_C3 = (0.544, -0.39978, 0.025054, -6.714e-4)
SW_C4 = (1.3822, -0.77857, 0.062767, -0.0020322)
SW_C5 = (-1.5861, -0.31082, -0.083751, 0.0038915)
SW_C6 = (-0.4803, -0.082676, 0.0030302)
SW_GAMMA = (-2.273, 0.459)


def shapiro(values: np.ndarray) -> tuple[float, float]:
    """Shapiro–Wilk W and its p for 3 ≤ n ≤ 5000 values that are not all equal."""
    x = np.sort(np.asarray(values, dtype=float))
    x = x - np.asarray(values, dtype=float)[len(x) // 2]  # as scipy: a shift for precision
    n = len(x)
    coefficients = _sw_coefficients(n)
    half = len(coefficients)
    c = np.zeros(n)
    c[:half] = -coefficients
    c[n - half:] = coefficients[::-1]
    scaled = x / (x[-1] - x[0])
    ca, xa = c - c.mean(), scaled - scaled.mean()
    ssa, ssx, sax = (ca * ca).sum(), (xa * xa).sum(), (ca * xa).sum()
    root = math.sqrt(ssa * ssx)
    w1 = (root - sax) * (root + sax) / (ssa * ssx)  # 1 − W, without rounding W near 1
    w = 1.0 - w1
    if n == 3:  # exact
        return w, max(6.0 / math.pi * (math.asin(math.sqrt(w)) - math.asin(math.sqrt(0.75))), 0.0)
    y = math.log(w1)
    if n <= 11:
        gamma = polynomial.polyval(n, SW_GAMMA)
        if y >= gamma:
            return w, 1e-99
        y = -math.log(gamma - y)
        mean, sd = polynomial.polyval(n, SW_C3), math.exp(polynomial.polyval(n, SW_C4))
    else:
        log_n = math.log(n)
        mean, sd = polynomial.polyval(log_n, SW_C5), math.exp(polynomial.polyval(log_n, SW_C6))
    return w, float(ndtr(-(y - mean) / sd))


@functools.lru_cache(maxsize=64)
def _sw_coefficients(n: int) -> np.ndarray:
    """The positive half of the W coefficients a_1..a_{n/2} (Royston's approximation)."""
    if n == 3:
        return np.array([math.sqrt(0.5)])
    m = ndtri((np.arange(1, n // 2 + 1) - 0.375) / (n + 0.25))  # negative: lower half
    summ2 = 2.0 * (m * m).sum()
    root = math.sqrt(summ2)
    rsn = 1.0 / math.sqrt(n)
    a = -m / root
    a[0] = polynomial.polyval(rsn, SW_C1) - m[0] / root
    if n > 5:
        a[1] = -m[1] / root + polynomial.polyval(rsn, SW_C2)
        fac = math.sqrt((summ2 - 2 * m[0] ** 2 - 2 * m[1] ** 2)
                        / (1 - 2 * a[0] ** 2 - 2 * a[1] ** 2))
        a[2:] = -m[2:] / fac
    else:
        fac = math.sqrt((summ2 - 2 * m[0] ** 2) / (1 - 2 * a[0] ** 2))
        a[1:] = -m[1:] / fac
    return a
