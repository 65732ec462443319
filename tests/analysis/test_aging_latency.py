"""Aging-run latency intervals, checked by simulation against known truth.

An aging run's latency is observed on sections of the run in time order
(parsers/aging_kind.py), each section an observation of the analysis
(analysis/cells/observations.py), so the per-cell interval is the sectioned one and a
comparison of two aging runs is Welch's t over their sections (analysis/pairs/model.py).
Latencies are simulated as a log-normal AR(1) process (neighbouring operations alike, as
on a real file system), whose mean and median are known exactly."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from fslab.analysis.across.compare import compare_cells
from fslab.analysis.cells.observations import per_run
from fslab.analysis.cells.stats import log_ci
from fslab.analysis.cells.summary import summarize
from fslab.core.metrics import SECTION, RowIdentity, add_rows, empty_columns
from fslab.parsers.aging_kind import latency_rows

PHI, SIGMA, N = 0.9, 0.3, 20_000
LOG_VARIANCE = SIGMA**2 / (1 - PHI**2)  # of the stationary process
METRIC = {"median": "op_lat_p50_ns", "mean": "op_lat_mean_ns"}


def ar1_latencies(rng: np.random.Generator, mu: float, n: int = N) -> np.ndarray:
    noise = rng.normal(0, SIGMA, n + 500)
    from scipy import signal  # 1.7 s to import: only the tests that draw pay it

    return np.exp(mu + signal.lfilter([1], [1, -PHI], noise)[500:])


def truth(mu: float) -> dict[str, float]:
    return {"median": math.exp(mu), "mean": math.exp(mu + LOG_VARIANCE / 2)}


def sections_of(latency: np.ndarray, statistic: str, op: str = "read") -> list[float]:
    return [m.value for m in latency_rows(np.full(len(latency), op, dtype=object), latency)
            if m.metric == METRIC[statistic]]


@pytest.mark.parametrize("statistic", ["mean", "median"])
def test_sectioned_interval_covers_the_truth_about_95_percent(statistic):
    """The interval the summary puts on an aging cell (log_ci over its sections)."""
    rng = np.random.default_rng(11)
    trials, covered, naive_covered = 400, 0, 0
    for _ in range(trials):
        values = ar1_latencies(rng, mu=4.0)
        sections = sections_of(values, statistic)
        found = log_ci(sections)
        covered += found.ci_low <= truth(4.0)[statistic] <= found.ci_high
        if statistic == "mean":  # what treating the latencies as independent would say
            half = stats.t.ppf(0.975, N - 1) * values.std(ddof=1) / math.sqrt(N)
            naive_covered += abs(values.mean() - truth(4.0)["mean"]) <= half
    assert len(sections) == 20
    assert 0.91 <= covered / trials <= 0.99
    if statistic == "mean":
        assert naive_covered / trials < 0.6  # the interval sectioning exists to avoid


def aging_metrics(latency_ns: np.ndarray, target: str = "a") -> pd.DataFrame:
    columns = empty_columns()
    add_rows(columns, RowIdentity("c", f"{target}-aging", target, "ext4", "kernel", "aging",
                                  1, target, "aging"),
             latency_rows(np.full(len(latency_ns), "read", dtype=object), latency_ns))
    return pd.DataFrame(columns)


def test_the_summary_of_an_aging_cell_is_its_sectioned_interval():
    rng = np.random.default_rng(3)
    latency = ar1_latencies(rng, mu=9.0)
    metrics = aging_metrics(latency)
    assert set(metrics["note"]) == {SECTION}
    runs = per_run(metrics)
    assert len(runs) == 40 and sorted(set(runs["sample"])) == list(range(1, 21))
    summary = summarize(metrics, runs).set_index("metric")
    expected = log_ci(sections_of(latency, "median"))
    row = summary.loc["op_lat_p50_ns"]
    assert row["n"] == 20 and "20 sections of one run" in row["note"]
    assert (row["geomean"], row["ci_low"], row["ci_high"]) == pytest.approx(
        (expected.center, expected.ci_low, expected.ci_high))


def test_two_aging_runs_compared_cover_the_true_ratio():
    """`fslab compare` of two aging runs: Welch's t over their sections (unblocked)."""
    rng = np.random.default_rng(12)
    trials, covered = 100, 0
    for _ in range(trials):
        base = aging_metrics(ar1_latencies(rng, 4.0))
        new = aging_metrics(ar1_latencies(rng, 4.2))
        cells = compare_cells(base, new).set_index("metric")
        row = cells.loc["op_lat_p50_ns"]
        assert row["n_base"] == row["n_new"] == 20
        low, high = row["ratio_ci_low"], row["ratio_ci_high"]
        assert low < row["ratio"] < high
        covered += low <= math.exp(0.2) <= high
        level = 1 - row["alpha"]  # a question's interval is adjusted for its family
    assert level - 0.05 <= covered / trials <= min(1.0, level + 0.05)


def test_an_operation_that_ran_rarely_is_one_value_without_sections():
    ops = np.array(["read"] * 200 + ["mkdir"] * 7, dtype=object)
    latency = np.concatenate([np.full(200, 2e6), np.full(7, 5e6)])
    rows = latency_rows(ops, latency)
    reads = [m for m in rows if m.op == "read" and m.metric == "op_lat_p50_ns"]
    mkdirs = [m for m in rows if m.op == "mkdir"]
    assert len(reads) == 20 and {m.note for m in reads} == {SECTION}
    assert reads[0].value == pytest.approx(2e6)
    assert len(mkdirs) == 2 and {(m.sample, m.note) for m in mkdirs} == {(0, "")}
