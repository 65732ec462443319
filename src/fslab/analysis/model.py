"""Comparing targets: one model per comparison, on the ratio scale.

Performance effects are ratios ("xfs 1.8× ext4"), spread grows with the mean, and drift
of the machine moves every target of one iteration together. So, for each workload × op
× metric shared by k ≥ 2 targets (issue 13):

- Values are analysed as logarithms: a difference of mean logs is the log of a ratio of
  geometric means, the effect people read.
- Blocked (the default for fslab's own campaigns, where every target ran in every
  iteration, in shuffled order): each pair's log ratio is estimated from its per-
  iteration differences log a_i − log b_i, with a t interval on n − 1 df — a paired t
  on logs, i.e. the randomised-complete-block contrast of the two targets with their own
  residual variance. Drift between iterations cancels instead of counting as noise, and
  each pair keeps its own spread (a 6 ms btrfs never inflates ext4 vs xfs).
- Unblocked (imported data, or iterations that do not match across targets): Welch's t
  on the logs, unequal variances, Welch–Satterthwaite df.
- One family per comparison: Bonferroni over its m = k(k−1)/2 pairs. The adjusted p is
  min(1, m·p) and the interval is the (1 − α/m) t interval of the same estimate, so
  "the interval excludes 1" and "p_adj < α" are the same statement for every pair.
- The smallest ratio the data could have shown (minimum detectable effect): the ratio
  whose test at α/m has 80 % power at the pair's n and observed spread, from the
  noncentral t (statsmodels' TTestPower / TTestIndPower).

No pre-tests choose among methods: at 3-10 repetitions they have no power. Diagnostics
(the spread ratio of the targets' logs) are reported, not used as gates. Rank tests are
not used: with 3 values per target they cannot reach p < 0.05 at all.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from itertools import combinations

import numpy as np
from scipy import stats

ALPHA = 0.05
POWER = 0.80
BLOCKED = "paired t on log ratios (blocked by iteration), Bonferroni"
UNBLOCKED = "Welch t on log ratios, Bonferroni"
# Cliff's delta magnitude thresholds (Romano et al. 2006): a descriptive effect size.
CLIFF_THRESHOLDS = ((0.147, "negligible"), (0.33, "small"), (0.474, "medium"))


@dataclass(frozen=True)
class PairResult:
    """One pair a vs b of one comparison: ratio of geometric means a/b and its inference."""

    a: str
    b: str
    model: str
    n_a: int
    n_b: int
    df: float
    ratio: float
    ratio_ci_low: float
    ratio_ci_high: float
    t: float
    p_value: float  # unadjusted
    p_adj: float  # Bonferroni over the comparison's pairs
    significant: bool  # p_adj < ALPHA, which is "the interval excludes 1"
    mde_ratio: float  # smallest ratio detectable at 80 % power (≥ 1)
    sd_log_a: float
    sd_log_b: float
    noise: float  # the pair's run-to-run spread per target, on the log scale (≈ relative SD)
    cliffs_delta: float
    magnitude: str


@dataclass(frozen=True)
class Comparison:
    """The model used for one comparison, and why; its pairs."""

    model: str
    reason: str
    blocked: bool
    pairs: list[PairResult]
    spread_ratio: float  # largest / smallest SD of log values among targets (diagnostic)

    @property
    def p_value(self) -> float:
        """The family's global p (Bonferroni): the smallest adjusted pair p."""
        ps = [p.p_adj for p in self.pairs if p.p_adj == p.p_adj]
        return min(ps) if ps else math.nan

    @property
    def statistic(self) -> float:
        ts = [abs(p.t) for p in self.pairs if p.t == p.t]
        return max(ts) if ts else math.nan


def compare(groups: dict[str, dict[int, float]], blocked_allowed: bool = True,
            alpha: float = ALPHA) -> Comparison | str:
    """Compare targets: {target: {iteration: value}} → a Comparison, or why not (text).

    Values must be positive (ratios); a target needs 2 finite values."""
    data = {name: {i: float(v) for i, v in values.items() if np.isfinite(v)}
            for name, values in groups.items()}
    data = {name: values for name, values in data.items() if len(values) >= 2}
    if len(data) < 2:
        return "needs at least 2 targets with 2 or more observations each"
    everything = [v for values in data.values() for v in values.values()]
    if min(everything) <= 0:
        return "values of 0 or below cannot be compared as ratios"
    names = sorted(data)
    iterations = [set(data[name]) for name in names]
    blocked = blocked_allowed and all(s == iterations[0] for s in iterations)
    if blocked:
        reason = (f"the same {len(iterations[0])} iterations ran on every target: each pair "
                  "is compared within iterations (drift between iterations cancels)")
    elif blocked_allowed:
        reason = "the targets did not run the same iterations: unblocked"
    else:
        reason = "imported results: iterations are not known to be blocks, unblocked"
    logs = {name: np.log(np.array([data[name][i] for i in sorted(data[name])]))
            for name in names}
    sds = [float(np.std(v, ddof=1)) for v in logs.values()]
    positive = [s for s in sds if s > 0]
    spread = max(positive) / min(positive) if len(positive) >= 2 else math.nan
    m = len(names) * (len(names) - 1) // 2
    pairs = [_pair(a, b, data, logs, blocked, m, alpha) for a, b in combinations(names, 2)]
    return Comparison(BLOCKED if blocked else UNBLOCKED, reason, blocked, pairs, spread)


