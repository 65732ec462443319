"""Comparing targets: one model per comparison, on the ratio scale.

Performance effects are ratios ("xfs 1.8× ext4"), spread grows with the mean, and drift
of the machine moves every target of one iteration together. So, for each workload × op
× metric shared by k ≥ 2 targets:

- Values are analysed as logarithms: a difference of mean logs is the log of a ratio of
  geometric means, the effect people read.
- Blocked (the default for fslab's own campaigns, where targets run in the same
  iterations, in shuffled order): each pair's log ratio is estimated from its per-
  iteration differences log a_i − log b_i over the iterations both targets ran, with a
  t interval on n − 1 df — a paired t on logs, i.e. the randomised-complete-block
  contrast of the two targets with their own residual variance. Drift between
  iterations cancels instead of counting as noise, each pair keeps its own spread (a
  6 ms btrfs never inflates ext4 vs xfs), and a target that missed an iteration changes
  only its own pairs.
- Unblocked (imported data, or pairs without 2 common iterations): Welch's t on the
  logs, unequal variances, Welch–Satterthwaite df.
- One family per question set the caller names (fslab: every primary pair of the whole
  campaign; analysis.pairs.questions): Bonferroni over its m pairs. The adjusted p is
  min(1, m·p) and the interval is the (1 − α/m) t interval of the same estimate, so
  "the interval excludes 1" and "p_adj < α" are the same statement for every pair.
- The smallest ratio the data could have shown (minimum detectable effect): the ratio
  whose test at α/m has 80 % power at the pair's n and observed spread, solved on the
  noncentral t (analysis.pairs.power) and checked for the power it reaches.
- Every iteration the same value: the spread is 0 and nothing can be inferred; the pair
  says "not estimable" instead of a zero-width interval.

No pre-tests choose among methods: at 3-10 repetitions they have no power. Diagnostics
(the spread ratio of the targets' logs) are reported, not used as gates. Rank tests are
not used: with 3 values per target they cannot reach p < 0.05 at all.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

import numpy as np
from scipy import special  # scipy.stats costs a second to import (analysis/cells/stats.py)

from fslab.analysis.pairs.power import detectable_noncentrality, welch_detectable_log
from fslab.core.metrics import HIGHER
from fslab.core.pair import Pair

ALPHA = 0.05
BLOCKED = "paired t on log ratios (blocked by iteration), Bonferroni"
UNBLOCKED = "Welch t on log ratios, Bonferroni"
MIXED = "paired t where a pair shares iterations, else Welch t, on log ratios, Bonferroni"
# Cliff's delta magnitude thresholds (Romano et al. 2006): a descriptive effect size.
CLIFF_THRESHOLDS = ((0.147, "negligible"), (0.33, "small"), (0.474, "medium"))
NOT_ESTIMABLE = "not estimable (every iteration gave the same value)"
UNBOUNDED = ("interval [0, ∞): too few iterations for so many questions at this spread "
             "(the adjusted interval's bound overflows)")

# What this step does, in one statement the report prints (stats/methods.csv).
METHOD = ('Between targets, on the ratio scale: values are compared as logarithms, so every '
          "effect is a ratio of geometric means ('xfs 1.8× ext4'). Each pair is compared within "
          "the iterations both targets ran (a paired t on the log ratios, the block design's "
          'contrast): a slow or fast moment of the machine moves both targets and cancels '
          'instead of counting as noise, and each pair keeps its own spread. Imported results: '
          "Welch's t on the logs. Every primary pair of the campaign is one family, Bonferroni- "
          "adjusted together; the interval is the matching simultaneous one, so 'the interval "
          "excludes 1' and 'evidence of a difference' always agree.")


@dataclass(frozen=True)
class Comparison:
    """The model used for one comparison, and why; its pairs; targets left out and why."""

    model: str
    reason: str
    blocked: bool
    pairs: list[Pair]  # undecided (pair.decide decides them)
    spread_ratio: float  # largest / smallest SD of log values among targets (diagnostic)
    dropped: dict[str, str] = field(default_factory=dict)

    @property
    def p_value(self) -> float:
        """The family's global p (Bonferroni): the smallest adjusted pair p."""
        ps = [p.p_adj for p in self.pairs if p.p_adj == p.p_adj]
        return min(ps) if ps else math.nan

    @property
    def statistic(self) -> float:
        ts = [abs(p.t) for p in self.pairs if p.t == p.t]
        return max(ts) if ts else math.nan


