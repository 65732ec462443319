"""The between-sitting spread from both sources (analysis/sittings/spread.py), the error
spent over sittings (looks.py) and a question decided over its looks (sequential.py):
against closed forms where the model has one, and small simulations with known truth
(benchmarks/pool_spread runs the large ones)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from fslab.analysis.sittings.looks import look_level, look_levels, spent
from fslab.analysis.sittings.repeat import PRIOR_TAU
from fslab.analysis.sittings.sequential import over_looks
from fslab.analysis.sittings.spread import (
    HISTORY,
    NOT_BORROWED,
    STATED,
    SittingEstimate,
    between_sittings,
)
from fslab.core.environment_record import SittingSpread

KNOWN = 1e7  # a history's df so large that τ is known


def one(estimate: float, se: float = 0.02, n: int = 5) -> SittingEstimate:
    return SittingEstimate(estimate, se, n, n - 1)


def draw(rng: np.random.Generator, mu: float, tau: float, n: int, sd: float
         ) -> SittingEstimate:
    """A sitting as the simulator makes one: its own effect, then n iterations."""
    values = mu + rng.normal(0, tau) + rng.normal(0, sd, n)
    return SittingEstimate(float(values.mean()), float(values.std(ddof=1) / math.sqrt(n)),
                           n, n - 1)


def test_with_tau_known_the_intervals_are_the_normal_models_own():
    """A history on huge df pins τ: the mean is N(ȳ, (τ² + σ²/n)/k), the next sitting
    N(ȳ, τ² + σ²/m + (τ² + σ²/n)/k); σ² on 8 df makes it a t, nearly."""
    sittings = [one(0.10, 0.01, 5), one(0.14, 0.01, 5)]
    known = SittingSpread(0.05, KNOWN, 9)
    found = between_sittings(sittings, known)
    assert found.source == HISTORY and found.tau == pytest.approx(0.05, rel=0.02)
    variance = (0.05 ** 2 + 0.01 ** 2) / 2
    low, high = found.mean_interval(0.05)
    half = stats.norm.isf(0.025) * math.sqrt(variance)
    assert (low + high) / 2 == pytest.approx(0.12, abs=1e-6)
    assert (high - low) / 2 == pytest.approx(half, rel=0.01)
    low, high = found.next_interval(0.05, 5)
    assert (high - low) / 2 == pytest.approx(
        stats.norm.isf(0.025) * math.sqrt(variance + 0.05 ** 2 + 0.01 ** 2), rel=0.01)


def test_one_sitting_with_history_is_the_repeat_interval():
    """k = 1: the posterior is the prior, the next sitting differs by two sittings'
    effects and both sittings' noise (τ known: 2τ² + s² + s²·n/m)."""
    found = between_sittings([one(0.2, 0.02, 10)], SittingSpread(0.04, KNOWN, 5))
    low, high = found.next_interval(0.05, 5)
    expected = stats.norm.isf(0.025) * math.sqrt(2 * 0.04 ** 2 + 0.02 ** 2 * (1 + 10 / 5))
    assert (high - low) / 2 == pytest.approx(expected, rel=0.02)
    assert found.q != found.q  # no Q from one sitting


def test_at_zero_spread_the_pool_is_the_fixed_effect_pool():
    """σ²/n alone (τ known 0): t on the sittings' df added up, inverse-variance weights."""
    sittings = [one(0.14, 0.03, 5), one(0.16, 0.03, 5), one(0.15, 0.03, 5)]
    found = between_sittings(sittings, SittingSpread(1e-5, KNOWN, 9))
    low, high = found.mean_interval(0.05)
    assert (high - low) / 2 == pytest.approx(stats.t.isf(0.025, 12) * 0.03 / math.sqrt(3),
                                             rel=0.01)


def test_sittings_are_weighted_by_their_iterations_not_their_own_spread():
    """w = 1/(τ² + σ²/n) with one pooled σ²: a 5-iteration sitting that happened to look
    steady does not outweigh two of 30."""
    sittings = [SittingEstimate(0.0, 0.02, 30, 29), SittingEstimate(0.0, 0.02, 30, 29),
                SittingEstimate(0.1, 0.005, 5, 4)]
    found = between_sittings(sittings, SittingSpread(0.02, KNOWN, 9))
    sigma2 = (29 * 30 * 0.02 ** 2 * 2 + 4 * 5 * 0.005 ** 2) / 62
    w = np.array([1 / (0.02 ** 2 + sigma2 / n) for n in (30, 30, 5)])
    assert found.within == pytest.approx(sigma2)
    assert found.weights == pytest.approx(tuple(w / w.sum()), rel=0.02)
    assert found.weights[2] < found.weights[0]


