"""Change points in a series of campaigns, each point a campaign's iterations on the log
scale. Pure functions: arrays in, changes out.

Method (stated in METHOD, printed with the results):
- Where: the split of the campaigns' log means that most reduces their squared error,
  found by ruptures (binary segmentation, L2 cost, segments of one campaign allowed, so
  the newest campaign alone can be the change).
- How sure: the split's t statistic uses every campaign's iterations: the pooled
  within-campaign variance, plus a between-campaign variance estimated from the campaign
  means around their segments (two runs of one campaign file on one machine differ by
  more than their iterations do), with Hartung–Knapp's standard error. Its p-value is
  the share of series simulated without a change (Gaussian on the log scale, the
  variances estimated as if there were none, the same iteration counts) whose best
  split — found the same way — has a larger |t|, simulated until 20 of them do
  (Besag–Clifford's sequential Monte Carlo p: a series far from a change costs a few
  dozen simulations, not thousands). Searching for the
  best split is thus paid for, which a plain t-test at the chosen split would not do.
- Several changes: binary segmentation, each side searched again at the same level
  (E-divisive's rule); several series: the first change of every series is adjusted by
  Benjamini–Hochberg (false discovery rate), and a later change's p-value is never
  below its series'.
- The interval of a change (after/before) is the t interval of the difference between
  the segments' weighted log means on either side: Hartung–Knapp's standard error at
  campaigns − 2 degrees of freedom where there are three campaigns or more (their spread
  beyond their iterations counts), else the iterations' own at their degrees of freedom.
- Each campaign is a sitting (issue 58): a point moves by its sitting's own effect, which
  two campaigns' iterations cannot show. What is known of it before (`Points.prior`: how
  far a level moves between sittings on this machine, from the catalogue's sittings of
  its campaigns, else the stated prior; history/sittings.level_spread) is pooled with the
  series' own moment estimate as a scaled inverse-χ² update, (ν₀ τ₀² + d τ̂²)/(ν₀ + d) on
  ν₀ + d degrees of freedom (d = campaigns − 2 around a split, − 1 without one), so two
  campaigns are judged against a repeat sitting's spread, never against their iterations
  alone; the null series are simulated with the same between variance.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special  # scipy.stats and statsmodels: 0.5 s and 1.1 s to import

from fslab.analysis.sittings.repeat import satterthwaite

METHOD = ("change points: ruptures binary segmentation (L2) on campaign log means; each "
          "split tested by the t of its segments' log means (iterations pooled within "
          "campaigns, the between-campaign variance of a sitting known before — the "
          "machine's history, else a stated prior — pooled with the series' own estimate), "
          "p from series simulated without a change; series' first changes adjusted by "
          "Benjamini–Hochberg")
ALPHA = 0.05
MIN_SIMULATIONS = 1999
# Sequential Monte Carlo (split_p): stop at this many exceedances (Besag & Clifford's h),
# simulating in batches that start at FIRST_BATCH and double.
EXCEEDANCES = 20
FIRST_BATCH = 32
BATCH_VALUES = 4_000_000  # simulated means held at once (32 MB)
MAX_SIMULATIONS = 100_000
# A split that nothing simulated reaches gets p = 1 / (n + 1): n just large enough that
# this is below the smallest Benjamini-Hochberg threshold (alpha / series), so such a
# series can always be called. A Monte Carlo p is valid at any n (Besag & Clifford); a
# larger n would only sharpen p-values near a threshold, at a cost of seconds per series
# of 1,000 campaigns (benchmarks/history_scale).
EXCEEDANCES_FOR_RESOLUTION = 1


@dataclass(frozen=True)
class Change:
    """A change between point `index - 1` and `index` of a series."""

    index: int
    ratio: float  # after / before, geometric means of the segments either side
    ratio_ci_low: float
    ratio_ci_high: float
    p_value: float  # after adjustment (see module docstring)
    p_raw: float


@dataclass(frozen=True)
class Points:
    """A series' points: each one campaign's (or label value's) log values."""

    means: np.ndarray  # log means
    counts: np.ndarray  # iterations per point
    within_ss: float  # sum of squared deviations from each point's mean
    within_df: int
    prior: float = 0.0  # a point's between-sitting variance known before (log scale)
    prior_df: float = 0.0  # its degrees of freedom (0: none)

    @classmethod
    def of(cls, groups: list[np.ndarray]) -> Points:
        means = np.array([g.mean() for g in groups])
        counts = np.array([len(g) for g in groups], dtype=float)
        ss = float(sum(((g - g.mean()) ** 2).sum() for g in groups))
        return cls(means, counts, ss, int(sum(len(g) - 1 for g in groups)))

    def part(self, start: int, end: int) -> Points:
        """The points in [start, end), with the series' own within-campaign variance."""
        return Points(self.means[start:end], self.counts[start:end], self.within_ss,
                      self.within_df, self.prior, self.prior_df)

    @property
    def within_var(self) -> float:
        return self.within_ss / self.within_df if self.within_df > 0 else 0.0


def best_split(means: np.ndarray) -> int:
    """The split (points before it) that most reduces the L2 cost: ruptures' Binseg
    answer (L2 cost, segments of one point allowed), computed by best_splits — ruptures
    takes O(k²) (a variance per candidate): 37 s for 100 series of 1,000 campaigns, past
    the 5 s goal (benchmarks/history_scale); tests/history/test_history.py holds the two equal
    over a randomised sweep."""
    if len(means) < 3:
        return 1
    return int(best_splits(np.asarray(means, dtype=float).reshape(1, -1))[0])


def best_splits(means: np.ndarray) -> np.ndarray:
    """best_split of every row at once (simulations; held equal to ruptures by a test):
    the split maximising tau (K - tau) / K (left mean - right mean)^2."""
    k = means.shape[1]
    cumulative = np.cumsum(means, axis=1)[:, :-1]
    tau = np.arange(1, k)
    left = cumulative / tau
    right = (means.sum(axis=1, keepdims=True) - cumulative) / (k - tau)
    gain = tau * (k - tau) / k * (left - right) ** 2
    return np.argmax(gain, axis=1) + 1


def split_t(means: np.ndarray, counts: np.ndarray, within_var: np.ndarray | float,
            split: np.ndarray, prior: tuple[float, float] = (0.0, 0.0)
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per row: (|t|, difference right - left, its standard error, between variance) of
    the split. Segment means are weighted by 1 / (within / n + between), the between
    variance a moment estimate around the two segments pooled with `prior` (a point's
    between-sitting variance known before, on its df: module docstring); with three
    points or more the
    standard error is Hartung–Knapp's (scaled by the weighted residual spread, never
    below the model's), so a between variance estimated too small does not make the
    interval too narrow."""
    means = np.atleast_2d(means)
    rows, k = means.shape
    within = np.broadcast_to(np.asarray(within_var, dtype=float), (rows,))
    left = np.arange(k)[None, :] < np.asarray(split).reshape(-1, 1)

    def seg_means(weights: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                 np.ndarray]:
        w_left, w_right = (weights * left).sum(axis=1), (weights * ~left).sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            m_left = (weights * means * left).sum(axis=1) / w_left
            m_right = (weights * means * ~left).sum(axis=1) / w_right
        return m_left, m_right, w_left, w_right

    between = np.zeros(rows)
    if k > 2:
        m_left, m_right, _, _ = seg_means(np.ones_like(means))
        centred = means - np.where(left, m_left[:, None], m_right[:, None])
        between = np.maximum(0.0, (centred ** 2).sum(axis=1) / (k - 2)
                             - (within[:, None] / counts).mean(axis=1))
    between = pooled_between(between, k - 2, prior)
    variance = within[:, None] / counts + between[:, None]
    flat = ~(variance > 0).all(axis=1)  # no spread at all (identical values)
    weights = 1.0 / np.where(variance > 0, variance, 1.0)
    m_left, m_right, w_left, w_right = seg_means(weights)
    se2 = 1.0 / w_left + 1.0 / w_right
    if k > 2:
        centred = means - np.where(left, m_left[:, None], m_right[:, None])
        q = (weights * centred ** 2).sum(axis=1) / (k - 2)
        se2 = se2 * np.maximum(1.0, q)
    diff = m_right - m_left
    se = np.sqrt(se2)
    t = np.abs(diff) / se
    if flat.any():
        same = np.isclose(means.max(axis=1), means.min(axis=1))
        t = np.where(flat, np.where(same, 0.0, np.inf), t)
        se = np.where(flat, 0.0, se)
    return t, diff, se, between


def pooled_between(estimate: np.ndarray, df: int, prior: tuple[float, float]
                   ) -> np.ndarray:
    """The series' moment estimate of the between variance (on `df`) pooled with the
    variance known before (value, its df): (ν₀ τ₀² + d τ̂²)/(ν₀ + d)."""
    value, weight = prior
    d = max(df, 0)
    if weight <= 0 or d + weight <= 0:
        return estimate
    return (weight * value + d * estimate) / (weight + d)


def between_without_change(points: Points) -> float:
    """The between-campaign variance if no change happened (all points one segment),
    pooled with what is known before."""
    k = len(points.means)
    own = 0.0 if k < 2 else max(0.0, float(np.var(points.means, ddof=1)
                                           - np.mean(points.within_var / points.counts)))
    return float(pooled_between(np.array([own]), k - 1, (points.prior, points.prior_df))[0])


def split_p(points: Points, t_observed: float, rng: np.random.Generator,
            simulations: int) -> float:
    """The Monte Carlo p of the observed split: change-free series are simulated (same
    counts, the variances estimated as if no change happened) and their best split's |t|
    compared with the observed one, in batches, stopping as soon as EXCEEDANCES of them
    reach it (Besag & Clifford 1991, 'Sequential Monte Carlo p-values', Biometrika 78:
    p = h / l after l simulations) or after `simulations` (p = (k + 1) / (n + 1)). Both
    are valid p-values; a series far from any change stops after a few dozen."""
    if not math.isfinite(t_observed):
        return 1.0 / (simulations + 1)
    k = len(points.means)
    within = points.within_var
    sd = np.sqrt(between_without_change(points) + within / points.counts)
    done = exceeded = 0
    batch = FIRST_BATCH
    while done < simulations:
        size = min(batch, simulations - done)
        # single precision: half the memory traffic; |t| of a simulated series is read to
        # well within the Monte Carlo error of the p-value (tests/history/test_history.py)
        means = rng.standard_normal(size=(size, k), dtype=np.float32) * sd.astype(np.float32)
        if points.within_df > 0:
            within_sim = within * rng.chisquare(points.within_df, size) / points.within_df
        else:
            within_sim = np.full(size, within)
        splits = best_splits(means) if k > 2 else np.ones(size, dtype=int)
        t_sim, *_ = split_t(means, points.counts, within_sim, splits,
                            (points.prior, points.prior_df))
        beyond = np.flatnonzero(t_sim >= t_observed * (1 - 1e-12))
        if exceeded + len(beyond) >= EXCEEDANCES:  # the h-th exceedance: stop there
            return EXCEEDANCES / (done + int(beyond[EXCEEDANCES - exceeded - 1]) + 1)
        exceeded += len(beyond)
        done += size
        batch = min(batch * 2, max(FIRST_BATCH, BATCH_VALUES // k))
    return (exceeded + 1) / (simulations + 1)


@dataclass(frozen=True)
class _Found:
    index: int
    p_raw: float


def _segment(points: Points, start: int, end: int, alpha: float, rng: np.random.Generator,
             simulations: int, first: bool, found: list[_Found]) -> None:
    """Binary segmentation of [start, end): test the best split, recurse while it holds
    (the first test's p is kept whatever it is: the series' adjustment needs it)."""
    if end - start < 2:
        return
    part = points.part(start, end)
    split = best_split(part.means)
    t, *_ = split_t(part.means, part.counts, part.within_var, np.array([split]),
                    (part.prior, part.prior_df))
    p = split_p(part, float(t[0]), rng, simulations)
    if p > alpha and not first:
        return
    found.append(_Found(start + split, p))
    if p <= alpha:
        _segment(points, start, start + split, alpha, rng, simulations, False, found)
        _segment(points, start + split, end, alpha, rng, simulations, False, found)


def points_of(series: Points | list[np.ndarray]) -> Points:
    """A series as Points: given so (history/series.py summarises each point's logs), or
    as each point's log values."""
    if isinstance(series, Points):
        return series
    return Points.of([np.asarray(g, dtype=float) for g in series if len(g)])


def candidate_changes(series: Points | list[np.ndarray], alpha: float = ALPHA,
                      simulations: int = MIN_SIMULATIONS,
                      seed: int = 0) -> tuple[float, list[_Found]]:
    """(p of the series' strongest split, every split found at `alpha`, in order)."""
    points = points_of(series)
    if len(points.means) < 2:
        return 1.0, []
    found: list[_Found] = []
    _segment(points, 0, len(points.means), alpha, np.random.default_rng(seed), simulations,
             True, found)
    first = found[0].p_raw if found else 1.0
    return first, sorted(found, key=lambda f: f.index)


def interval(series: Points | list[np.ndarray], before: tuple[int, int],
             after: tuple[int, int], level: float = 0.95) -> tuple[float, float, float]:
    """(ratio, low, high) of the geometric mean of points `after` over `before` (index
    ranges), the t interval described in the module docstring."""
    points = points_of(series)
    lo, hi = before[0], after[1]
    part = points.part(lo, hi)
    _, diff, se, between = split_t(part.means, part.counts, part.within_var,
                                   np.array([before[1] - lo]), (part.prior, part.prior_df))
    k = hi - lo
    df = float(points.within_df if k <= 2 else k - 2)
    if points.prior_df > 0:  # the between part rests on the prior's df and the series'
        within = part.within_var * float((1 / part.counts[:before[1] - lo]).sum() / (
            before[1] - lo) ** 2 + (1 / part.counts[before[1] - lo:]).sum() / (
            hi - before[1]) ** 2)
        shared = float(between[0]) * (1 / (before[1] - lo) + 1 / (hi - before[1]))
        df = satterthwaite([(shared, points.prior_df + max(k - 2, 0)),
                            (within, float(points.within_df))])
    q = float(special.stdtrit(min(max(df, 1), 1e6), 0.5 + level / 2))
    d, s = float(diff[0]), float(se[0])
    return _exp(d), _exp(d - q * s), _exp(d + q * s)


def _exp(x: float) -> float:
    """exp that answers 0 or inf instead of overflowing."""
    try:
        return math.exp(x)
    except OverflowError:
        return math.inf if x > 0 else 0.0


def benjamini_hochberg(p: list[float]) -> list[float]:
    """Benjamini–Hochberg adjusted p-values: p_(i) · m / i, made monotone from the
    largest down and capped at 1 (Benjamini & Hochberg 1995). Written out because
    importing statsmodels' fdr_bh costs 1.1 s of `fslab history changes`'s 5 s budget
    (benchmarks/history_scale); tests/history/test_history.py holds it to statsmodels."""
    if not p:
        return []
    values = np.asarray(p, dtype=float)
    order = np.argsort(values)
    m = len(values)
    scaled = values[order] * m / np.arange(1, m + 1)
    adjusted = np.minimum(1.0, np.minimum.accumulate(scaled[::-1])[::-1])
    out = np.empty(m)
    out[order] = adjusted
    return [float(x) for x in out]


def simulations_for(series: int, alpha: float = ALPHA) -> int:
    """The most simulations one split may take: enough that the smallest BH threshold
    (alpha / series) can be resolved by EXCEEDANCES_FOR_RESOLUTION exceedances; a split
    far from significance stops long before (split_p)."""
    need = math.ceil(EXCEEDANCES_FOR_RESOLUTION * series / alpha)
    return int(min(MAX_SIMULATIONS, max(MIN_SIMULATIONS, need)))


def detect(series: list[Points] | list[list[np.ndarray]], alpha: float = ALPHA,
           seed: int = 0) -> list[list[Change]]:
    """The changes of every series (each its Points, or a list of points' log values),
    with error control across series as the module docstring says."""
    simulations = simulations_for(len(series), alpha)
    firsts, founds = [], []
    summaries = [points_of(one) for one in series]
    for i, points in enumerate(summaries):
        first, found = candidate_changes(points, alpha, simulations, seed + i)
        firsts.append(first)
        founds.append(found)
    adjusted = benjamini_hochberg(firsts)
    result: list[list[Change]] = []
    for points, found, p_series in zip(summaries, founds, adjusted, strict=True):
        changes: list[Change] = []
        if p_series <= alpha:
            cuts = [0, *[f.index for f in found], len(points.means)]
            for j, f in enumerate(found):
                ratio, low, high = interval(points, (cuts[j], cuts[j + 1]),
                                            (cuts[j + 1], cuts[j + 2]))
                changes.append(Change(f.index, ratio, low, high, max(p_series, f.p_raw),
                                      f.p_raw))
        result.append(changes)
    return result
