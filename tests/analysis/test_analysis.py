"""Statistics checked against independently computed values (textbook data, a second method)."""

import math

import numpy as np
import pandas as pd
import pytest

from fslab.analysis.across.compare import compare_cells
from fslab.analysis.cells.median import median_ci
from fslab.analysis.cells.observations import per_run
from fslab.analysis.cells.stats import mad_outliers
from fslab.analysis.pairs.comparisons import compared_pairs
from fslab.analysis.pairs.model import NOT_ESTIMABLE, cliffs_delta, compare, magnitude
from fslab.analysis.pairs.ranking import rankings
from tests.conftest import verdict_lines


def test_cliffs_delta_by_definition_and_magnitude():
    a, b = np.array([1, 2, 3, 4.0]), np.array([3, 4, 5, 6.0])
    greater = sum(x > y for x in a for y in b)
    less = sum(x < y for x in a for y in b)
    assert cliffs_delta(a, b) == (greater - less) / 16
    assert magnitude(0.1) == "negligible" and magnitude(-0.3) == "small"
    assert magnitude(0.4) == "medium" and magnitude(0.9) == "large"


def test_median_interval_is_the_exact_order_statistic_interval():
    from scipy import stats

    rng = np.random.default_rng(8)
    for n in range(6, 41):
        data = rng.normal(50, 5, n)
        low, high, level = median_ci(data)
        reference = stats.quantile_test(data, q=np.median(data)).confidence_interval(0.95)
        assert (low, high) == (reference.low, reference.high)
        assert 0.95 <= level < 1
    low, high, level = median_ci([3.0, 1.0, 2.0])
    assert (low, high, level) == (1.0, 3.0, 0.75)  # the widest there is, and said so
    assert math.isnan(median_ci([1.0])[0])


def test_median_interval_covers_at_its_stated_level():
    rng = np.random.default_rng(9)
    for n in (3, 4, 5, 7, 10):
        draws = rng.lognormal(0, 0.3, (4000, n))
        hits = [median_ci(row)[0] <= 1.0 <= median_ci(row)[1] for row in draws]
        level = median_ci(draws[0])[2]
        assert np.mean(hits) == pytest.approx(level, abs=0.02), n


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


def verdicts_of(metrics):
    from fslab.analysis.cells.summary import summarize

    tests, pairs = compared_pairs(metrics)
    runs = per_run(metrics)
    headline, ranking = rankings(summarize(metrics), tests, pairs, runs)
    return headline, ranking, verdict_lines(headline, ranking, tests, pairs)


def test_verdicts_honour_direction_and_significance():
    fast = [2100, 2050, 2150, 2080, 2120.0]
    slow = [1000, 1020, 990, 1010, 1005.0]
    headline, ranking, lines = verdicts_of(metrics_frame({"xfs": fast, "ext4": slow}))
    assert headline.iloc[0].ranking == "xfs > ext4"
    ratio = np.exp(np.mean(np.log(fast) - np.log(slow)))
    assert ranking.set_index("target").loc["ext4", "advantage"] == pytest.approx(ratio)
    assert "== randwrite ==" in lines
    assert any(line.strip().startswith("xfs 2.09× faster than ext4 (95 % CI")
               and "very strong evidence, very large difference" in line for line in lines)
    latency = metrics_frame({"xfs": fast, "ext4": slow}, "clat_mean_ns", "lower")
    latency["unit"] = "ns"
    headline, _, lines = verdicts_of(latency)
    assert headline.iloc[0].ranking == "ext4 > xfs"  # lower is better
    assert any("ext4 2.09× lower latency than xfs" in line for line in lines)
    same = metrics_frame({"xfs": [100, 101, 99, 100.5], "ext4": [100.2, 99.8, 100.4, 99.9]})
    headline, _, lines = verdicts_of(same)
    assert headline.iloc[0].ranking in ("xfs = ext4", "ext4 = xfs")  # within ±10 %
    assert any("the same within ±10%" in line for line in lines), lines
    unsure = metrics_frame({"xfs": [115, 140, 100, 125], "ext4": [105, 110, 100, 112.0]})
    headline, _, lines = verdicts_of(unsure)
    assert "?" in headline.iloc[0].ranking
    assert any("not resolved" in line and "could have found" in line
               and "needs" in line and "iterations" in line for line in lines), lines


def test_compare_decides_a_20_percent_regression_and_calls_itself_the_same():
    base = metrics_frame({"xfs": [1000, 1010, 990, 1005, 995.0]})
    itself = compare_cells(base, base)
    assert itself["decision"].tolist() == ["same"]  # the interval lies within ±10 %
    assert itself["ratio"].iloc[0] == pytest.approx(1.0)
    worse = base.assign(value=base["value"] * 0.8)
    cells = compare_cells(base, worse)
    assert cells["decision"].tolist() == ["regressed"] and cells["primary"].all()
    assert cells["ratio"].iloc[0] == pytest.approx(0.8)  # new/base, geometric means
    assert cells["ratio_ci_high"].iloc[0] < 1
    latency = base.assign(metric="clat_mean_ns", better="lower", unit="ns")
    faster = compare_cells(latency, latency.assign(value=latency["value"] * 0.8),
                           declared={"randwrite": "clat_mean_ns"})
    assert faster["decision"].tolist() == ["improved"]  # lower latency is better
    noisy = base.assign(value=[1000, 1400, 800, 1300, 900.0])
    unsure = compare_cells(base, noisy.assign(value=noisy["value"] * 1.05))
    assert unsure["decision"].tolist() == ["unresolved"]
    assert unsure["needs_iterations"].iloc[0] > 5


def test_identical_observations_have_no_spread_to_test():
    found = compare({"a": {1: 5.0, 2: 5.0, 3: 5.0}, "b": {1: 5.0, 2: 5.0, 3: 5.0}})
    (pair,) = found.pairs
    assert (pair.ratio, pair.significant, pair.note) == (1.0, False, NOT_ESTIMABLE)
    assert math.isnan(pair.p_adj) and math.isnan(pair.ratio_ci_low)
    constant = compare({"a": {1: 400.0, 2: 400.0}, "b": {1: 200.0, 2: 200.0}})
    assert not constant.pairs[0].significant and constant.pairs[0].note == NOT_ESTIMABLE
    assert compare({"a": {1: 0.0, 2: 1.0}, "b": {1: 1.0, 2: 2.0}}) == (
        "values of 0 or below cannot be compared as ratios")


def test_a_runs_samples_are_averaged_but_its_extremes_stay_extremes():
    """Slices of one run: IOPS is their mean; the run's maximum latency is the largest
    slice's maximum and its minimum bandwidth sample the smallest (not their means)."""
    frames = []
    for metric, values in (("iops", [100.0, 300.0]), ("clat_max_ns", [5.0, 9.0]),
                           ("bw_min_bytes", [40.0, 20.0])):
        frame = metrics_frame({"ext4": [0.0]}, metric=metric)
        frames += [frame.assign(value=value, sample=sample)
                   for sample, value in enumerate(values)]
    runs = per_run(pd.concat(frames, ignore_index=True)).set_index("metric")["value"]
    assert runs["iops"] == 200.0
    assert runs["clat_max_ns"] == 9.0
    assert runs["bw_min_bytes"] == 20.0