def _pair(a: str, b: str, data: dict[str, dict[int, float]], logs: dict[str, np.ndarray],
          blocked: bool, m: int, alpha: float) -> PairResult:
    x, y = logs[a], logs[b]
    if blocked:
        common = sorted(data[a])
        diff = np.log([data[a][i] for i in common]) - np.log([data[b][i] for i in common])
        n = len(diff)
        estimate = float(diff.mean())
        sd = float(diff.std(ddof=1))
        se = sd / math.sqrt(n)
        df = float(n - 1)
        mde_sd = _paired_mde_d(n, alpha / m) * sd
        noise = sd / math.sqrt(2)  # a difference of two runs has twice one run's variance
        model = BLOCKED
    else:
        va, vb = float(x.var(ddof=1)), float(y.var(ddof=1))
        se = math.sqrt(va / len(x) + vb / len(y))
        estimate = float(x.mean() - y.mean())
        df = _welch_df(va, vb, len(x), len(y))
        noise = math.sqrt((va + vb) / 2)
        mde_sd = _welch_mde_d(len(x), len(y), alpha / m) * noise
        model = UNBLOCKED
    if se > 0:
        t = estimate / se
        p = float(2 * stats.t.sf(abs(t), df))
        half = float(stats.t.ppf(1 - alpha / (2 * m), df)) * se
    else:  # constant differences: certainly equal, or certainly different
        t = 0.0 if estimate == 0 else math.copysign(math.inf, estimate)
        p = 1.0 if estimate == 0 else 0.0
        half = 0.0
    p_adj = min(1.0, m * p)
    delta = cliffs_delta(x, y)
    return PairResult(
        a, b, model, len(x), len(y), df, math.exp(estimate), math.exp(estimate - half),
        math.exp(estimate + half), t, p, p_adj, bool(p_adj < alpha),
        math.exp(mde_sd) if mde_sd == mde_sd else math.nan,
        float(x.std(ddof=1)), float(y.std(ddof=1)), noise, delta, magnitude(delta))


def _welch_df(va: float, vb: float, na: int, nb: int) -> float:
    """Welch–Satterthwaite degrees of freedom (n − 1 each when both spreads are 0)."""
    num = (va / na + vb / nb) ** 2
    den = (va / na) ** 2 / (na - 1) + (vb / nb) ** 2 / (nb - 1)
    return num / den if den > 0 else float(na + nb - 2)


@functools.lru_cache(maxsize=1024)
def _paired_mde_d(n: int, alpha: float) -> float:
    """Effect (in SDs of the differences) a paired t at `alpha` detects with 80 % power."""
    from statsmodels.stats.power import TTestPower

    try:
        return float(TTestPower().solve_power(nobs=n, alpha=alpha, power=POWER))
    except (ValueError, RuntimeError, ArithmeticError):
        return math.nan


@functools.lru_cache(maxsize=1024)
def _welch_mde_d(na: int, nb: int, alpha: float) -> float:
    """Effect (in pooled SDs) a two-sample t at `alpha` detects with 80 % power (the
    equal-variance approximation of Welch's power)."""
    from statsmodels.stats.power import TTestIndPower

    try:
        return float(TTestIndPower().solve_power(nobs1=na, ratio=nb / na, alpha=alpha,
                                                 power=POWER))
    except (ValueError, RuntimeError, ArithmeticError):
        return math.nan


def cliffs_delta(a: np.ndarray, b: np.ndarray) -> float:
    """Cliff's delta: P(a > b) − P(a < b) over all pairs (Cliff 1993)."""
    a, b = np.asarray(a, dtype=float), np.sort(np.asarray(b, dtype=float))
    if not len(a) or not len(b):
        return math.nan
    greater = np.searchsorted(b, a, side="left").sum()
    less = (len(b) - np.searchsorted(b, a, side="right")).sum()
    return float((greater - less) / (len(a) * len(b)))


def magnitude(delta: float) -> str:
    """Negligible / small / medium / large, after Romano et al. (2006)."""
    if math.isnan(delta):
        return ""
    for threshold, label in CLIFF_THRESHOLDS:
        if abs(delta) < threshold:
            return label
    return "large"


def certainty(p_adj: float) -> str:
    """One word for an adjusted p: how sure the verdict is."""
    if p_adj != p_adj:
        return "untested"
    if p_adj < 0.001:
        return "certain"
    if p_adj < 0.01:
        return "clear"
    if p_adj < ALPHA:
        return "likely"
    return "unclear"