def test_a_second_sitting_that_agrees_is_surer_and_one_that_disagrees_wider():
    first = one(0.18, 0.03)
    alone = between_sittings([first], None)
    agree = between_sittings([first, one(0.19, 0.03)], None)
    disagree = between_sittings([first, one(0.45, 0.03)], None)
    assert alone.source == agree.source == STATED
    assert agree.tau < alone.tau < disagree.tau
    width = {name: b.mean_interval(0.05)[1] - b.mean_interval(0.05)[0]
             for name, b in (("agree", agree), ("disagree", disagree))}
    assert width["agree"] < width["disagree"]
    assert agree.mean_interval(0.0375)[0] > 0  # 1.20× twice: decided


def test_sittings_that_disagree_with_the_history_do_not_borrow_it():
    """Issue 58's example: 1.40× and 1.00× (SE 0.02 each) against τ̃ 0.05 on 12 df. The
    history is not borrowed (Q on 1 df), and the next interval holds both sittings."""
    sittings = [one(math.log(1.40)), one(math.log(1.00))]
    history = SittingSpread(0.05, 12.0, 6)
    found = between_sittings(sittings, history)
    assert found.source == NOT_BORROWED and found.q_p < 0.01
    assert found.prior.tau == pytest.approx(max(PRIOR_TAU, 0.05)) and found.prior.tau_df == 2
    low, high = found.next_interval(0.05, 5)
    assert low < 0 and high > math.log(1.40)
    kept = between_sittings(sittings, history, q_rule=False)
    assert kept.source == HISTORY and kept.tau < found.tau


def test_hwang_shih_decani_spending_and_its_looks():
    """γ = 4 over 6 sittings: 3.75 % by the second look (issue 58), α by the sixth; the
    looks' levels let a running sum of independent sittings cross at some look with
    chance α (simulated), and past the plan nothing is decided."""
    assert spent(2 / 6, 0.05) == pytest.approx(0.0375, abs=1e-4)
    assert spent(1.0, 0.05) == pytest.approx(0.05)
    levels = look_levels(0.05)
    assert levels[0] == pytest.approx(spent(2 / 6, 0.05), rel=0.01)
    assert all(a > b for a, b in itertools.pairwise(levels))
    rng = np.random.default_rng(11)
    sums = np.cumsum(rng.normal(size=(200_000, 6)), axis=1)
    crossed = np.zeros(len(sums), dtype=bool)
    for k, level in zip(range(2, 7), levels, strict=True):
        crossed |= np.abs(sums[:, k - 1]) >= stats.norm.isf(level / 2) * math.sqrt(k)
    assert crossed.mean() == pytest.approx(0.05, abs=0.002)
    assert look_level(7, 0.05) == 0.0 and look_level(1, 0.05) == 0.05


def test_deciding_after_every_sitting_keeps_its_error_rate_and_says_which_decided():
    """Nothing different (τ 0.05, 5 iterations a sitting, the stated prior), pooled after
    each of 6 sittings: a false faster/slower at any sitting in at most 5 % (a small
    version of benchmarks/pool_spread's 400 replicates); two sittings that agree at 1.20×
    decide at sitting 2."""
    rng = np.random.default_rng(5)
    false = 0
    for _ in range(40):
        sittings = [draw(rng, 0.0, 0.05, 5, 0.14) for _ in range(6)]
        found = over_looks(sittings, None, 0.05, "higher", 0.10, 5)
        false += found.decision in ("faster", "slower")
        assert len(found.looks) == 5 and not found.spent
    assert false <= 2
    agree = over_looks([one(math.log(1.2), 0.03), one(math.log(1.21), 0.03)], None, 0.05,
                       "higher", 0.10, 5)
    assert (agree.decision, agree.decided_at) == ("faster", 2)
    assert agree.last.level == pytest.approx(0.0375, rel=0.01)
