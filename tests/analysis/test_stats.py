"""Statistics checked against independently computed values."""

import math

import numpy as np
import pandas as pd
import pytest

from fslab.analysis.cells.stats import mean_ci
from fslab.analysis.cells.summary import summarize


def test_t_interval_textbook_example():
    # Montgomery, Design and Analysis of Experiments, Ex. 2.1-style check computed by hand:
    # x = 10, 12, 14: mean 12, s = 2, t(0.975, 2) = 4.302653, half = 4.302653*2/sqrt(3).
    ci = mean_ci([10, 12, 14])
    half = 4.302652729749464 * 2 / math.sqrt(3)
    assert (ci.n, ci.mean, ci.sd) == (3, 12.0, 2.0)
    assert ci.ci_low == pytest.approx(12 - half, rel=1e-9)
    assert ci.ci_high == pytest.approx(12 + half, rel=1e-9)


def test_t_interval_matches_statsmodels():
    from statsmodels.stats.weightstats import DescrStatsW

    data = np.random.default_rng(1).normal(100, 15, size=17)
    low, high = DescrStatsW(data).tconfint_mean(alpha=0.05)
    ci = mean_ci(data)
    assert (ci.ci_low, ci.ci_high) == pytest.approx((low, high), rel=1e-12)


def test_single_value_has_no_interval():
    ci = mean_ci([5.0])
    assert ci.n == 1 and ci.mean == 5.0 and math.isnan(ci.ci_low)


def frame(rows):
    base = {"fs_impl": "kernel", "op": "read", "unit": "1/s", "host": "h", "campaign": "c"}
    return pd.DataFrame([{**base, "run_id": f"{row['target']}-{row['iteration']}", **row}
                         for row in rows])


def test_best_honours_direction():
    rows = []
    for i, (a, b) in enumerate([(100, 200), (102, 198), (98, 202)], 1):
        rows += [
            {"target": "a", "fs": "ext4", "workload": "w", "iteration": i, "metric": "iops",
             "value": a, "better": "higher"},
            {"target": "b", "fs": "xfs", "workload": "w", "iteration": i, "metric": "iops",
             "value": b, "better": "higher"},
            {"target": "a", "fs": "ext4", "workload": "w", "iteration": i,
             "metric": "clat_mean_ns", "value": a * 1000, "better": "lower", "unit": "ns"},
            {"target": "b", "fs": "xfs", "workload": "w", "iteration": i,
             "metric": "clat_mean_ns", "value": b * 1000, "better": "lower", "unit": "ns"},
        ]
    summary = summarize(frame(rows)).set_index(["metric", "target"])
    assert bool(summary.loc[("iops", "b"), "best"]) is True
    assert bool(summary.loc[("iops", "a"), "best"]) is False
    assert bool(summary.loc[("clat_mean_ns", "a"), "best"]) is True  # lower latency wins
    assert bool(summary.loc[("iops", "b"), "best_clear"]) is True  # CIs far apart
    assert summary.loc[("iops", "a"), "n"] == 3
    assert summary.loc[("iops", "a"), "mean"] == pytest.approx(100)


def test_noisy_cells_are_flagged():
    rows = [{"target": "a", "fs": "ext4", "workload": "w", "iteration": i, "metric": "iops",
             "value": v, "better": "higher"} for i, v in enumerate([100, 300, 50], 1)]
    rows += [{"target": "b", "fs": "xfs", "workload": "w", "iteration": i, "metric": "iops",
              "value": v, "better": "higher"} for i, v in enumerate([100, 101, 99], 1)]
    summary = summarize(frame(rows)).set_index("target")
    assert bool(summary.loc["a", "noisy"]) is True
    assert bool(summary.loc["b", "noisy"]) is False
    assert bool(summary.loc["a", "best"]) is True  # higher mean (150 vs 100) ...
    assert bool(summary.loc["a", "best_clear"]) is False  # ... but its CI spans b's
