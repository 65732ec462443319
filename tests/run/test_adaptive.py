"""Adaptive runs keep their error rate (issue 21): the two-stage rule of fslab.run.adaptive,
simulated with known truth, 20,000 replicates per setting, through the project's own
functions (the sizes it would choose, the t inference the verdicts use)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from fslab.analysis.pairs.model import ALPHA, t_inference
from fslab.analysis.pairs.power import MIN_SECOND_STAGE, detectable_sizes, interval_sizes

REPLICATES = 20_000
PILOT = 3  # start at 3 ...
MAX_ITERATIONS = 20  # ... up to 20
CV = 0.10
SIGMA = math.sqrt(math.log1p(CV**2))  # SD of one target's log values


def two_stage(rng: np.random.Generator, kind: str, goal: float,
              true_ratio: float = 1.0) -> tuple[float, float, np.ndarray]:
    """A/B campaigns of 2 targets: (false-or-true positive rate, interval coverage of the
    true ratio, the second-stage sizes chosen)."""
    room = MAX_ITERATIONS - PILOT
    a = rng.normal(0, SIGMA, (REPLICATES, PILOT))
    b = rng.normal(0, SIGMA, (REPLICATES, PILOT))
    if kind == "detectable":
        sizes = detectable_sizes((a - b).std(axis=1, ddof=1), goal, ALPHA, room)
    else:
        cells = np.maximum(a.std(axis=1, ddof=1), b.std(axis=1, ddof=1))
        sizes = interval_sizes(cells, goal, room)
    positive = covered = 0
    for size in np.unique(sizes):
        rows = int((sizes == size).sum())
        diff = (rng.normal(math.log(true_ratio), SIGMA, (rows, size))
                - rng.normal(0, SIGMA, (rows, size)))
        _, p, low, high = t_inference(diff.mean(axis=1),
                                      diff.std(axis=1, ddof=1) / math.sqrt(size),
                                      np.full(rows, size - 1.0), ALPHA)
        positive += int((p < ALPHA).sum())
        covered += int(((low <= math.log(true_ratio)) & (math.log(true_ratio) <= high)).sum())
    return positive / REPLICATES, covered / REPLICATES, sizes


@pytest.mark.parametrize(("kind", "goal"), [("detectable", 10), ("detectable", 15),
                                            ("detectable", 20), ("detectable", 30),
                                            ("ci", 5), ("ci", 10), ("ci", 15)])
def test_aa_false_positives_stay_at_5_percent(kind, goal):
    rng = np.random.default_rng([len(kind), goal])
    false_positive, coverage, sizes = two_stage(rng, kind, goal)
    assert false_positive <= 0.055, (kind, goal, false_positive)
    assert coverage >= 0.945
    assert sizes.min() >= MIN_SECOND_STAGE and sizes.max() <= MAX_ITERATIONS - PILOT
    assert len(set(sizes.tolist())) > 1  # the pilot really chose


def test_a_real_difference_is_covered_and_mostly_found():
    rng = np.random.default_rng(3)
    found, coverage, _ = two_stage(rng, "detectable", 15, true_ratio=1.15)
    assert coverage >= 0.945
    assert found > 0.6  # planned for 80 % power from a 3-iteration pilot's spread


def test_sizes_grow_with_noise_and_shrink_with_looser_goals():
    sd = np.array([0.02, 0.05, 0.1, 0.2, math.nan])
    tight = detectable_sizes(sd, 10, ALPHA, 30)
    loose = detectable_sizes(sd, 30, ALPHA, 30)
    assert list(tight) == sorted(tight) and (loose <= tight).all()
    assert tight[-1] == 30  # unknown spread: the most there is room for
    assert interval_sizes(np.array([0.01]), 50, 10)[0] == MIN_SECOND_STAGE


def test_the_goal_is_the_headline_of_each_workload():
    """--until-ci chases what the report shows, decided per workload: a fio job's maximum
    latency is not in its headline (its p99 is), bonnie++'s maximum (its only latency) is,
    even when both ran in one campaign."""
    import pandas as pd

    from fslab.run.adaptive import unconverged

    summary = pd.DataFrame([
        {"target": "ext4", "workload": w, "op": "read", "metric": m, "n": 3,
         "ci_half_width_pct": 40.0}
        for w, m in [("randread", "lat_max_ns"), ("randread", "clat_p99_ns"),
                     ("bonnie", "lat_max_ns")]])
    wide = unconverged(summary, 5)
    assert sorted(line.split(":")[0] for line in wide) == [
        "ext4 bonnie read lat_max_ns", "ext4 randread read clat_p99_ns"]
