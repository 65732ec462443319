"""Aging-run latency intervals, checked by simulation against known truth.

Latencies are simulated as a log-normal AR(1) process (neighbouring operations alike, as
on a real file system), whose mean and median are known exactly."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import signal, stats

from fslab.aging.latency import latency_table, ratio_interval, sectioned

PHI, SIGMA, N = 0.9, 0.3, 20_000
LOG_VARIANCE = SIGMA**2 / (1 - PHI**2)  # of the stationary process


def ar1_latencies(rng: np.random.Generator, mu: float, n: int = N) -> np.ndarray:
    noise = rng.normal(0, SIGMA, n + 500)
    return np.exp(mu + signal.lfilter([1], [1, -PHI], noise)[500:])


def truth(mu: float) -> dict[str, float]:
    return {"median": math.exp(mu), "mean": math.exp(mu + LOG_VARIANCE / 2)}


@pytest.mark.parametrize("statistic", ["mean", "median"])
def test_sectioned_interval_covers_the_truth_about_95_percent(statistic):
    rng = np.random.default_rng(11)
    trials, covered, naive_covered = 400, 0, 0
    for _ in range(trials):
        values = ar1_latencies(rng, mu=4.0)
        _, low, high, sections = sectioned(values, statistic)
        covered += low <= truth(4.0)[statistic] <= high
        if statistic == "mean":  # what treating the latencies as independent would say
            half = stats.t.ppf(0.975, N - 1) * values.std(ddof=1) / math.sqrt(N)
            naive_covered += abs(values.mean() - truth(4.0)["mean"]) <= half
    assert sections == 20
    assert 0.91 <= covered / trials <= 0.99
    if statistic == "mean":
        assert naive_covered / trials < 0.6  # the interval this module exists to avoid


def test_ratio_interval_covers_the_true_ratio():
    rng = np.random.default_rng(12)
    trials, covered = 300, 0
    for _ in range(trials):
        base = latency_table(log_of(ar1_latencies(rng, 4.0))).iloc[0]
        new = latency_table(log_of(ar1_latencies(rng, 4.2))).iloc[0]
        ratio, low, high = ratio_interval(base, new, "median")
        assert low < ratio < high
        covered += low <= math.exp(0.2) <= high
    assert 0.91 <= covered / trials <= 0.99


def test_table_has_one_row_per_operation_and_no_interval_when_too_few():
    log = pd.concat([log_of(np.full(200, 2000.0), "read"), log_of(np.array([5e3] * 7), "mkdir")])
    table = latency_table(log).set_index("op")
    assert table.loc["read", "median_us"] == pytest.approx(2000.0)
    assert table.loc["read", "n"] == 200 and table.loc["read", "sections"] == 20
    assert table.loc["mkdir", "sections"] == 0 and math.isnan(table.loc["mkdir", "mean_ci_low"])


def log_of(latency_us: np.ndarray, op: str = "read") -> pd.DataFrame:
    return pd.DataFrame({"t_s": np.arange(len(latency_us), dtype=float), "op": op,
                         "latency_ns": (latency_us * 1e3).astype(np.int64)})
