"""Statistics checked against independently computed values (textbook data, a second method)."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from fslab.analysis.bootstrap import median_ci, ratio_ci
from fslab.analysis.compare import classify, compare_cells
from fslab.analysis.comparisons import compare_targets
from fslab.analysis.groups import cliffs_delta, mad_outliers, magnitude, omnibus, pairwise
from fslab.analysis.posthoc import holm
from fslab.analysis.verdicts import verdicts

# Montgomery, Design and Analysis of Experiments, Table 3.1: etch rate (Å/min) at four
# RF power levels; the book's ANOVA gives F0 = 66.80 (P < 0.01).
ETCH = {
    "160W": np.array([575, 542, 530, 539, 570.0]),
    "180W": np.array([565, 593, 590, 579, 610.0]),
    "200W": np.array([600, 651, 610, 637, 629.0]),
    "220W": np.array([725, 700, 715, 685, 710.0]),
}


def test_anova_matches_the_textbook():
    result = omnibus(ETCH)
    assert result.test == "one-way ANOVA"
    assert result.statistic == pytest.approx(66.80, abs=0.01)
    assert result.p_value < 0.01
    assert "Shapiro–Wilk" in result.reason and "Brown–Forsythe" in result.reason


def test_tukey_pairs_match_statsmodels():
    from statsmodels.stats.multicomp import pairwise_tukeyhsd

    pairs = {(p.a, p.b): p for p in pairwise(ETCH, "Tukey HSD")}
    values = np.concatenate(list(ETCH.values()))
    labels = np.repeat(list(ETCH), 5)
    reference = pairwise_tukeyhsd(values, labels).summary().data[1:]
    for a, b, _, p_adj, *_ in reference:
        assert pairs[(a, b)].p_adj == pytest.approx(p_adj, abs=2e-3)


def test_unequal_variances_choose_welch_and_games_howell():
    rng = np.random.default_rng(3)
    groups = {"a": rng.normal(100, 1, 12), "b": rng.normal(103, 12, 12),
              "c": rng.normal(98, 25, 12)}
    result = omnibus(groups)
    assert result.test == "Welch's ANOVA" and result.posthoc == "Games–Howell"
    from statsmodels.stats.oneway import anova_oneway

    second = anova_oneway(list(groups.values()), use_var="unequal")
    assert result.p_value == pytest.approx(second.pvalue)


def test_skewed_data_choose_kruskal_and_dunn():
    rng = np.random.default_rng(5)
    groups = {k: rng.lognormal(mu, 1.2, 15) for k, mu in (("a", 0), ("b", 0.3), ("c", 1.5))}
    result = omnibus(groups)
    assert result.test == "Kruskal–Wallis"
    assert result.p_value == pytest.approx(stats.kruskal(*groups.values()).pvalue)
    pairs = pairwise(groups, result.posthoc)
    assert all(p.test == "Dunn (Holm)" for p in pairs)


def test_holm_against_statsmodels():
    from statsmodels.stats.multitest import multipletests

    p = [0.01, 0.04, 0.03, 0.005, 0.2]
    assert holm(p) == pytest.approx(multipletests(p, method="holm")[1].tolist())


def test_cliffs_delta_by_definition_and_magnitude():
    a, b = np.array([1, 2, 3, 4.0]), np.array([3, 4, 5, 6.0])
    greater = sum(x > y for x in a for y in b)
    less = sum(x < y for x in a for y in b)
    assert cliffs_delta(a, b) == (greater - less) / 16
    assert magnitude(0.1) == "negligible" and magnitude(-0.3) == "small"
    assert magnitude(0.4) == "medium" and magnitude(0.9) == "large"


def test_ratio_and_median_intervals_cover_the_truth():
    rng = np.random.default_rng(8)
    a, b = rng.normal(200, 10, 30), rng.normal(100, 5, 30)
    low, high = ratio_ci(a, b)
    assert low < 2.0 < high and high - low < 0.2
    data = rng.normal(50, 5, 40)
    mlow, mhigh = median_ci(data)
    assert mlow < np.median(data) < mhigh
    assert math.isnan(median_ci([1.0, 2.0])[0])


def test_mad_flags_an_outlier_without_dropping_it():
    values = np.array([10, 10.5, 9.8, 10.2, 10.1, 30.0])
    mask = mad_outliers(values)
    assert mask.tolist() == [False] * 5 + [True]


def metrics_frame(values: dict[str, list[float]], metric="iops", better="higher"):
    rows = []
    for target, series in values.items():
        for iteration, value in enumerate(series, 1):
            rows.append({"campaign": "c", "run_id": f"{target}-{iteration}", "target": target,
                         "fs": target, "fs_impl": "k", "workload": "randwrite",
                         "iteration": iteration, "host": "h", "op": "write", "metric": metric,
                         "value": value, "unit": "1/s", "better": better, "sample": 0,
                         "note": ""})
    return pd.DataFrame(rows)


def test_verdicts_honour_direction_and_significance():
    from fslab.analysis.summary import summarize

    fast = [2100, 2050, 2150, 2080, 2120.0]
    slow = [1000, 1020, 990, 1010, 1005.0]
    metrics = metrics_frame({"xfs": fast, "ext4": slow})
    tests, pairs = compare_targets(metrics)
    lines = verdicts(summarize(metrics), tests, pairs)
    assert lines[0].startswith("xfs: 2.09× the randwrite IOPS of ext4")
    assert "large effect" in lines[0]
    latency = metrics_frame({"xfs": fast, "ext4": slow}, "clat_mean_ns", "lower")
    latency["unit"] = "ns"
    tests, pairs = compare_targets(latency)
    line = verdicts(summarize(latency), tests, pairs)[0]
    assert line.startswith("ext4: 0.479× the randwrite mean latency of xfs, lower is better")
    same = metrics_frame({"xfs": [100, 101, 99, 100.5], "ext4": [100.2, 99.8, 100.4, 99.9]})
    tests, pairs = compare_targets(same)
    assert "no significant difference" in verdicts(summarize(same), tests, pairs)[0]


def test_compare_flags_a_20_percent_regression_and_not_itself():
    base = metrics_frame({"xfs": [1000, 1010, 990, 1005, 995.0]})
    assert set(compare_cells(base, base)["verdict"]) == {"unchanged"}
    worse = base.assign(value=base["value"] * 0.8)
    cells = compare_cells(base, worse)
    assert cells["verdict"].tolist() == ["regressed"]
    assert cells["change"].iloc[0] == pytest.approx(-0.2)
    assert cells["change_ci_high"].iloc[0] < -0.02
    assert classify(-0.2, -0.25, -0.15, "lower", 0.02)[0] == "improved"


def test_identical_observations_are_not_tested():
    result = omnibus({"a": np.array([5.0, 5.0, 5.0]), "b": np.array([5.0, 5.0])})
    assert (result.test, result.reason) == ("none", "all observations are equal")
