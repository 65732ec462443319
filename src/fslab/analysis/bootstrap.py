"""The percentile bootstrap interval of a cell's median (Efron & Tibshirani 1993, §13),
with a fixed seed, so the same data always give the same interval.

Not resampled value by value: the median of a resample of n values is one (or the mean
of two) of its order statistics, and the k-th smallest of a resample is x_(⌈n·U⌉) where
U, the k-th smallest of n uniforms, is Beta(k, n + 1 − k) — so a bootstrap median costs
one Beta draw, not a sort of n values (the same distribution, drawn exactly; a test holds
it to a plain resampling bootstrap).
"""

from __future__ import annotations

import functools
import math

import numpy as np

MEDIAN_DRAWS = 20000  # bootstrap medians, drawn exactly, once per n (cached)
BOOTSTRAP_SEED = 20261122  # fixed: the same data always give the same intervals
CONFIDENCE = 0.95


def median_ci(values: np.ndarray | list[float],
              confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Percentile bootstrap CI of the median; NaN below n = 3."""
    data = np.asarray(values, dtype=float)
    data = np.sort(data[np.isfinite(data)])
    n = len(data)
    if n < 3:
        return math.nan, math.nan
    tail = (1 - confidence) / 2 * 100
    if n % 2:  # odd n: the median is one order statistic, and monotone in its rank
        low, high = _odd_median_ranks(n, tail)
        return float(data[low]), float(data[high])
    first, following = _median_order_indices(n)
    medians = (data[first] + data[following]) / 2.0
    # The bootstrap median takes few distinct values: quantiles by the inverted CDF are
    # values it takes, where interpolating would place an end between two of them.
    low, high = np.percentile(medians, [tail, 100 - tail], method="inverted_cdf")
    return float(low), float(high)


@functools.lru_cache(maxsize=256)
def _odd_median_ranks(n: int, tail: float) -> tuple[int, int]:
    first, _ = _median_order_indices(n)
    low, high = np.percentile(first, [tail, 100 - tail], method="inverted_cdf")
    return int(low), int(high)


@functools.lru_cache(maxsize=256)
def _median_order_indices(n: int) -> tuple[np.ndarray, np.ndarray | None]:
    """Which order statistics the bootstrap medians of n sorted values are, drawn once per
    n (the draws depend on n and the seed only): for odd n the k-th smallest, for even n
    the k-th and (k+1)-th, k = ⌊(n+1)/2⌋."""
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    k = (n + 1) // 2
    u = rng.beta(k, n + 1 - k, MEDIAN_DRAWS)
    if n % 2:
        return _order_index(u, n), None
    # Given the k-th smallest uniform u, the next one is u + (1 − u)·Beta(1, n − k).
    following = u + (1.0 - u) * rng.beta(1, n - k, MEDIAN_DRAWS)
    return _order_index(u, n), _order_index(following, n)


def _order_index(u: np.ndarray, n: int) -> np.ndarray:
    """Index into the sorted data of the value a uniform u picks when resampling."""
    return np.clip(np.ceil(u * n).astype(int) - 1, 0, n - 1)
