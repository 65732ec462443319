"""Comparing file systems: assumption checks, the omnibus test they allow, post-hoc pairs,
effect sizes. Pure functions: arrays in, results out.

Choice of test (recorded with its reason for every comparison):
- residuals normal (Shapiro–Wilk on per-group standardised residuals) and variances
  equal (Brown–Forsythe, i.e. Levene on medians): one-way ANOVA, then Tukey HSD;
- normal but unequal variances: Welch's ANOVA, then Games–Howell;
- otherwise: Kruskal–Wallis, then Dunn's test with Holm correction.
Tukey HSD and Games–Howell control the family-wise error themselves; their p is reported
as p_adj. Where the same iterations ran on every target, a Wilcoxon signed-rank test on
the pairs is added (Holm-adjusted over the pairs).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import combinations

import numpy as np

ALPHA = 0.05
SHAPIRO_MAX_N = 5000  # scipy: "for N > 5000 the p-value may not be accurate"
BOOTSTRAP_RESAMPLES = 1000  # percentile bootstrap; ±1 % of the interval width at 95 %
BOOTSTRAP_SEED = 20261122  # fixed: the same data always give the same intervals
# Cliff's delta magnitude thresholds (Romano et al. 2006).
CLIFF_THRESHOLDS = ((0.147, "negligible"), (0.33, "small"), (0.474, "medium"))


@dataclass(frozen=True)
class Omnibus:
    """The test chosen for one comparison, its result and why it was chosen."""

    test: str
    statistic: float
    p_value: float
    reason: str
    posthoc: str


@dataclass(frozen=True)
class Pair:
    """One pairwise comparison a vs b."""

    a: str
    b: str
    test: str
    p_value: float
    p_adj: float
    ratio: float  # mean(a) / mean(b)
    ratio_ci_low: float
    ratio_ci_high: float
    cliffs_delta: float  # P(a > b) - P(a < b)
    magnitude: str


def omnibus(groups: dict[str, np.ndarray]) -> Omnibus:
    """Check assumptions and run the omnibus test they allow."""
    from scipy import stats  # imported late: a run's summary does not need it

    data = {k: np.asarray(v, dtype=float)[np.isfinite(v)] for k, v in groups.items()}
    if len(data) < 2 or min(len(v) for v in data.values()) < 2:
        return Omnibus("none", math.nan, math.nan,
                       "needs at least 2 targets with 2 or more observations each", "none")
    samples = list(data.values())
    # Residuals standardised per group: pooling raw residuals of groups with unequal
    # variances gives a heavy-tailed mixture that fails Shapiro–Wilk although every group
    # is normal (and would send Welch-worthy data to Kruskal–Wallis).
    residuals = np.concatenate([(v - v.mean()) / (v.std(ddof=1) or 1.0) for v in samples])
    if len(residuals) > SHAPIRO_MAX_N:  # its p-value is not accurate beyond 5,000
        residuals = np.random.default_rng(BOOTSTRAP_SEED).choice(residuals, SHAPIRO_MAX_N,
                                                                 replace=False)
    if len(residuals) >= 3 and np.ptp(residuals) > 0:
        normal_p = float(stats.shapiro(residuals).pvalue)
    else:
        normal_p = 1.0
    spread = [v for v in samples if np.ptp(v) > 0]
    levene_p = float(stats.levene(*samples, center="median").pvalue) if spread else 1.0
    normal, equal = normal_p > ALPHA, levene_p > ALPHA or math.isnan(levene_p)
    checks = (f"Shapiro–Wilk on residuals p = {normal_p:.3g} "
              f"({'normal' if normal else 'not normal'}); Brown–Forsythe p = {levene_p:.3g} "
              f"({'equal' if equal else 'unequal'} variances)")
    if normal and equal:
        result = stats.f_oneway(*samples)
        return Omnibus("one-way ANOVA", float(result.statistic), float(result.pvalue),
                       checks + " → one-way ANOVA", "Tukey HSD")
    if normal:
        from statsmodels.stats.oneway import anova_oneway

        welch = anova_oneway(samples, use_var="unequal")
        return Omnibus("Welch's ANOVA", float(welch.statistic), float(welch.pvalue),
                       checks + " → Welch's ANOVA", "Games–Howell")
    if np.ptp(np.concatenate(samples)) == 0:
        return Omnibus("none", math.nan, math.nan, "all observations are equal", "none")
    result = stats.kruskal(*samples)
    return Omnibus("Kruskal–Wallis", float(result.statistic), float(result.pvalue),
                   checks + " → Kruskal–Wallis", "Dunn")


def pairwise(groups: dict[str, np.ndarray], posthoc: str,
             paired: dict[str, dict[int, float]] | None = None) -> list[Pair]:
    """Post-hoc comparisons matching the omnibus test, with effect sizes for every pair."""
    data = {k: np.asarray(v, dtype=float)[np.isfinite(v)] for k, v in groups.items()}
    names = [k for k, v in data.items() if len(v) >= 2]
    if len(names) < 2 or posthoc == "none":
        return []
    adjusted = _posthoc_matrix(data, names, posthoc)
    pairs = []
    effects: dict[tuple[str, str], tuple[float, float, float]] = {}
    for a, b in combinations(names, 2):
        raw = _raw_p(data[a], data[b], posthoc)
        low, high = ratio_ci(data[a], data[b])
        delta = cliffs_delta(data[a], data[b])
        effects[(a, b)] = (low, high, delta)
        pairs.append(Pair(a, b, _label(posthoc), raw, adjusted[(a, b)],
                          float(data[a].mean() / data[b].mean()) if data[b].mean() else math.nan,
                          low, high, delta, magnitude(delta)))
    if paired:
        pairs += _paired_wilcoxon(paired, names, data, effects)
    return pairs


def _label(posthoc: str) -> str:
    return {"Tukey HSD": "Tukey HSD", "Games–Howell": "Games–Howell",
            "Dunn": "Dunn (Holm)"}[posthoc]


def _posthoc_matrix(data: dict[str, np.ndarray], names: list[str],
                    posthoc: str) -> dict[tuple[str, str], float]:
    from scipy import stats  # imported late: a run's summary does not need it

    if posthoc == "Tukey HSD":
        result = stats.tukey_hsd(*(data[name] for name in names))
        return {(a, b): float(result.pvalue[i, j])
                for (i, a), (j, b) in combinations(enumerate(names), 2)}
    import pandas as pd
    import scikit_posthocs as sp  # imported late: it pulls in matplotlib

    frame = pd.DataFrame([(name, value) for name in names for value in data[name]],
                         columns=["group", "value"])
    if posthoc == "Games–Howell":
        matrix = sp.posthoc_games_howell(frame, val_col="value", group_col="group")
    else:
        matrix = sp.posthoc_dunn(frame, val_col="value", group_col="group", p_adjust="holm")
    return {(a, b): float(matrix.loc[a, b]) for a, b in combinations(names, 2)}


def _raw_p(a: np.ndarray, b: np.ndarray, posthoc: str) -> float:
    """The unadjusted two-sample p matching the post-hoc family."""
    from scipy import stats  # imported late: a run's summary does not need it

    if posthoc == "Dunn":
        return float(stats.mannwhitneyu(a, b, alternative="two-sided").pvalue)
    return float(stats.ttest_ind(a, b, equal_var=posthoc == "Tukey HSD").pvalue)


def _paired_wilcoxon(paired: dict[str, dict[int, float]], names: list[str],
                     data: dict[str, np.ndarray],
                     effects: dict[tuple[str, str], tuple[float, float, float]]) -> list[Pair]:
    from scipy import stats  # imported late: a run's summary does not need it

    rows = []
    for a, b in combinations(names, 2):
        common = sorted(set(paired.get(a, {})) & set(paired.get(b, {})))
        if len(common) < 2:
            continue
        x = np.array([paired[a][i] for i in common])
        y = np.array([paired[b][i] for i in common])
        diff = x - y
        p = float(stats.wilcoxon(x, y).pvalue) if np.any(diff != 0) else 1.0
        low, high, delta = effects[(a, b)]  # the same effect sizes as the unpaired row
        rows.append(Pair(a, b, "Wilcoxon signed-rank (paired by iteration)", p, math.nan,
                         float(data[a].mean() / data[b].mean()), low, high, delta,
                         magnitude(delta)))
    adjusted = holm([row.p_value for row in rows])
    return [Pair(**{**row.__dict__, "p_adj": adj}) for row, adj in zip(rows, adjusted,
                                                                         strict=True)]


def holm(p_values: list[float]) -> list[float]:
    """Holm–Bonferroni step-down adjusted p-values (Holm 1979)."""
    order = np.argsort(p_values)
    m = len(p_values)
    adjusted = np.empty(m)
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, (m - rank) * p_values[index])
        adjusted[index] = min(1.0, running)
    return adjusted.tolist()


def cliffs_delta(a: np.ndarray, b: np.ndarray) -> float:
    """Cliff's delta: P(a > b) − P(a < b) over all pairs (Cliff 1993)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if not len(a) or not len(b):
        return math.nan
    greater = (a[:, None] > b[None, :]).sum()
    less = (a[:, None] < b[None, :]).sum()
    return float((greater - less) / (len(a) * len(b)))


