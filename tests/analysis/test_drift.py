"""Shared variation between targets within an iteration, checked against known truth."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from fslab.analysis.cells.drift import drift_note, iteration_drift, shared_variation


def campaign(rng: np.random.Generator, shared_sd: float, own_sd: float,
             iterations: int = 5) -> pd.DataFrame:
    """Per-run IOPS of 3 targets × 5 workloads: log value = cell + block shift + noise."""
    rows = []
    for iteration in range(1, iterations + 1):
        for w, workload in enumerate(["a", "b", "c", "d", "e"]):
            shift = rng.normal(0, shared_sd)
            for t, target in enumerate(["ext4", "xfs", "btrfs"]):
                value = np.exp(8 + t + w / 3 + shift + rng.normal(0, own_sd))
                rows.append({"target": target, "workload": workload, "op": "read",
                             "metric": "iops", "iteration": iteration, "value": value})
    return pd.DataFrame(rows)


@pytest.mark.parametrize(("shared_sd", "truth"), [(0.0, 0.0), (0.1, 0.5), (0.2, 0.8)])
def test_shared_share_estimates_the_true_share(shared_sd, truth):
    rng = np.random.default_rng(5)
    found = [iteration_drift(campaign(rng, shared_sd, 0.1))[1] for _ in range(100)]
    shares = [f.share for f in found]
    assert np.median(shares) == pytest.approx(truth, abs=0.08)
    assert np.mean([f.low <= truth <= f.high for f in found]) >= 0.93


@pytest.mark.parametrize(("shared_sd", "truth"), [(0.0, 0.0), (0.1, 0.5)])
def test_shared_share_at_two_targets_one_workload_three_iterations(shared_sd, truth):
    """The smallest design: no upward bias (median at the truth) and an interval that
    covers it at its level (the block-mean estimate read 0.19–0.24 at truth 0)."""
    rng = np.random.default_rng(11)
    found = []
    for _ in range(600):
        rows = []
        for iteration in (1, 2, 3):
            shift = rng.normal(0, shared_sd)
            rows += [{"workload": "w", "op": "read", "metric": "iops", "iteration": iteration,
                      "target": t, "log": shift + rng.normal(0, 0.1)} for t in "ab"]
        found.append(shared_variation(pd.DataFrame(rows)))
    assert np.median([f.share for f in found]) == pytest.approx(truth, abs=0.05)
    assert np.mean([f.low <= truth <= f.high for f in found]) >= 0.94


def test_note_only_when_there_is_something_to_say():
    rng = np.random.default_rng(6)
    quiet = iteration_drift(campaign(rng, 0.0, 0.01))
    assert drift_note(*quiet) is None
    loud = iteration_drift(campaign(rng, 0.2, 0.05))
    note = drift_note(*loud)
    assert note is not None and "blocked by iteration" in note
    assert iteration_drift(campaign(rng, 0.2, 0.05, iterations=2))[0].empty
