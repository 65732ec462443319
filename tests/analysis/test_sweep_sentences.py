"""The sweep's sentences (analysis/factors/sweeps.py) on tables written by hand: what a
line says whatever the p-values of a run happen to be."""

from __future__ import annotations

import pandas as pd

from fslab.analysis.factors.aging_answers import CACHE_BOUND
from fslab.analysis.factors.best import BEST_COLUMNS
from fslab.analysis.factors.effects import EFFECT_COLUMNS
from fslab.analysis.factors.sweeps import sweep_sentences


def _effects(interaction_p: float) -> pd.DataFrame:
    row = {"workload": "aged", "op": "write", "metric": "iops", "factor": "age",
           "level": "thesis-99", "reference": "fresh", "ratio": 0.9, "ratio_ci_low": 0.8,
           "ratio_ci_high": 1.01, "p_adj": 0.2, "p_value": 0.1, "targets": "ext4, xfs",
           "interaction_p": interaction_p, "interaction_p_adj": interaction_p,
           "by_target": "ext4 0.8×, xfs 1.0×", "first_by_level": "fresh: ext4; thesis-99: xfs",
           "ranking_changes": True, "note": ""}
    return pd.DataFrame([row], columns=EFFECT_COLUMNS)


def _best(note: str) -> pd.DataFrame:
    return pd.DataFrame([{"workload": "aged", "op": "write", "metric": "iops", "role": "none",
                          "configuration": "", "note": note}], columns=BEST_COLUMNS)


def test_a_cache_bound_job_says_so_on_every_line_that_answers():
    """Issue 59: an interaction that happens to fall below α on cache-bound cells says
    the ranking changes only beside the word cache-bound; without cache-bound cells the
    line is as before."""
    for p in (0.01, 0.5):
        rows = sweep_sentences(_effects(p), _best("4 cache-bound, not crowned: a, b, c, d"))
        answering = [r["text"] for r in rows["aged"] if r["kind"] == "factor"]
        assert answering and all(CACHE_BOUND in text for text in answering)
    plain = sweep_sentences(_effects(0.01), _best("no configuration measured a positive value"))
    texts = [r["text"] for r in plain["aged"] if r["kind"] == "factor"]
    assert any("the ranking changes" in t for t in texts)
    assert not any(CACHE_BOUND in t for t in texts)
