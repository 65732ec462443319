"""The between-sitting spread from both sources (analysis/sittings/spread.py), the error
spent over sittings (looks.py) and a question decided over its looks (sequential.py):
against closed forms where the model has one, and small simulations with known truth
(benchmarks/pool_spread runs the large ones)."""

from __future__ import annotations

import itertools
import math
from dataclasses import replace

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
    shared_spread,
    spread_for_job,
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


def test_two_sittings_that_agree_decide_as_one_does():
    """1.20×, τ 0.03, 5 iterations (σ 0.07), no history: pooled, "faster" at sitting 2 in
    at least 16 of 20 and never in fewer than one sitting alone less one
    (benchmarks/pool_spread: 400 replicates)."""
    rng = np.random.default_rng(20)
    alone = pooled = 0
    crit = stats.t.isf(0.025, 4)
    for _ in range(20):
        first, second = (draw(rng, math.log(1.2), 0.03, 5, 0.07) for _ in range(2))
        alone += first.estimate - crit * first.se > 0
        found = over_looks([first, second], None, 0.05, "higher", 0.10, 5)
        pooled += found.decision == "faster"
    assert pooled >= 16 and pooled >= alone - 1


def test_a_history_right_and_a_history_half_the_truth():
    """τ̃ 0.05 on 12 df, 5 iterations (σ 0.14): where the truth is the history's, the
    mean's interval covers and the next sitting's holds; where it is twice it, the Q rule
    drops the history more often and the mean's interval still covers most of the time
    (a small version of benchmarks/pool_spread's grid, whose figures docs/statistics.md
    gives)."""
    rng = np.random.default_rng(12)
    history = SittingSpread(0.05, 12.0, 10)
    found = {}
    for tau in (0.05, 0.10):
        for k in (2, 6):
            mean = following = dropped = 0
            for _ in range(60):
                sittings = [draw(rng, 0.0, tau, 5, 0.14) for _ in range(k)]
                between = between_sittings(sittings, history)
                low, high = between.mean_interval(0.05)
                next_low, next_high = between.next_interval(0.05, 5)
                mean += low <= 0 <= high
                following += next_low <= draw(rng, 0.0, tau, 5, 0.14).estimate <= next_high
                dropped += between.source == NOT_BORROWED
            found[tau, k] = (mean / 60, following / 60, dropped / 60)
    for k in (2, 6):
        assert found[0.05, k][0] >= 0.9 and found[0.05, k][1] >= 0.88
        assert found[0.10, k][2] > found[0.05, k][2]
    assert found[0.10, 2][0] >= 0.78 and found[0.10, 6][0] >= 0.85


def test_the_sittings_that_disagree_with_the_history_do_not_hold_next_time():
    """Issue 58's example through the pooled table and its words: 1.40× and 1.00× (SE
    0.02) against τ̃ 0.05 on 12 df do not "hold next time", and the words say the
    history was not borrowed and why."""
    import pandas as pd

    from fslab.analysis.sittings.sitting import SITTING_PAIRS, sittings_of
    from fslab.analysis.sittings.table import pooled_table
    from fslab.analysis.sittings.words import pooled_sentence

    rows = pd.DataFrame([{"sitting": f"s{i}", "host": "h", "workload": "w", "op": "read",
                          "metric": "iops", "primary": True, "a": "a", "b": "b",
                          "estimate": math.log(ratio), "se": 0.02, "df": 4.0,
                          "machine_s": 1.0, "iterations": 5}
                         for i, ratio in enumerate((1.40, 1.00))], columns=SITTING_PAIRS)
    (question,), _ = pooled_table(sittings_of(rows), spread=SittingSpread(0.05, 12.0, 10))
    said = pooled_sentence(question)
    assert "holds next time" not in said
    assert "disagree more than this host's history allows" in said and "Q " in said
    assert question.next_low <= 1.0 and question.next_high >= 1.40


