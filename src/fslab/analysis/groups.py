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

from fslab.analysis import classic
from fslab.analysis.bootstrap import BOOTSTRAP_SEED, bootstrap_means, ratio_ci
from fslab.analysis.posthoc import dunn, games_howell, holm, t_test, tukey_hsd, welch_anova

ALPHA = 0.05
SHAPIRO_MAX_N = 5000  # scipy: "for N > 5000 the p-value may not be accurate"
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
    data = {k: np.asarray(v, dtype=float)[np.isfinite(v)] for k, v in groups.items()}
    if len(data) < 2 or min(len(v) for v in data.values()) < 2:
        return Omnibus("none", math.nan, math.nan,
                       "needs at least 2 targets with 2 or more observations each", "none")
    samples = list(data.values())
    if np.ptp(np.concatenate(samples)) == 0:  # nothing to test (e.g. a counter at its cap)
        return Omnibus("none", math.nan, math.nan, "all observations are equal", "none")
    # Residuals standardised per group: pooling raw residuals of groups with unequal
    # variances gives a heavy-tailed mixture that fails Shapiro–Wilk although every group
    # is normal (and would send Welch-worthy data to Kruskal–Wallis).
    residuals = np.concatenate([(v - v.mean()) / (v.std(ddof=1) or 1.0) for v in samples])
    if len(residuals) > SHAPIRO_MAX_N:  # its p-value is not accurate beyond 5,000
        residuals = np.random.default_rng(BOOTSTRAP_SEED).choice(residuals, SHAPIRO_MAX_N,
                                                                 replace=False)
    if len(residuals) >= 3 and np.ptp(residuals) > 0:
        normal_p = classic.shapiro(residuals)[1]
    else:
        normal_p = 1.0
    spread = [v for v in samples if np.ptp(v) > 0]
    levene_p = classic.levene_median(samples)[1] if spread else 1.0
    normal, equal = normal_p > ALPHA, levene_p > ALPHA or math.isnan(levene_p)
    checks = (f"Shapiro–Wilk on residuals p = {normal_p:.3g} "
              f"({'normal' if normal else 'not normal'}); Brown–Forsythe p = {levene_p:.3g} "
              f"({'equal' if equal else 'unequal'} variances)")
    if normal and equal:
        statistic, p_value = classic.f_oneway(samples)
        return Omnibus("one-way ANOVA", statistic, p_value, checks + " → one-way ANOVA",
                       "Tukey HSD")
    if normal and all(np.ptp(v) > 0 for v in samples):
        statistic, p_value = welch_anova(samples)
        return Omnibus("Welch's ANOVA", statistic, p_value,
                       checks + " → Welch's ANOVA", "Games–Howell")
    if normal:
        checks += "; a target's values are all equal, which Welch's ANOVA cannot weigh"
    statistic, p_value = classic.kruskal(samples)
    return Omnibus("Kruskal–Wallis", statistic, p_value, checks + " → Kruskal–Wallis", "Dunn")


def pairwise(groups: dict[str, np.ndarray], posthoc: str,
             paired: dict[str, dict[int, float]] | None = None) -> list[Pair]:
    """Post-hoc comparisons matching the omnibus test, with effect sizes for every pair."""
    data = {k: np.asarray(v, dtype=float)[np.isfinite(v)] for k, v in groups.items()}
    names = [k for k, v in data.items() if len(v) >= 2]
    if len(names) < 2 or posthoc == "none":
        return []
    adjusted = _posthoc_matrix(data, names, posthoc)
    # Each group's bootstrap means are drawn once (its own seed) and shared by its pairs.
    means = {name: bootstrap_means(data[name], index) for index, name in enumerate(names)}
    pairs = []
    effects: dict[tuple[str, str], tuple[float, float, float]] = {}
    for a, b in combinations(names, 2):
        raw = _raw_p(data[a], data[b], posthoc)
        low, high = ratio_ci(data[a], data[b], means=(means[a], means[b]))
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
    family = {"Tukey HSD": tukey_hsd, "Games–Howell": games_howell, "Dunn": dunn}[posthoc]
    return family(data, names)


def _raw_p(a: np.ndarray, b: np.ndarray, posthoc: str) -> float:
    """The unadjusted two-sample p matching the post-hoc family: Mann–Whitney for Dunn,
    Student's t for Tukey HSD, Welch's t for Games–Howell."""
    if posthoc == "Dunn":
        return classic.mannwhitneyu_p(a, b)
    return t_test(a, b, equal_var=posthoc == "Tukey HSD")


def _paired_wilcoxon(paired: dict[str, dict[int, float]], names: list[str],
                     data: dict[str, np.ndarray],
                     effects: dict[tuple[str, str], tuple[float, float, float]]) -> list[Pair]:
    rows = []
    for a, b in combinations(names, 2):
        common = sorted(set(paired.get(a, {})) & set(paired.get(b, {})))
        if len(common) < 2:
            continue
        x = np.array([paired[a][i] for i in common])
        y = np.array([paired[b][i] for i in common])
        diff = x - y
        p = classic.wilcoxon_p(x, y) if np.any(diff != 0) else 1.0
        low, high, delta = effects[(a, b)]  # the same effect sizes as the unpaired row
        rows.append(Pair(a, b, "Wilcoxon signed-rank (paired by iteration)", p, math.nan,
                         float(data[a].mean() / data[b].mean()), low, high, delta,
                         magnitude(delta)))
    adjusted = holm([row.p_value for row in rows])
    return [Pair(**{**row.__dict__, "p_adj": adj}) for row, adj in zip(rows, adjusted,
                                                                         strict=True)]


def cliffs_delta(a: np.ndarray, b: np.ndarray) -> float:
    """Cliff's delta: P(a > b) − P(a < b) over all pairs (Cliff 1993).

    Counted by binary search in the sorted b: O(n log n) instead of an n × m matrix.
    """
    a, b = np.asarray(a, dtype=float), np.sort(np.asarray(b, dtype=float))
    if not len(a) or not len(b):
        return math.nan
    greater = np.searchsorted(b, a, side="left").sum()  # b values below each a
    less = (len(b) - np.searchsorted(b, a, side="right")).sum()  # b values above each a
    return float((greater - less) / (len(a) * len(b)))


def magnitude(delta: float) -> str:
    """Negligible / small / medium / large, after Romano et al. (2006)."""
    if math.isnan(delta):
        return ""
    for threshold, label in CLIFF_THRESHOLDS:
        if abs(delta) < threshold:
            return label
    return "large"


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
