"""The latency trend over an aging, checked against known truth: latencies simulated as a
log-normal AR(1) process (neighbouring operations alike) whose log median grows by a known
amount from the start of the aging to its end; the trend statistic's interval must cover
exp(that) about 95 % of the time, for one aging (Theil–Sen's own interval) and for several
(the t over their slopes), and a flat aging must be called "latency grows" rarely."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from fslab.analysis.pairs.aging_trend import GROWS, ONE, SEVERAL, one_aging, trend_table
from fslab.analysis.statistic import Measured
from fslab.core.aging_record import AgingRecord
from fslab.core.run_parts import WorkloadMetadata
from fslab.parsers.aging_kind import aging_summary
from tests.analysis.test_aging_latency import ar1_latencies

N = 20_000


def aging(rng: np.random.Generator, growth: float) -> dict[str, Any]:
    """One aging's summary: 'read' latencies with log median rising by `growth`."""
    latency = ar1_latencies(rng, mu=9.0, n=N) * np.exp(growth * (np.arange(N) + 0.5) / N)
    ops = np.full(N, "read", dtype=object)
    record = AgingRecord(ops_done=N, seconds=10.0, stopped_by="ops")
    return dict(aging_summary(record, [], ops, latency))


@dataclass
class Record:
    """What the statistic reads of a run record."""

    target: str
    iteration: int
    workload_metadata: WorkloadMetadata = field(default_factory=WorkloadMetadata)


def test_one_agings_interval_covers_the_known_trend():
    rng = np.random.default_rng(5)
    truth, covered, trials = math.exp(0.4), 0, 200
    for _ in range(trials):
        points = aging(rng, 0.4)["latency"]["read"]
        _, low, high = one_aging(points, 0.05)
        covered += low <= truth <= high
    assert len(points) == 20
    assert 0.92 <= covered / trials <= 0.99, covered


def test_several_agings_are_a_t_interval_and_a_flat_one_is_not_called():
    rng = np.random.default_rng(9)
    covered = grows = 0
    for _ in range(30):
        records = [Record("ext4 age=thesis-80", i, WorkloadMetadata(more={"aging": {
                   **aging(rng, 0.3), "level": "thesis-80"}}))
                   for i in (1, 2, 3, 4)]
        records += [Record("xfs age=thesis-80", 1, WorkloadMetadata(more={"aging": {
                    **aging(rng, 0.0), "level": "thesis-80"}}))]
        table = trend_table(Measured(pd.DataFrame(), pd.DataFrame(), {}, tuple(records)))
        several = table[table["target"] == "ext4 age=thesis-80"].iloc[0]
        one = table[table["target"] == "xfs age=thesis-80"].iloc[0]
        assert (several["method"], several["agings"], one["method"]) == (SEVERAL, 4, ONE)
        assert several["family"] == 2
        covered += several["ratio_ci_low"] <= math.exp(0.3) <= several["ratio_ci_high"]
        grows += one["decision"] == GROWS
    assert covered >= 27 and grows <= 2