def test_unequal_sittings_next_interval_and_a_known_zero_spread():
    """Iterations [30, 30, 5]: the next interval holds a 5-iteration sitting (τ 0.05, the
    stated prior); at τ = 0 with a history that says so (τ̃ 0.005 on 12 df) the mean's
    interval is the inverse-variance pool's width, within 10 %."""
    from fslab.analysis.sittings.pooled import fixed_effect

    rng = np.random.default_rng(30)
    held = 0
    for _ in range(100):
        sittings = [draw(rng, 0.0, 0.05, n, 0.14) for n in (30, 30, 5)]
        low, high = between_sittings(sittings, None).next_interval(0.05, 5)
        held += low <= draw(rng, 0.0, 0.05, 5, 0.14).estimate <= high
    assert held >= 92
    ratios = []
    for _ in range(30):
        sittings = [draw(rng, 0.0, 0.0, 5, 0.14) for _ in range(3)]
        low, high = between_sittings(sittings, SittingSpread(0.005, 12.0, 10)).mean_interval(
            0.05)
        _, fixed_low, fixed_high = fixed_effect([s.estimate for s in sittings],
                                                [s.se for s in sittings],
                                                [s.df for s in sittings], 0.05)
        ratios.append((high - low) / (fixed_high - fixed_low))
    assert float(np.median(ratios)) <= 1.1


def _job(rng: np.random.Generator, levels: list[float], spread: float, n: int = 5
         ) -> list[SittingEstimate]:
    """One sitting of one job's three targets, moved by the sitting per target (the
    simulator's `sitting`), its three pairs paired over n iterations."""
    moved = np.array(levels) + rng.normal(0, spread, 3)
    runs = moved[None, :] + rng.normal(0, 0.1, (n, 1)) + rng.normal(0, 0.05, (n, 3))
    out = []
    for a, b in ((0, 1), (0, 2), (1, 2)):
        diff = runs[:, b] - runs[:, a]
        out.append(SittingEstimate(float(diff.mean()), float(diff.std(ddof=1) / math.sqrt(n)),
                                   n, n - 1))
    return out


def _campaign(rng: np.random.Generator, spread: float) -> list[SittingEstimate]:
    """One sitting of three such jobs: nine questions."""
    return [pair for _ in range(3) for pair in _job(rng, [0.0, 0.1, 0.2], spread)]


def test_the_questions_of_a_pool_read_one_spread_counted_by_their_contrasts():
    """Nine questions of three jobs × three targets hold six contrasts: their summed
    log-likelihoods of τ weigh 6/9 each; two sittings that agree then narrow τ — and a
    question's intervals — where its own two sittings could not, and a question whose
    sittings disagree beyond the shared τ is read on its own."""
    rng = np.random.default_rng(7)
    sittings = [_campaign(rng, 0.01) for _ in range(2)]
    questions = [[s[q] for s in sittings] for q in range(9)]
    jobs = [(questions[j:j + 3], 2) for j in (0, 3, 6)]
    shared = shared_spread(jobs)
    assert shared.questions == 9 and shared.contrasts == 6
    own_sum = shared_spread([(questions, 9)]).log_likelihood
    assert np.allclose(shared.log_likelihood, own_sum * 6 / 9)
    small = shared_spread([(questions[:3], 2), (questions[3:4], 1)])  # each job its weight
    assert np.allclose(small.log_likelihood,
                       shared_spread([(questions[:3], 3)]).log_likelihood * 2 / 3
                       + shared_spread([(questions[3:4], 1)]).log_likelihood)
    alone = between_sittings(questions[0], None)
    together = between_sittings(questions[0], None, shared=shared)
    assert alone.shared == 1 and together.shared == 9
    assert together.tau_high < alone.tau_high
    width = lambda b: np.subtract(*b.next_interval(0.05, 5)[::-1])  # noqa: E731
    assert width(together) < 0.85 * width(alone)
    apart = [questions[0][0], replace(questions[0][1],
                                      estimate=questions[0][0].estimate + 0.5)]
    found = between_sittings(apart, None, shared=shared)
    assert found.shared == 1 and found.shared_q_p < 0.10
    assert found.tau_high == between_sittings(apart, None).tau_high


