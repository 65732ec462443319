"""Pure statistics: arrays in, numbers out, no I/O."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
from scipy.special import stdtrit  # t quantile; scipy.stats costs a second to import

CONFIDENCE = 0.95


@dataclass(frozen=True)
class MeanCI:
    """Mean with its two-sided Student-t confidence interval."""

    n: int
    mean: float
    sd: float
    ci_low: float
    ci_high: float

    @property
    def half_width(self) -> float:
        return (self.ci_high - self.ci_low) / 2.0

    @property
    def relative_half_width(self) -> float:
        """Half-width as a share of |mean| (inf when the mean is 0, nan when n < 2)."""
        if math.isnan(self.half_width):
            return math.nan
        return self.half_width / abs(self.mean) if self.mean else math.inf


def geomean(values: Iterable[float]) -> float:
    """The geometric mean of the positive values (NaN when there is none): the centre
    every ratio of fslab is a ratio of."""
    logs = [math.log(v) for v in values if v > 0 and math.isfinite(v)]
    return math.exp(sum(logs) / len(logs)) if logs else math.nan


def mean_ci(values: np.ndarray | list[float], confidence: float = CONFIDENCE) -> MeanCI:
    """Student-t CI of the mean: mean ± t(1-α/2, n-1) · s/√n (e.g. Montgomery, DOE §2.4).

    With n < 2 the interval is undefined and returned as NaN, never as a zero-width band.
    """
    data = np.asarray(values, dtype=float)
    data = data[np.isfinite(data)]
    n = int(data.size)
    if n == 0:
        return MeanCI(0, math.nan, math.nan, math.nan, math.nan)
    mean = float(data.mean())
    if n < 2:
        return MeanCI(n, mean, math.nan, math.nan, math.nan)
    sd = float(data.std(ddof=1))
    half = float(stdtrit(n - 1, 0.5 + confidence / 2.0)) * sd / math.sqrt(n)
    return MeanCI(n, mean, sd, mean - half, mean + half)


# |x − median| / (1.4826 · MAD) above this flags an outlier (Iglewicz & Hoaglin 1993, 3.5).
MAD_OUTLIER_Z = 3.5


def mad_outliers(values: np.ndarray) -> np.ndarray:
    """Boolean mask of robust outliers by the median/MAD rule; nothing is dropped."""
    data = np.asarray(values, dtype=float)
    if not data.size:
        return np.zeros(0, dtype=bool)
    median = np.nanmedian(data)
    mad = 1.4826 * np.nanmedian(np.abs(data - median))
    if not mad:
        return np.zeros(len(data), dtype=bool)
    return np.abs(data - median) / mad > MAD_OUTLIER_Z


@dataclass(frozen=True)
class LogCI:
    """Geometric mean with the Student-t interval of the logs, mapped back."""

    n: int
    center: float
    ci_low: float
    ci_high: float

    @property
    def relative_half_width(self) -> float:
        """The interval's half-width as a factor: ±x means ×/÷ (1 + x) around the
        geometric mean (√(high/low) − 1); NaN when n < 2."""
        if math.isnan(self.ci_low) or self.ci_low <= 0:
            return math.nan
        return math.sqrt(self.ci_high / self.ci_low) - 1


def log_ci(values: np.ndarray | list[float], confidence: float = CONFIDENCE) -> LogCI:
    """Geometric mean and t interval on logs: exp(mean(log x) ± t·sd(log x)/√n) — the
    interval of the median of a log-normal (Land 1972 for the mean's differs); the scale
    every comparison of fslab uses. Only positive finite values count (n says how many)."""
    data = np.asarray(values, dtype=float)
    logs = np.log(data[np.isfinite(data) & (data > 0)])
    n = len(logs)
    center, low, high = log_ci_of(np.array([n]), np.array([logs.mean() if n else math.nan]),
                                  np.array([logs.std(ddof=1) if n > 1 else math.nan]),
                                  confidence)
    return LogCI(n, float(center[0]), float(low[0]), float(high[0]))


def log_ci_of(n: np.ndarray, mean_log: np.ndarray, sd_log: np.ndarray,
              confidence: float = CONFIDENCE) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """log_ci for many cells at once from each one's count, mean and SD of logs:
    (geometric means, lows, highs), NaN bounds where n < 2 (the history's points)."""
    n = np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        half = np.where(n >= 2, stdtrit(np.maximum(n - 1, 1), 0.5 + confidence / 2)
                        * np.asarray(sd_log, dtype=float) / np.sqrt(n), np.nan)
    mean_log = np.where(n >= 1, np.asarray(mean_log, dtype=float), np.nan)
    return np.exp(mean_log), np.exp(mean_log - half), np.exp(mean_log + half)