def usable(groups: dict[str, dict[int, float]]) -> tuple[dict[str, dict[int, float]],
                                                          dict[str, str]]:
    """The targets a comparison can use (2 or more finite values), and why others cannot."""
    data: dict[str, dict[int, float]] = {}
    dropped: dict[str, str] = {}
    for name, values in groups.items():
        finite = {i: float(v) for i, v in values.items() if math.isfinite(v)}
        if len(finite) >= 2:
            data[name] = finite
        else:
            dropped[name] = f"{len(finite)} value{'s' * (len(finite) != 1)}, needs 2"
    return data, dropped


IMPORTED = "imported results: iterations are not known to be blocks"


def compare(groups: dict[str, dict[int, float]], blocked_allowed: bool = True,
            alpha: float = ALPHA, family: int | None = None,
            not_blocks: str = IMPORTED,
            weights: dict[int, float] | None = None, better: str = HIGHER) -> Comparison | str:
    """Compare targets: {target: {iteration: value}} → a Comparison, or why not (text).

    Values must be positive (ratios); a target needs 2 finite values (the others are
    named in `dropped`). `family` is the number of pairs the Bonferroni adjustment runs
    over (the caller's family, e.g. every primary pair of a campaign); by default the
    pairs of this comparison. Each pair is paired on the iterations both targets ran
    (when there are 2 or more and blocking is allowed), so one target's missing
    iteration changes only its own pairs; where it is not, `not_blocks` says why.
    `weights` ({iteration: weight}, a run's precision relative to the campaign's own:
    --resolve's rounds of another run length) weight a paired pair's iterations;
    `better`, the metric's direction, goes into each record (analysis.pairs.pair.Pair)."""
    data, dropped = usable(groups)
    if len(data) < 2:
        left = f" (left out: {_named(dropped)})" if dropped else ""
        return f"needs at least 2 targets with 2 or more observations each{left}"
    everything = [v for values in data.values() for v in values.values()]
    if min(everything) <= 0:
        return "values of 0 or below cannot be compared as ratios"
    names = sorted(data)
    logs = {name: np.log(np.array([data[name][i] for i in sorted(data[name])]))
            for name in names}
    sds = [float(np.std(v, ddof=1)) for v in logs.values()]
    positive = [s for s in sds if s > 0]
    spread = max(positive) / min(positive) if len(positive) >= 2 else math.nan
    m = family or len(names) * (len(names) - 1) // 2
    pairs = [_pair(a, b, data, logs, blocked_allowed, m, alpha, weights, better)
             for a, b in combinations(names, 2)]
    blocked = all(p.test == BLOCKED for p in pairs)
    unblocked = all(p.test == UNBLOCKED for p in pairs)
    iterations = [set(data[name]) for name in names]
    if blocked and all(s == iterations[0] for s in iterations):
        model, reason = BLOCKED, (
            f"the same {len(iterations[0])} iterations ran on every target: each pair "
            "is compared within iterations (drift between iterations cancels)")
    elif blocked:
        model, reason = BLOCKED, ("targets ran different iterations: each pair is compared "
                                  "within the iterations both ran")
    elif unblocked:
        model, reason = UNBLOCKED, (
            f"{not_blocks}, unblocked"
            if not blocked_allowed else "no two targets ran 2 iterations in common: unblocked")
    else:
        model, reason = MIXED, ("pairs that ran 2 or more common iterations are compared "
                                "within them; the others unblocked")
    if dropped:
        reason += f"; left out: {_named(dropped)}"
    return Comparison(model, reason, blocked, pairs, spread, dropped)


def _named(dropped: dict[str, str]) -> str:
    return ", ".join(f"{name} ({why})" for name, why in sorted(dropped.items()))


