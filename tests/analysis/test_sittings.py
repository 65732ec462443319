"""Pooling sittings and the repeat interval (analysis/sittings): held to statsmodels where
a library computes the same thing, and to known truth by small simulations (the hundreds
of replicates are benchmarks/pool_coverage's)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import stats

from fslab.analysis.sittings.pooled import BORROWED, TWO, fixed_effect, pool
from fslab.analysis.sittings.repeat import (
    PRIOR,
    PRIOR_TAU,
    SittingSpread,
    repeat_interval,
    spread_between_sittings,
)

CV = math.sqrt(math.log1p(0.01))


def sittings(rng: np.random.Generator, k: int, log_ratio: float, tau: float, n: int = 5
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """k sittings of one pair (each target's level N(0, τ) per sitting; paired t inside)."""
    level = rng.normal(0, tau, (k, 2))
    truth = log_ratio + level[:, 0] - level[:, 1]
    d = truth[:, None] + rng.normal(0, CV, (k, n)) - rng.normal(0, CV, (k, n))
    return d.mean(axis=1), d.std(axis=1, ddof=1) / math.sqrt(n), truth


def test_equal_weights_is_statsmodels_hksj():
    """With equal standard errors the pooled interval is statsmodels' Hartung–Knapp–
    Sidik–Jonkman one (its "random effect wls" row) at any level."""
    from statsmodels.stats.meta_analysis import combine_effects

    rng = np.random.default_rng(3)
    for k in (3, 5, 8):
        y = rng.normal(0.1, 0.05, k)
        s = np.full(k, 0.03)
        for level in (0.05, 0.01):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                found = combine_effects(y, s * s, method_re="iterated", use_t=True,
                                        alpha=level)
            low, high = found.conf_int(alpha=level, use_t=True)[3]
            mine = pool(y, s, level)
            assert mine.estimate == pytest.approx(found.mean_effect_re, abs=1e-12)
            assert (mine.low, mine.high) == pytest.approx((low, high), abs=1e-9)
            assert mine.tau == pytest.approx(math.sqrt(max(found.tau2, 0)), abs=1e-9)


def test_next_interval_is_the_exact_prediction_interval():
    y, s = np.array([0.10, 0.18, 0.13, 0.07]), np.full(4, 0.02)
    found = pool(y, s)
    half = stats.t.isf(0.025, 3) * np.std(y, ddof=1) * math.sqrt(1 + 1 / 4)
    assert (found.next_low, found.next_high) == pytest.approx((y.mean() - half,
                                                                y.mean() + half))
    assert found.i2 > 0.5 and found.tau > 0.02


def test_two_sittings_say_what_they_cannot():
    found = pool([0.1, 0.2], [0.03, 0.03])
    assert math.isnan(found.next_low) and found.note == TWO
    assert found.low < 0.15 < found.high
    borrowed = pool([0.1, 0.2], [0.03, 0.03], spread=SittingSpread(0.05, 14, 12))
    assert borrowed.note == BORROWED and borrowed.next_low < 0.15 < borrowed.next_high
    with pytest.raises(ValueError):
        pool([0.1], [0.03])


def test_pooled_coverage_by_simulation():
    """k = 3 and 5 sittings of 5 iterations, τ 0 and 0.1, true ratio 1.15: the CI covers
    the true mean, the next interval a new sitting's true ratio; A/A rarely 'faster'."""
    rng = np.random.default_rng(11)
    replicates = 150
    for tau in (0.0, 0.10):
        for k in (3, 5):
            covered = following = faster = 0
            for _ in range(replicates):
                y, s, truth = sittings(rng, k + 1, math.log(1.15), tau)
                found = pool(y[:k], s[:k])
                covered += found.low <= math.log(1.15) <= found.high
                following += found.next_low <= truth[k] <= found.next_high
                y0, s0, _ = sittings(rng, k, 0.0, tau)
                faster += pool(y0, s0).low > 0
            assert covered / replicates >= 0.90, (tau, k, covered)
            assert following / replicates >= 0.88, (tau, k, following)
            assert faster / replicates <= 0.06, (tau, k, faster)


def test_pooled_width_at_tau_zero_against_the_fixed_effect_pool():
    rng = np.random.default_rng(5)
    ratios = []
    for _ in range(200):
        y, s, _ = sittings(rng, 5, 0.1, 0.0)
        found = pool(y, s)
        _, low, high = fixed_effect(y, s, [4] * 5)
        ratios.append((found.high - found.low) / (high - low))
    assert 1.0 < float(np.median(ratios)) <= 1.5


def test_host_spread_by_moments_and_prior():
    assert spread_between_sittings([]) == PRIOR
    # one campaign of 3 sittings, zero noise: τ̂² is the sittings' variance
    found = spread_between_sittings([([0.0, 0.1, 0.2], [0.0, 0.0, 0.0])])
    assert found.raw_tau == pytest.approx(0.1)
    assert found.df == 2 and found.sittings == 3
    assert found.tau ** 2 == pytest.approx((2 * PRIOR_TAU ** 2 + 2 * 0.01) / 4)
    # many campaigns of sittings drawn with known τ: the estimate finds it
    rng = np.random.default_rng(2)
    groups = [sittings(rng, 4, 0.0, 0.1)[:2] for _ in range(200)]
    assert spread_between_sittings(groups).tau == pytest.approx(0.1 * math.sqrt(2), rel=0.12)


def test_repeat_interval_floor_is_root_two():
    """No spread between sittings: the repeat interval is √2 × today's (the next
    sitting's own noise), on today's degrees of freedom."""
    low, high = repeat_interval(0.1, 0.02, 4, SittingSpread(0.0, 50, 10))
    today = 2 * stats.t.isf(0.025, 4) * 0.02
    assert (high - low) / today == pytest.approx(math.sqrt(2))


def test_repeat_interval_covers_the_following_sitting():
    """Five earlier sittings of three questions on this host; τ 0.05 and 0.10 per target:
    the repeat interval holds the following sitting's estimate (≥ 85 % in the issue)."""
    rng = np.random.default_rng(8)
    for tau in (0.05, 0.10):
        covered = 0
        for _ in range(150):
            spread = spread_between_sittings([sittings(rng, 5, 0.1, tau)[:2] for _ in range(3)])
            y, s, _ = sittings(rng, 2, 0.1, tau)
            low, high = repeat_interval(y[0], s[0], 4, spread)
            covered += low <= y[1] <= high
        assert covered / 150 >= 0.85, (tau, covered)


def test_decisions_read_both_intervals_by_the_verdicts_rule():
    from fslab.analysis.sittings.pooled import decisions

    steady = pool([0.20, 0.21, 0.19, 0.20], [0.01] * 4)  # clearly 1.22×, every time
    assert decisions(steady, "higher", 0.10) == ("faster", "faster")
    assert decisions(steady, "lower", 0.10) == ("slower", "slower")
    moving = pool([0.15, 0.35, 0.22, 0.28], [0.01] * 4)  # faster on average, not each time
    assert decisions(moving, "higher", 0.10) == ("faster", "unresolved")
    same = pool([0.01, -0.01, 0.0, 0.005], [0.005] * 4)
    assert decisions(same, "higher", 0.10) == ("equivalent", "equivalent")
    assert decisions(pool([0.2, 0.21], [0.01] * 2), "higher", 0.1)[1] == "unresolved"
