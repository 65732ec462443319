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
from fslab.analysis.pairs.comparisons import compared_pairs
from fslab.core.campaign_settings import CampaignSettings
from fslab.core.pair import Pair, table_of
from tests.analysis.test_sweep_model import SETTINGS, simulated

QUESTIONS = {"w1": ("read", "iops")}


def swept(seed: int, iterations: int = 3, scales: dict[str, float] | None = None
          ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(runs with their levels, pairwise) of a simulated sweep, as the pipeline has them."""
    metrics = simulated(seed, iterations=iterations, cv=0.25, scales=scales)
    runs = per_run(metrics)
    _, pairwise = compared_pairs(metrics, runs)
    return with_levels(runs, cell_levels(metrics)), pairwise


def test_a_pair_on_the_bests_own_variant_has_the_verdicts_answer():
    """Across simulated sweeps (CV 25 %, 5 iterations, 1.25×: pairs on the edge), a config
    on the best's variant is within reach exactly when its primary pair is the same or
    unresolved, with the pair's own interval; among them seeds where the best table's
    own family alone would have answered otherwise (two answers for one pair)."""
    agreed = differed_by_family = 0
    for seed in range(20):
        runs, pairwise = swept(seed, iterations=5, scales={"a": 1.0, "b": 1.25})
        best = best_table(runs, QUESTIONS, True, 0.10, set(), pairwise)
        alone = best_table(runs, QUESTIONS, True, 0.10, set())  # its own family only
        top = best[best["role"] == BEST].iloc[0]
        variant = str(top["variant"])
        table = table_of(pairwise)
        primary = table[(table["workload"] == variant) & table["primary"]]
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
    assert agreed == 20
    assert differed_by_family > 0  # the cases that printed two answers for one pair


def test_the_other_pairs_are_one_family_and_a_sentence_never_contradicts_a_pair():
    runs, pairwise = swept(3)
    best = best_table(runs, QUESTIONS, True, 0.10, set(), pairwise)
    # A second swept job, a copy of the first: its comparisons join the same family, so
    # each of the first job's own comparisons is held to half the alpha (p_adj doubles).
    copy = runs.assign(job="w2", workload=runs["workload"].astype(str).str.replace(
        "w1", "w2"))
    both = best_table(pd.concat([runs, copy], ignore_index=True),
                      {**QUESTIONS, "w2": QUESTIONS["w1"]}, True, 0.10, set(), pairwise)
    own = best[(best["role"] == WITHIN_REACH) & best["p_adj"].notna()
               & ~best["configuration"].isin(_primary_names(best, pairwise))]
    assert len(own) >= 2
    joined = both[both["workload"] == "w1"].set_index("configuration").loc[
        own["configuration"]]
    families = (len(both[both["workload"] == "w2"]) - 1 + len(own)) / len(own)
    for row, after in zip(own.itertuples(), joined.itertuples(), strict=True):
        assert after.p_adj == pytest.approx(min(1.0, row.p_adj * families), rel=1e-6)
        assert after.ratio_ci_low < row.ratio_ci_low and after.ratio_ci_high > row.ratio_ci_high
    near = best[best["role"] == WITHIN_REACH]
    assert set(near["decision"]) <= {"equivalent", "unresolved"}
    sentence = best_sentence("w1", best)
    assert sentence.startswith("w1: best ")
    assert ("within reach" in sentence) != ("behind it" in sentence)


def _primary_names(best: pd.DataFrame, pairwise: list[Pair]) -> set[str]:
    """The configurations whose pair with the best is a primary pair of the verdicts."""
    top = best[best["role"] == BEST].iloc[0]
    return {str(c) for c, v in zip(best["configuration"], best["variant"], strict=True)
            if v == top["variant"] and c != top["configuration"]}


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
    _, pairwise = compared_pairs(metrics, runs)
    summary = runs[["target", "workload"]].drop_duplicates().assign(cache_bound=True)
    _, best = analyse_sweep(runs, cell_levels(metrics), CampaignSettings.from_table(SETTINGS),
                            {}, summary, True, 0.10, pairwise)
    assert list(best["role"]) == [NONE]