def _pair(a: str, b: str, data: dict[str, dict[int, float]], logs: dict[str, np.ndarray],
          blocked_allowed: bool, m: int, alpha: float,
          weights: dict[int, float] | None = None, better: str = HIGHER) -> Pair:
    x, y = logs[a], logs[b]
    common = sorted(set(data[a]) & set(data[b]))
    level = alpha / m
    if blocked_allowed and len(common) >= 2:
        diff = np.log([data[a][i] for i in common]) - np.log([data[b][i] for i in common])
        n = len(diff)
        w = np.array([(weights or {}).get(i, 1.0) for i in common])
        estimate, sd, se = weighted_mean(diff, w)
        df = float(n - 1)
        mde_log = detectable_noncentrality(df, level) * se
        noise = sd / math.sqrt(2)  # a difference of two runs has twice one run's variance
        model = BLOCKED
    else:
        va, vb = float(x.var(ddof=1)), float(y.var(ddof=1))
        se = math.sqrt(va / len(x) + vb / len(y))
        estimate = float(x.mean() - y.mean())
        df = _welch_df(va, vb, len(x), len(y))
        noise = math.sqrt((va + vb) / 2)
        # the ratio Welch's test itself finds 4 times in 5 (its df and standard error
        # estimated, as they will be): analysis.pairs.power.welch_detectable_log
        mde_log = welch_detectable_log(va, vb, len(x), len(y), level)
        model = UNBLOCKED
        common = []
    t, p, low, high = t_inference(estimate, se, df, level)
    note = "" if se > 0 else NOT_ESTIMABLE
    ratio_low, ratio_high = ratio_exp(low), ratio_exp(high)
    if not note and (math.isinf(ratio_high) or ratio_low == 0.0):
        ratio_low, ratio_high, note = 0.0, math.inf, UNBOUNDED
    p_adj = min(1.0, m * p) if p == p else math.nan
    delta = cliffs_delta(x, y)
    return Pair(
        a=a, b=b, test=model, n_a=len(x), n_b=len(y), df=df, ratio=ratio_exp(estimate),
        ratio_ci_low=ratio_low, ratio_ci_high=ratio_high, se_log=se, t=t, p_value=p,
        p_adj=p_adj, alpha=level, family=m, significant=bool(p_adj < alpha),
        mde_ratio=ratio_exp(mde_log) if mde_log == mde_log and se > 0 else math.nan,
        sd_log_a=float(x.std(ddof=1)), sd_log_b=float(y.std(ddof=1)), noise=noise,
        cliffs_delta=delta, magnitude=magnitude(delta), n_pairs=len(common), note=note,
        better=better)


def weighted_mean(values: np.ndarray, weights: np.ndarray) -> tuple[float, float, float]:
    """(mean, SD of one weight-1 value, standard error) of values whose variances are
    inversely proportional to `weights`, their common scale estimated from the data (the
    weighted mean with unknown scale: Σw(x − x̄)²/(n − 1) per weight 1, se = that over
    Σw, on n − 1 df). Equal weights: the mean, its SD and SD/√n."""
    total = float(weights.sum())
    mean = float((weights * values).sum() / total)
    scale = float((weights * (values - mean) ** 2).sum() / (len(values) - 1))
    sd = math.sqrt(scale * len(values) / total)  # at the average weight: the plain SD
    return mean, sd, math.sqrt(scale / total)


def ratio_exp(log_value: float) -> float:
    """exp of a log ratio, ∞ (or 0) where it overflows: an interval this wide says
    nothing, and says so (UNBOUNDED), instead of ending the analysis."""
    try:
        return math.exp(log_value)
    except OverflowError:
        return math.inf


def t_inference(estimate: Any, se: Any, df: Any, level: float) -> tuple[Any, Any, Any, Any]:
    """(t, two-sided p, interval low, high) of a t statistic at per-pair level `level`
    (the interval is the 1 − level one, so it excludes 0 exactly when p < level).

    Works on numbers or numpy arrays alike (the simulations in the tests call it on
    thousands of replicates at once); a zero standard error gives NaN (not estimable),
    never a zero-width interval."""
    estimate, se, df = (np.asarray(v, dtype=float) for v in (estimate, se, df))
    with np.errstate(divide="ignore", invalid="ignore"):
        ok = se > 0
        t = np.where(ok, estimate / np.where(ok, se, 1.0), np.nan)
        p = np.where(ok, 2 * special.stdtr(df, -np.abs(t)), np.nan)
        half = np.where(ok, -special.stdtrit(df, level / 2) * se, np.nan)
    out = (t, p, estimate - half, estimate + half)
    if out[0].ndim == 0:
        return tuple(float(v) for v in out)  # type: ignore[return-value]
    return out


def _welch_df(va: float, vb: float, na: int, nb: int) -> float:
    """Welch–Satterthwaite degrees of freedom (n − 1 each when both spreads are 0)."""
    num = (va / na + vb / nb) ** 2
    den = (va / na) ** 2 / (na - 1) + (vb / nb) ** 2 / (nb - 1)
    return num / den if den > 0 else float(na + nb - 2)


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