def test_one_spread_for_a_campaign_keeps_its_intervals_by_simulation():
    """A small version of benchmarks/pool_shared's equal scenario (docs/statistics.md has
    its 200 campaigns): three jobs × three targets, each target moved ±3.5 % per sitting
    (τ of a pair 0.05), three sittings, τ read from the nine questions together: the
    mean's 95 % interval covers the true ratio and the next sitting's interval covers a
    fourth sitting's estimate about as often as nominal, and the next interval is
    narrower than the question alone gives."""
    rng = np.random.default_rng(11)
    truth = [0.1, 0.2, 0.1] * 3
    mean_hits = next_hits = total = 0
    narrower = []
    for _ in range(40):
        sittings = [_campaign(rng, 0.035) for _ in range(4)]
        questions = [[s[q] for s in sittings] for q in range(9)]
        shared = shared_spread([([q[:3] for q in questions[j:j + 3]], 2) for j in (0, 3, 6)])
        for q, own in enumerate(questions):
            found = between_sittings(own[:3], None, shared=shared)
            low, high = found.mean_interval(0.05)
            next_low, next_high = found.next_interval(0.05, 5)
            mean_hits += low <= truth[q] <= high
            next_hits += next_low <= own[3].estimate <= next_high
            total += 1
            alone = between_sittings(own[:3], None).next_interval(0.05, 5)
            narrower.append((next_high - next_low) / (alone[1] - alone[0]))
    assert mean_hits / total >= 0.90 and next_hits / total >= 0.88
    assert float(np.median(narrower)) < 0.9


def test_a_job_that_moves_more_than_the_campaign_reads_its_own_spread():
    """Three jobs of three targets over three sittings: where every target moves alike
    each job reads the campaign's nine questions; where one job's targets move fifteen
    times as far, that job reads its own three and the steady jobs the other six."""
    rng = np.random.default_rng(3)

    def jobs_of(spreads: list[float]) -> dict[int, tuple[list[list[SittingEstimate]], int]]:
        sittings = [[_job(rng, [0.0, 0.1, 0.2], spread) for spread in spreads]
                    for _ in range(3)]
        return {j: ([[s[j][p] for s in sittings] for p in range(3)], 2) for j in range(3)}

    alike = jobs_of([0.01, 0.01, 0.01])
    assert all(spread_for_job(alike, j).questions == 9 for j in range(3))
    apart = jobs_of([0.15, 0.01, 0.01])
    assert spread_for_job(apart, 0).questions == 3
    assert spread_for_job(apart, 0).contrasts == 2
    assert spread_for_job(apart, 1).questions == 6  # the steady jobs leave it out


def test_the_pool_reads_its_primary_questions_together_by_workload():
    """Through the pool as `fslab pool` runs it: three targets on two workloads, one of
    them with two ops (its ops move together: still two contrasts), two sittings that
    agree: every primary question's spread rests on all six questions' four contrasts,
    the words say so, and an exploratory question keeps its own."""
    import pandas as pd

    from fslab.analysis.sittings.sitting import SITTING_PAIRS, sittings_of
    from fslab.analysis.sittings.table import pooled_table
    from fslab.analysis.sittings.words import pooled_sentence

    rows = []
    for sitting, shift in (("s1", 0.0), ("s2", 0.01)):
        for workload, ops in (("randread", ["read"]), ("mixed", ["read", "write"])):
            for op in ops:
                for a, b, ratio in (("ext4", "xfs", 1.0), ("ext4", "btrfs", 0.8),
                                    ("xfs", "btrfs", 0.8)):
                    rows.append({"sitting": sitting, "host": "h", "workload": workload,
                                 "op": op, "metric": "iops", "primary": True, "a": a,
                                 "b": b, "estimate": math.log(ratio) + shift, "se": 0.03,
                                 "df": 4.0, "machine_s": 1.0, "iterations": 5})
    rows.append({**rows[0], "metric": "lat_p99", "primary": False})
    rows.append({**rows[-1], "sitting": "s2"})
    pooled, _ = pooled_table(sittings_of(pd.DataFrame(rows, columns=SITTING_PAIRS)))
    primary = [q for q in pooled if q.primary]
    assert len(primary) == 9
    assert {(q.spread_questions, q.spread_contrasts) for q in primary} == {(9, 4.0)}
    assert "over the 9 questions' 4 contrasts" in pooled_sentence(primary[0])
    assert [q.spread_questions for q in pooled if not q.primary] == [1]
