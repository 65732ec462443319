"""The best configuration of a swept job (analysis/factors/best.py): one answer per pair, and a
table that answers every swept job, cache-bound configurations set aside."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from fslab.analysis.cells.observations import per_run
from fslab.analysis.factors.best import BEST, NONE, WITHIN_REACH, best_table
from fslab.analysis.factors.levels import cell_levels, with_levels
from fslab.analysis.factors.sweeps import analyse_sweep, best_sentence
from fslab.analysis.pairs.comparisons import compare_targets
from tests.test_sweep_model import SETTINGS, simulated

QUESTIONS = {"w1": ("read", "iops")}


def swept(seed: int, iterations: int = 3, scales: dict[str, float] | None = None
          ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(runs with their levels, pairwise) of a simulated sweep, as the pipeline has them."""
    metrics = simulated(seed, iterations=iterations, cv=0.25, scales=scales)
    runs = per_run(metrics)
    _, pairwise = compare_targets(metrics, runs)
    return with_levels(runs, cell_levels(metrics)), pairwise


def test_a_pair_on_the_bests_own_variant_has_the_verdicts_answer():
    """Across simulated sweeps (CV 25 %, 5 iterations, 1.25×: pairs on the edge), a config
    on the best's variant is within reach exactly when its primary pair is the same or
    unresolved, with the pair's own interval; among them seeds where the best table's
    own family alone would have answered otherwise (two answers for one pair)."""
    agreed = differed_by_family = 0
    for seed in range(40):
        runs, pairwise = swept(seed, iterations=5, scales={"a": 1.0, "b": 1.25})
        best = best_table(runs, QUESTIONS, True, 0.10, set(), pairwise)
        alone = best_table(runs, QUESTIONS, True, 0.10, set())  # its own family only
        top = best[best["role"] == BEST].iloc[0]
        variant = str(top["variant"])
        primary = pairwise[(pairwise["workload"] == variant) & pairwise["primary"]]
        (pair,) = primary.itertuples()
        other = pair.b if pair.a == top["target"] else pair.a
        listed = best[(best["target"] == other) & (best["variant"] == variant)]
        name = f"{other} {variant}"
        if pair.decision in ("equivalent", "unresolved"):
            (row,) = listed.itertuples()
            a_is_best = pair.a == top["target"]
            low = 1 / pair.ratio_ci_high if a_is_best else pair.ratio_ci_low
            high = 1 / pair.ratio_ci_low if a_is_best else pair.ratio_ci_high
            assert (row.ratio_ci_low, row.ratio_ci_high) == pytest.approx((low, high))
            assert row.decision == pair.decision
        else:
            assert listed.empty
        within = pair.decision in ("equivalent", "unresolved")
        differed_by_family += within != (name in {f"{t} {v}" for t, v in zip(
            alone["target"], alone["variant"], strict=True)})
        agreed += 1
    assert agreed == 40
    assert differed_by_family > 0  # the cases that printed two answers for one pair


def test_the_other_pairs_are_one_family_and_a_sentence_never_contradicts_a_pair():
    runs, pairwise = swept(3)
    best = best_table(runs, QUESTIONS, True, 0.10, set(), pairwise)
    near = best[best["role"] == WITHIN_REACH]
    assert set(near["decision"]) <= {"equivalent", "unresolved"}
    sentence = best_sentence("w1", best)
    assert sentence.startswith("w1: best ")
    assert ("within reach" in sentence) != ("behind it" in sentence)


def test_cache_bound_configurations_are_set_aside_and_the_job_still_answered():
    runs, pairwise = swept(1)
    cells = {(str(t), str(w)) for t, w, job in zip(runs["target"], runs["workload"],
                                                    runs["job"], strict=True) if job == "w1"}
    keep = sorted(cells)[0]
    one_left = best_table(runs, QUESTIONS, True, 0.10, cells - {keep}, pairwise)
    (row,) = one_left.itertuples()
    assert row.role == BEST and row.target == keep[0] and row.compared == 0
    assert row.note.startswith(f"{len(cells) - 1} cache-bound, not crowned")
    sentence = best_sentence("w1", one_left)
    assert "(the only one compared)" in sentence and "behind" not in sentence

    none_left = best_table(runs, QUESTIONS, True, 0.10, cells, pairwise)
    (row,) = none_left.itertuples()
    assert row.role == NONE and math.isnan(row.ratio)
    assert best_sentence("w1", none_left).startswith("w1: no best configuration (")


def test_a_sweep_campaign_always_writes_a_best_row_per_swept_job():
    """analyse_sweep with everything cache-bound: the best table is not empty (so
    best.csv is written) and says why nothing is crowned."""
    metrics = simulated(2)
    runs = per_run(metrics)
    _, pairwise = compare_targets(metrics, runs)
    summary = runs[["target", "workload"]].drop_duplicates().assign(cache_bound=True)
    _, best = analyse_sweep(runs, cell_levels(metrics), SETTINGS, {}, summary, True, 0.10,
                            pairwise)
    assert list(best["role"]) == [NONE]
