"""Statistics checked against independently computed values (textbook data, a second method)."""

import math

import numpy as np
import pandas as pd
import pytest

from fslab.analysis.base_vs_new import classify, compare_cells
from fslab.analysis.bootstrap import median_ci
from fslab.analysis.comparisons import compare_targets
from fslab.analysis.model import cliffs_delta, compare, magnitude
from fslab.analysis.stats import mad_outliers
from fslab.analysis.verdicts import headline, verdicts


def test_cliffs_delta_by_definition_and_magnitude():
    a, b = np.array([1, 2, 3, 4.0]), np.array([3, 4, 5, 6.0])
    greater = sum(x > y for x in a for y in b)
    less = sum(x < y for x in a for y in b)
    assert cliffs_delta(a, b) == (greater - less) / 16
    assert magnitude(0.1) == "negligible" and magnitude(-0.3) == "small"
    assert magnitude(0.4) == "medium" and magnitude(0.9) == "large"


def test_median_interval_covers_the_median():
    rng = np.random.default_rng(8)
    data = rng.normal(50, 5, 40)
    low, high = median_ci(data)
    assert low < np.median(data) < high
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
    table = headline(summarize(metrics), tests, pairs)
    row = table.iloc[0]
    assert (row.winner, row.runner_up, row.certainty) == ("xfs", "ext4", "certain")
    assert row.ratio == pytest.approx(np.exp(np.mean(np.log(fast) - np.log(slow))))
    assert row.verdict.startswith("xfs: 2.09× ext4 (95 % CI")
    lines = verdicts(summarize(metrics), tests, pairs)
    assert lines[0] == "== randwrite =="
    assert any("xfs 2.09× ext4 (95 % CI" in line and "large effect" in line for line in lines)
    latency = metrics_frame({"xfs": fast, "ext4": slow}, "clat_mean_ns", "lower")
    latency["unit"] = "ns"
    tests, pairs = compare_targets(latency)
    table = headline(summarize(latency), tests, pairs)
    assert table.iloc[0].winner == "ext4" and table.iloc[0].ratio < 0.5  # lower is better
    lines = verdicts(summarize(latency), tests, pairs)
    assert any("(lower is better): ext4: 0.479× xfs" in line for line in lines)
    same = metrics_frame({"xfs": [100, 101, 99, 100.5], "ext4": [100.2, 99.8, 100.4, 99.9]})
    tests, pairs = compare_targets(same)
    row = headline(summarize(same), tests, pairs).iloc[0]
    assert row.winner == "" and row.verdict.startswith("no detectable difference")
    assert "could have shown" in row.verdict


def test_compare_flags_a_20_percent_regression_and_not_itself():
    base = metrics_frame({"xfs": [1000, 1010, 990, 1005, 995.0]})
    assert set(compare_cells(base, base)["verdict"]) == {"unchanged"}
    worse = base.assign(value=base["value"] * 0.8)
    cells = compare_cells(base, worse)
    assert cells["verdict"].tolist() == ["regressed"]
    assert cells["change"].iloc[0] == pytest.approx(-0.2)  # a ratio of geometric means
    assert cells["change_ci_high"].iloc[0] < -0.02
    assert classify(-0.2, -0.25, -0.15, "lower", 0.02)[0] == "improved"


def test_identical_observations_have_no_spread_to_test():
    found = compare({"a": {1: 5.0, 2: 5.0, 3: 5.0}, "b": {1: 5.0, 2: 5.0, 3: 5.0}})
    (pair,) = found.pairs
    assert (pair.ratio, pair.p_adj, pair.significant) == (1.0, 1.0, False)
    assert compare({"a": {1: 0.0, 2: 1.0}, "b": {1: 1.0, 2: 2.0}}) == (
        "values of 0 or below cannot be compared as ratios")