def magnitude(delta: float) -> str:
    """Negligible / small / medium / large, after Romano et al. (2006)."""
    if math.isnan(delta):
        return ""
    for threshold, label in CLIFF_THRESHOLDS:
        if abs(delta) < threshold:
            return label
    return "large"


def ratio_ci(a: np.ndarray, b: np.ndarray, confidence: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap CI of mean(a) / mean(b), resampling each group independently."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if len(a) < 2 or len(b) < 2 or b.mean() == 0:
        return math.nan, math.nan
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    ma = rng.choice(a, size=(BOOTSTRAP_RESAMPLES, len(a))).mean(axis=1)
    mb = rng.choice(b, size=(BOOTSTRAP_RESAMPLES, len(b))).mean(axis=1)
    ratios = ma / np.where(mb == 0, np.nan, mb)
    tail = (1 - confidence) / 2 * 100
    low, high = np.nanpercentile(ratios, [tail, 100 - tail])
    return float(low), float(high)


def median_ci(values: np.ndarray, confidence: float = 0.95) -> tuple[float, float]:
    """Percentile bootstrap CI of the median (Efron & Tibshirani 1993, §13), NaN below n = 3.

    Vectorised resampling (one matrix of resamples): scipy.stats.bootstrap gives the same
    percentile interval but costs ~100x more per cell, and analysis runs on every cell.
    """
    data = np.asarray(values, dtype=float)
    data = data[np.isfinite(data)]
    if len(data) < 3:
        return math.nan, math.nan
    rng = np.random.default_rng(BOOTSTRAP_SEED)
    medians = np.median(rng.choice(data, size=(BOOTSTRAP_RESAMPLES, len(data))), axis=1)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(medians, [tail, 100 - tail])
    return float(low), float(high)


# |x − median| / (1.4826 · MAD) above this flags an outlier (Iglewicz & Hoaglin 1993, 3.5).
MAD_OUTLIER_Z = 3.5


def mad_outliers(values: np.ndarray) -> np.ndarray:
    """Boolean mask of robust outliers by the median/MAD rule; nothing is dropped."""
    data = np.asarray(values, dtype=float)
    median = np.nanmedian(data)
    mad = 1.4826 * np.nanmedian(np.abs(data - median))
    if not mad:
        return np.zeros(len(data), dtype=bool)
    return np.abs(data - median) / mad > MAD_OUTLIER_Z
