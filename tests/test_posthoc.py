"""fslab's own post-hoc tests and distributions, held to scipy, statsmodels and
scikit-posthocs (the libraries they replace for speed) and to closed forms."""

import math

import numpy as np
import pytest
import scikit_posthocs as sp
from scipy import stats
from scipy.special import stdtr

from fslab.analysis.bootstrap import median_ci
from fslab.analysis.posthoc import dunn, games_howell, t_test, tukey_hsd, welch_anova
from fslab.analysis.qdist import studentized_range_sf


@pytest.mark.parametrize("k", [3, 4, 6, 10])
@pytest.mark.parametrize("df", [1, 2, 5, 30, 400, 5000])
def test_studentized_range_matches_scipy(k, df):
    q = np.array([0.5, 1.5, 3.0, 4.5, 6.0])
    ours = studentized_range_sf(q, k, df)
    reference = stats.studentized_range.sf(q, k, df)
    usable = reference > 1e-7  # below, scipy's own integration error dominates
    assert ours[usable] == pytest.approx(reference[usable], rel=2e-4)


@pytest.mark.parametrize("df", [1, 3, 12, 250, 1e7, np.inf])
def test_studentized_range_of_two_groups_is_the_t_distribution(df):
    # With k = 2, Q = √2·|T|: P(Q > q) = 2·P(T < −q/√2), exact down to p ~ 1e-12.
    q = np.array([0.2, 1.0, 3.0, 6.0, 10.0])
    exact = 2 * (stdtr(df, -q / math.sqrt(2)) if np.isfinite(df) else stats.norm.sf(q / 2**0.5))
    assert studentized_range_sf(q, 2, df) == pytest.approx(exact, rel=1e-5, abs=1e-300)


GROUPS = {
    "a": np.array([10.1, 9.8, 10.4, 10.0, 9.9, 10.3, 10.2]),
    "b": np.array([11.0, 12.5, 10.9, 13.1, 11.8, 12.2]),
    "c": np.array([10.6, 10.2, 10.9, 10.4, 10.8, 10.5, 10.7, 10.3]),
    "d": np.array([14.0, 9.0, 12.0, 16.0, 11.0]),
}
NAMES = list(GROUPS)


def test_tukey_hsd_matches_scipy():
    ours = tukey_hsd(GROUPS, NAMES)
    reference = stats.tukey_hsd(*GROUPS.values()).pvalue
    for i, a in enumerate(NAMES):
        for j, b in enumerate(NAMES[i + 1:], i + 1):
            assert ours[(a, b)] == pytest.approx(reference[i, j], rel=1e-4, abs=1e-9)


def test_games_howell_matches_scikit_posthocs():
    ours = games_howell(GROUPS, NAMES)
    frame = [(name, value) for name in NAMES for value in GROUPS[name]]
    import pandas as pd

    reference = sp.posthoc_games_howell(pd.DataFrame(frame, columns=["g", "v"]),
                                        val_col="v", group_col="g")
    for (a, b), p in ours.items():
        assert p == pytest.approx(reference.loc[a, b], rel=1e-4, abs=1e-9)


def test_dunn_with_ties_matches_scikit_posthocs():
    groups = {k: np.round(v) for k, v in GROUPS.items()}  # many ties
    ours = dunn(groups, NAMES)
    reference = sp.posthoc_dunn(list(groups.values()), p_adjust="holm")
    for i, a in enumerate(NAMES):
        for j, b in enumerate(NAMES[i + 1:], i + 1):
            assert ours[(a, b)] == pytest.approx(reference.iloc[i, j], rel=1e-9)


def test_welch_anova_matches_statsmodels():
    from statsmodels.stats.oneway import anova_oneway

    statistic, p = welch_anova(list(GROUPS.values()))
    reference = anova_oneway(list(GROUPS.values()), use_var="unequal")
    assert statistic == pytest.approx(reference.statistic, rel=1e-10)
    assert p == pytest.approx(reference.pvalue, rel=1e-8)


@pytest.mark.parametrize("equal_var", [True, False])
def test_t_tests_match_scipy(equal_var):
    a, b = GROUPS["a"], GROUPS["d"]
    reference = stats.ttest_ind(a, b, equal_var=equal_var).pvalue
    assert t_test(a, b, equal_var) == pytest.approx(reference, rel=1e-10)


@pytest.mark.parametrize("n", [3, 9, 61])
def test_bootstrap_median_interval_is_the_exact_one_for_odd_n(n):
    """For odd n the bootstrap median is x_(j) with P(M* ≤ x_(j)) = I_{j/n}(k, n+1−k),
    k = (n+1)/2 (Efron 1982): the interval is known exactly, without resampling."""
    from scipy.special import betainc

    data = np.sort(np.random.default_rng(n).lognormal(0, 1, n))
    k = (n + 1) // 2
    cdf = betainc(k, n + 1 - k, np.arange(1, n + 1) / n)
    exact = np.searchsorted(cdf, [0.025, 0.975])  # smallest j with F(x_j) ≥ p
    ours = np.searchsorted(data, median_ci(data))
    assert np.abs(ours - exact).max() <= 1  # one order statistic at most: Monte Carlo


@pytest.mark.parametrize("n", [4, 10, 40])
def test_bootstrap_median_interval_equals_resampling_for_even_n(n):
    """Against 200,000 brute-force resamples, each end sits at its quantile of their
    distribution, within the Monte Carlo error of fslab's 2,000 draws."""
    data = np.random.default_rng(n).lognormal(0, 1, n)
    rng = np.random.default_rng(0)
    medians = np.median(rng.choice(data, (200_000, n)), axis=1)
    low, high = median_ci(data)
    assert np.mean(medians < low) <= 0.025 <= np.mean(medians <= low) + 0.01
    assert np.mean(medians < high) - 0.01 <= 0.975 <= np.mean(medians <= high)
