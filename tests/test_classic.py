"""fslab's written-out classic tests give scipy.stats' numbers (analysis/classic.py).

Random data of many sizes, with and without ties and zero differences, so that every
branch of scipy's method choice (exact, permutation, asymptotic) is taken; plus
textbook cases with published values.
"""

import warnings

import numpy as np
import pytest
from scipy import stats

from fslab.analysis import classic


def cases(seed, count=300):
    """(samples, rounded) for `count` random comparisons: 2-5 groups of 2-30 values."""
    rng = np.random.default_rng(seed)
    for _ in range(count):
        decimals = rng.choice([-1, 0, 1])  # -1: continuous; 0, 1: rounded, so ties
        sizes = rng.integers(2, 31, rng.integers(2, 6))
        samples = [rng.normal(rng.normal(0, 1), rng.uniform(0.5, 2), s) for s in sizes]
        if decimals >= 0:
            samples = [np.round(s, decimals) for s in samples]
        yield samples


def close(ours, theirs, rtol):
    if np.isnan(theirs):
        return np.isnan(ours)
    return ours == pytest.approx(theirs, rel=rtol, abs=1e-300)


def test_anova_levene_kruskal_and_mann_whitney_match_scipy():
    checked = {"f": 0, "levene": 0, "kruskal": 0, "mwu_exact": 0, "mwu_normal": 0}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy warns on constant groups; values still compare
        for samples in cases(1):
            f, p = classic.f_oneway(samples)
            ref = stats.f_oneway(*samples)
            assert close(f, ref.statistic, 1e-9) and close(p, ref.pvalue, 1e-9)
            checked["f"] += 1
            assert close(classic.levene_median(samples)[1],
                         stats.levene(*samples, center="median").pvalue, 1e-9)
            checked["levene"] += 1
            if np.ptp(np.concatenate(samples)) > 0:
                h, p = classic.kruskal(samples)
                ref = stats.kruskal(*samples)
                assert close(h, ref.statistic, 1e-12) and close(p, ref.pvalue, 1e-12)
                checked["kruskal"] += 1
            x, y = samples[0], samples[1]
            if np.ptp(np.r_[x, y]) > 0:
                ours = classic.mannwhitneyu_p(x, y)
                assert close(ours, stats.mannwhitneyu(x, y, alternative="two-sided").pvalue,
                             1e-12)
                tied = len(np.unique(np.r_[x, y])) < len(x) + len(y)
                checked["mwu_normal" if tied or min(len(x), len(y)) > 8 else "mwu_exact"] += 1
    assert min(checked.values()) >= 20, checked


def test_wilcoxon_matches_scipy_in_every_method():
    rng = np.random.default_rng(2)
    seen = set()
    for _ in range(120):  # scipy's permutation branch takes ~0.1 s a call
        n = int(rng.integers(2, 70))
        x = rng.normal(0, 1, n)
        y = x + rng.normal(rng.choice([0.0, 0.5]), 1, n)
        if rng.random() < 0.4:
            x, y = np.round(x, 0), np.round(y, 0)  # ties, and zero differences
        if rng.random() < 0.3:
            y[:2] = x[:2]  # zero differences
        d = x - y
        if not np.any(d != 0):
            continue
        tied = np.any(d == 0) or len(np.unique(np.abs(d))) < n
        seen.add("normal" if n > 50 or (tied and n > 13) else "flips" if tied else "exact")
        assert close(classic.wilcoxon_p(x, y), stats.wilcoxon(x, y).pvalue, 1e-12), (x, y)
    assert seen == {"exact", "flips", "normal"}


def test_shapiro_wilk_matches_scipy():
    rng = np.random.default_rng(3)
    for n in [3, 4, 5, 6, 7, 11, 12, 20, 50, 200, 1000, 5000]:
        for draw in (rng.normal(size=n), rng.exponential(size=n), np.round(rng.normal(size=n))):
            if np.ptp(draw) == 0:
                continue
            w, p = classic.shapiro(draw)
            ref = stats.shapiro(draw)
            # scipy keeps part of AS R94 in single precision: W agrees to ~1e-8.
            assert w == pytest.approx(ref.statistic, rel=1e-6)
            if ref.pvalue > 1e-10:
                assert p == pytest.approx(ref.pvalue, rel=1e-4)
            else:
                assert p < 1e-8


def test_textbook_values():
    # Shapiro & Wilk (1965), the weights example: W = 0.79 (n = 11, p < 0.01).
    weights = np.array([148, 154, 158, 160, 161, 162, 166, 170, 182, 195, 236], dtype=float)
    w, p = classic.shapiro(weights)
    assert w == pytest.approx(0.79, abs=0.005) and p < 0.01
    # Kruskal–Wallis: Hollander & Wolfe (1973) p. 116, mucociliary clearance: H = 0.771.
    h, _ = classic.kruskal([np.array([2.9, 3.0, 2.5, 2.6, 3.2]), np.array([3.8, 2.7, 4.0, 2.4]),
                            np.array([2.8, 3.4, 3.7, 2.2, 2.0])])
    assert h == pytest.approx(0.7714, abs=1e-4)


def test_ranks_average_ties():
    ranks, ties = classic.rankdata(np.array([10.0, 20.0, 10.0, 30.0, 20.0, 20.0]))
    assert ranks.tolist() == [1.5, 4.0, 1.5, 6.0, 4.0, 4.0]
    assert sorted(ties.tolist()) == [1, 2, 3]
