"""The comparison model (analysis.pairs.model) against statsmodels and scipy, and against the
truth: synthetic campaigns with known ratios (issue 13)."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from fslab.analysis.cells.summary import summarize
from fslab.analysis.pairs.comparisons import compared_pairs
from fslab.analysis.pairs.model import ALPHA, BLOCKED, UNBLOCKED, compare
from fslab.core.pair import table_of

# A seed-000-shaped campaign (one workload, IOPS, 3 targets × 5 iterations) with machine
# drift between iterations: fixed numbers, so the results below are reproducible by hand.
SEED000 = {
    "btrfs": [9020, 8410, 9730, 8890, 9310.0],
    "ext4": [17800, 16200, 19100, 17300, 18400.0],
    "xfs": [17700, 16900, 18800, 17000, 18100.0],
}


def frame(data, metric="iops", better="higher", workload="randwrite"):
    rows = [{"campaign": "c", "run_id": f"{t}-{i}", "target": t, "fs": t, "fs_impl": "k",
             "workload": workload, "iteration": i, "host": "h", "op": "write",
             "metric": metric, "value": v, "unit": "1/s", "better": better, "sample": 0,
             "note": ""}
            for t, values in data.items() for i, v in enumerate(values, 1)]
    return pd.DataFrame(rows)


def ols_two_way(data, a, b):
    """statsmodels' OLS of log values on target + iteration (a randomised complete block
    design), for the two targets a and b: the target coefficient, its CI and p."""
    import statsmodels.formula.api as smf

    sub = frame({a: data[a], b: data[b]})
    sub["y"] = np.log(sub["value"])
    fit = smf.ols(f"y ~ C(target, Treatment('{b}')) + C(iteration)", data=sub).fit()
    name = f"C(target, Treatment('{b}'))[T.{a}]"
    low, high = fit.conf_int(alpha=ALPHA).loc[name]
    return fit.params[name], low, high, fit.pvalues[name]


def groups_of(data):
    return {name: dict(enumerate(values, 1)) for name, values in data.items()}


def test_seed000_geometric_means_and_log_t_intervals_match_the_textbook_formula():
    summary = summarize(frame(SEED000)).set_index("target")
    for target, values in SEED000.items():
        x = np.log(np.array(values))
        half = stats.t.ppf(0.975, len(x) - 1) * x.std(ddof=1) / math.sqrt(len(x))
        assert summary.loc[target, "mean"] == pytest.approx(np.mean(values), rel=1e-12)
        assert summary.loc[target, "geomean"] == pytest.approx(math.exp(x.mean()), rel=1e-12)
        assert summary.loc[target, "ci_low"] == pytest.approx(math.exp(x.mean() - half), rel=1e-9)
        assert summary.loc[target, "ci_high"] == pytest.approx(math.exp(x.mean() + half),
                                                              rel=1e-9)
        assert summary.loc[target, "ci_half_width_pct"] == pytest.approx(
            100 * (math.exp(half) - 1), rel=1e-9)


def test_seed000_blocked_pair_equals_statsmodels_two_way_ols():
    """With two targets, the paired t on log ratios IS the block design's contrast."""
    two = {"ext4": SEED000["ext4"], "btrfs": SEED000["btrfs"]}
    (pair,) = compare(groups_of(two)).pairs
    coef, low, high, p = ols_two_way(two, "btrfs", "ext4")  # pairs are sorted: btrfs/ext4
    assert pair.test == BLOCKED
    assert math.log(pair.ratio) == pytest.approx(coef, rel=1e-9)
    assert math.log(pair.ratio_ci_low) == pytest.approx(low, rel=1e-9)
    assert math.log(pair.ratio_ci_high) == pytest.approx(high, rel=1e-9)
    assert pair.p_value == pytest.approx(p, rel=1e-6)
    assert pair.p_adj == pair.p_value  # one pair: nothing to adjust


def test_seed000_three_targets_estimates_and_bonferroni():
    found = compare(groups_of(SEED000))
    assert found.blocked and len(found.pairs) == 3
    for pair in found.pairs:
        coef, *_ = ols_two_way(SEED000, pair.a, pair.b)
        assert math.log(pair.ratio) == pytest.approx(coef, rel=1e-9)
        assert pair.p_adj == pytest.approx(min(1.0, 3 * pair.p_value))
        # the interval is the (1 − α/3) t interval of the same paired differences
        d = np.log(SEED000[pair.a]) - np.log(SEED000[pair.b])
        half = stats.t.ppf(1 - ALPHA / 6, len(d) - 1) * d.std(ddof=1) / math.sqrt(len(d))
        assert math.log(pair.ratio_ci_high) == pytest.approx(d.mean() + half, rel=1e-9)
    by_pair = {(p.a, p.b): p for p in found.pairs}
    assert by_pair[("btrfs", "ext4")].significant
    assert not by_pair[("ext4", "xfs")].significant  # 17.8 k vs 17.5 k: not told apart
    # the drift between iterations cancels: blocking finds what Welch cannot see
    unblocked = {(p.a, p.b): p for p in compare(groups_of(SEED000), False).pairs}
    assert unblocked[("ext4", "xfs")].p_value > by_pair[("ext4", "xfs")].p_value


