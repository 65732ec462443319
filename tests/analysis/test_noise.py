"""Where the noise comes from (issue 45): noise.csv recovers the simulator's variance
components with intervals that hold them, says where the spread does not fall with run
length, and the planner picks long runs where a run's own noise dominates and a run is
dear to start, the campaign's own where each file system's luck does."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from fslab.analysis.cells.noise import best_runtime, estimate, within_spread
from fslab.analysis.pairs.model import compare, weighted_mean
from fslab.analysis.pairs.sequential import look_alpha
from fslab.core.pair import Pair
from fslab.run.resolve import plan_workload
from tests.analysis.test_simulator import run_sim


def runs(rng: np.random.Generator, between: float, within: float, seconds: int, n: int,
         trend: float = 0.0) -> tuple[list[float], list[tuple[np.ndarray, np.ndarray]]]:
    values, series = [], []
    sigma = math.sqrt(math.log1p(within ** 2 / 0.1))
    for _ in range(n):
        t = 0.1 * np.arange(1, 10 * seconds + 1)
        v = math.exp(rng.normal(0, between)) * np.exp(rng.normal(0, sigma, len(t))) * (
            1 + trend * t)
        values.append(float(v.mean()))
        series.append((t, v))
    return values, series


def test_the_components_are_recovered_and_their_intervals_hold_them():
    """200 simulated cells (between 5 %, within 10 % at 1 s, 3 s runs, 10 iterations): each
    interval holds its truth in about 95 % of cells, and the best run length is near
    √(c σw²/σb²) = √(2 × 0.01 / 0.0025) = 2.8 s."""
    rng = np.random.default_rng(7)
    held_b = held_w = 0
    lengths = []
    for _ in range(200):
        values, series = runs(rng, 0.05, 0.10, 3, 10)
        found = estimate(values, [3.0] * 10, [2.0] * 10, series)
        held_w += found["sigma_within_1s_low"] <= 0.10 <= found["sigma_within_1s_high"]
        held_b += found["sigma_between_low"] <= 0.05 <= found["sigma_between_high"]
        lengths.append(found["best_runtime_s"])
    assert held_w >= 180 and held_b >= 180, (held_w, held_b)
    assert 2.0 <= float(np.median(lengths)) <= 4.5
    assert best_runtime(2.0, 0.10, 0.05) == pytest.approx(math.sqrt(2 * 0.01 / 0.0025))


def test_a_spread_that_does_not_fall_with_run_length_is_said():
    """A run whose throughput drifts within it (a cache filling) has one-second blocks far
    more spread than its half-second blocks predict: not falling with length."""
    rng = np.random.default_rng(3)
    _, steady = runs(rng, 0.05, 0.05, 6, 8)
    _, drifting = runs(rng, 0.05, 0.05, 6, 8, trend=0.15)
    assert estimate([1.0] * 8, [6.0] * 8, [2.0] * 8, steady)["falls_with_length"]
    found = estimate([1.0] * 8, [6.0] * 8, [2.0] * 8, drifting)
    assert not found["falls_with_length"] and "does not fall" in found["note"]
    assert math.isnan(found["best_runtime_s"])
    assert within_spread([], 1.0) == (math.nan, 0)


def test_weights_change_nothing_when_equal_and_weigh_precise_runs_more():
    rng = np.random.default_rng(5)
    values = rng.normal(0.1, 0.05, 9)
    mean, sd, se = weighted_mean(values, np.ones(9))
    assert mean == pytest_approx(values.mean()) and sd == pytest_approx(values.std(ddof=1))
    assert se == pytest_approx(values.std(ddof=1) / 3)
    weighted, _, _ = weighted_mean(np.array([0.0, 1.0]), np.array([1.0, 3.0]))
    assert weighted == pytest_approx(0.75)
    groups = {"a": {i: math.exp(v) for i, v in enumerate(values, 1)},
              "b": dict.fromkeys(range(1, 10), 1.0)}
    plain = compare(groups, True, family=1)
    same = compare(groups, True, family=1, weights=dict.fromkeys(range(1, 10), 2.0))
    assert not isinstance(plain, str) and not isinstance(same, str)
    assert same.pairs[0].ratio_ci_low == pytest_approx(plain.pairs[0].ratio_ci_low)


def pytest_approx(value: float) -> object:
    import pytest

    return pytest.approx(value, rel=1e-9)


def plan_for(between: float, within: float, fixed: float) -> object:
    row = Pair(workload="w1", ratio=1.06, se_log=0.03, n_pairs=5, family=1)
    noise = pd.DataFrame([{"target": t, "workload": "w1", "sigma_between": between,
                           "sigma_between_high": between, "sigma_within_1s": within,
                           "fixed_cost_s": fixed, "runtime_s": 2.0,
                           "falls_with_length": True} for t in ("a", "b")])
    return plan_workload([row], {"a", "b"}, 20, noise, 2, look_alpha(2), 0.10,
                         {"a": fixed + 2, "b": fixed + 2})


def test_the_planner_buys_long_runs_only_where_the_noise_within_a_run_dominates():
    long = plan_for(between=0.005, within=0.15, fixed=5.0)
    assert long.runtime >= 4 and "runs of" in long.said and long.weight > 1
    short = plan_for(between=0.08, within=0.02, fixed=1.0)
    assert short.runtime in (0, 1, 2)  # the campaign's own length, or shorter


def test_a_campaign_with_variance_components_writes_noise_and_machine_time(tmp_path):
    """The simulator's components end to end: noise.csv per primary cell, pairwise.csv's
    machine_s (each run 3 s fixed + 3 s measured: 6 s), the campaign's decided line."""
    from pathlib import Path

    from fslab.plan.loading import resolve
    from fslab.plan.schema import CampaignFile, Overrides

    parsed = CampaignFile.model_validate({
        "name": "noise", "iterations": 6, "seed": 2, "runtime": 3, "ceiling": False,
        "target": [{"name": "a", "fs": "null"}, {"name": "b", "fs": "null", "scale": 1.3}],
        "workload": [{"preset": "null", "options": {"cv": 0.0, "between": 0.03,
                                                    "within": 0.08, "fixed_s": 3.0}}]})
    out = run_sim(tmp_path, "noise", resolve(parsed, Overrides(), Path.cwd()))
    noise = pd.read_csv(out / "stats" / "noise.csv")
    assert set(noise["cell"]) == {"a w1", "b w1"}
    assert {"cell", "sigma_between", "sigma_within_1s", "fixed_cost_s",
            "best_runtime_s"} <= set(noise.columns)
    assert noise["fixed_cost_s"].between(2.9, 3.5).all()
    pairs = pd.read_csv(out / "stats" / "pairwise.csv")
    primary = pairs[pairs["primary"]]
    assert primary["machine_s"].iloc[0] >= 2 * 6 * 6 * 0.99
    verdicts = (out / "stats" / "verdicts.txt").read_text()
    assert "Decided 1 of 1 questions in 1 min" in verdicts