def test_unblocked_is_welch_on_logs_as_scipy_and_statsmodels_compute_it():
    from statsmodels.stats.weightstats import CompareMeans, DescrStatsW

    rng = np.random.default_rng(4)
    a, b = rng.lognormal(5, 0.1, 4), rng.lognormal(5.3, 0.4, 6)
    (pair,) = compare({"a": dict(enumerate(a)), "b": dict(enumerate(b))}, False).pairs
    assert pair.test == UNBLOCKED
    reference = stats.ttest_ind(np.log(a), np.log(b), equal_var=False)
    assert pair.p_value == pytest.approx(reference.pvalue, rel=1e-9)
    low, high = CompareMeans(DescrStatsW(np.log(a)), DescrStatsW(np.log(b))).tconfint_diff(
        alpha=ALPHA, usevar="unequal")
    assert (math.log(pair.ratio_ci_low), math.log(pair.ratio_ci_high)) == pytest.approx(
        (low, high), rel=1e-9)


def test_minimum_detectable_ratio_is_statsmodels_power_where_statsmodels_converges():
    """At n = 5 with 3 pairs statsmodels' solver converges: both give one answer."""
    from statsmodels.stats.power import TTestPower

    found = compare(groups_of(SEED000))
    for pair in found.pairs:
        d = np.log(SEED000[pair.a]) - np.log(SEED000[pair.b])
        effect = TTestPower().solve_power(nobs=5, alpha=ALPHA / 3, power=0.8)
        assert pair.mde_ratio == pytest.approx(math.exp(effect * d.std(ddof=1)), rel=1e-6)
        assert pair.mde_ratio > 1


def simulate(rng, n, noise, ratios, drift=0.2):
    """One synthetic campaign: log-normal runs around known ratios, iteration drift."""
    shift = rng.normal(0, drift, n)  # every target of an iteration moves together
    return {name: dict(enumerate(np.exp(math.log(1000 * r) + shift
                                        + rng.normal(0, noise, n)), 1))
            for name, r in ratios.items()}


@pytest.mark.parametrize("blocked", [True, False])
def test_intervals_cover_the_truth_and_never_contradict_their_verdicts(blocked):
    """Known ratios, log-normal noise 5-50 %, n 3-10: ≥ 94 % coverage in every cell, ≤ 5 %
    false 'significant' pairs when all targets are equal, no verdict against its interval."""
    rng = np.random.default_rng(2026)
    truths = {"a": 1.0, "b": 1.3, "c": 2.0}
    campaigns = 150
    contradictions = 0
    for n in (3, 5, 10):
        for noise in (0.05, 0.2, 0.5):
            covered = total = false_positive = null_pairs = 0
            for _ in range(campaigns):
                found = compare(simulate(rng, n, noise, truths), blocked)
                for pair in found.pairs:
                    truth = truths[pair.a] / truths[pair.b]
                    covered += pair.ratio_ci_low <= truth <= pair.ratio_ci_high
                    total += 1
                    excludes_one = not (pair.ratio_ci_low <= 1 <= pair.ratio_ci_high)
                    contradictions += excludes_one != pair.significant
                null = compare(simulate(rng, n, noise, {"a": 1, "b": 1, "c": 1}), blocked)
                false_positive += sum(p.significant for p in null.pairs)
                null_pairs += len(null.pairs)
            assert covered / total >= 0.94, (n, noise, covered / total)
            assert false_positive / null_pairs <= 0.05, (n, noise, false_positive)
    assert contradictions == 0


def test_the_table_pipeline_agrees_with_its_intervals():
    rng = np.random.default_rng(7)
    data = {t: list(rng.lognormal(math.log(m), 0.15, 4)) for t, m in
            (("ext4", 1000), ("xfs", 1150), ("btrfs", 600), ("zfs", 1000))}
    tests, records = compared_pairs(frame(data))
    pairs = table_of(records)
    assert len(pairs) == 6 and tests["test"].iloc[0] == BLOCKED
    excludes = ~((pairs.ratio_ci_low <= 1) & (pairs.ratio_ci_high >= 1))
    assert (excludes == pairs.significant).all()
    assert (pairs.p_adj < ALPHA).eq(pairs.significant).all()
    assert "same 4 iterations" in tests["reason"].iloc[0]


