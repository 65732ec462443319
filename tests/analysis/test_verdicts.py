"""Verdicts a reader can act on (issue 21): one ranking per workload × primary metric,
groups that never contradict a pair, ratios printed ≥ 1 with their direction in words,
bandwidth not tested again where it is IOPS × a block size, one screen for the default
campaign's shape."""

from __future__ import annotations

import numpy as np
import pandas as pd

from fslab.analysis.cells.observations import per_run
from fslab.analysis.cells.summary import summarize
from fslab.analysis.pairs.comparisons import compared_pairs
from fslab.analysis.pairs.questions import primary_metric
from fslab.analysis.pairs.ranking import chain, evidence, rankings, size
from fslab.core.pair import pairs_of, table_of
from fslab.core.units import format_bound as bound
from tests.conftest import verdict_lines

DIRECT5 = {  # workload -> (ops, IOPS base, block size): the default suite's shape
    "randread": (["read"], 25000, 4096), "randwrite": (["write"], 20000, 4096),
    "mixed": (["read", "write"], 15000, 4096), "seqread": (["read"], 900, 2**20),
    "seqwrite": (["write"], 700, 2**20)}


def default_shaped(scales: dict[str, float], seed: int = 1, iterations: int = 5,
                   cv: float = 0.08) -> pd.DataFrame:
    """A metrics table shaped like the default campaign's: IOPS, bandwidth (a fixed
    block size), latency and CPU per op, a total for the mixed job."""
    rng = np.random.default_rng(seed)
    rows = []
    for target, scale in scales.items():
        for workload, (ops, base, block) in DIRECT5.items():
            for iteration in range(1, iterations + 1):
                run = f"i{iteration}-{target}-{workload}"
                total = 0.0
                for op in ops:
                    iops = base * scale * rng.lognormal(0, cv)
                    total += iops
                    for metric, value, unit, better in (
                            ("iops", iops, "1/s", "higher"),
                            ("bw_bytes", iops * block, "bytes/s", "higher"),
                            ("clat_mean_ns", 4e9 / iops, "ns", "lower"),
                            ("clat_p99_ns", 9e9 / iops * rng.lognormal(0, cv), "ns", "lower")):
                        rows.append((target, workload, iteration, run, op, metric, value,
                                     unit, better))
                if len(ops) > 1:
                    rows.append((target, workload, iteration, run, "total", "iops", total,
                                 "1/s", "higher"))
                rows.append((target, workload, iteration, run, "total", "cpu_total",
                             60 * rng.lognormal(0, cv), "%", "lower"))
    frame = pd.DataFrame(rows, columns=["target", "workload", "iteration", "run_id", "op",
                                        "metric", "value", "unit", "better"])
    return frame.assign(campaign="c", fs=frame["target"], fs_impl="k", host="h", sample=0,
                        note="")


def analysed(metrics: pd.DataFrame):
    runs = per_run(metrics)
    tests, found = compared_pairs(metrics, runs)
    headline, ranking = rankings(summarize(metrics, runs), tests, found, runs)
    return tests, table_of(found), headline, ranking, verdict_lines(headline, ranking, tests,
                                                                    found)


def test_default_shape_fits_one_screen_with_one_ranking_per_workload():
    _, pairs, headline, _, lines = analysed(
        default_shaped({"ext4": 1.0, "xfs": 1.05, "btrfs": 0.4}))
    assert len(lines) <= 40, "\n".join(lines)
    assert sorted(headline["workload"]) == sorted(DIRECT5)  # one question each
    primary = dict(zip(headline["workload"], zip(headline["op"], headline["metric"],
                                                 strict=True), strict=True))
    assert primary["randread"] == ("read", "iops") and primary["mixed"] == ("total", "iops")
    assert primary["seqwrite"] == ("write", "bw_bytes")
    # bandwidth = IOPS × 4 KiB on random jobs, IOPS = bandwidth / 1 MiB on sequential ones
    asked = set(zip(pairs["workload"], pairs["op"], pairs["metric"], strict=True))
    assert ("randread", "read", "bw_bytes") not in asked
    assert ("seqread", "read", "iops") not in asked
    assert ("mixed", "read", "bw_bytes") not in asked
    family = int(pairs.loc[pairs["primary"], "family"].iloc[0])
    assert family == 5 * 3 and (pairs.loc[pairs["primary"], "alpha"] == 0.05 / 15).all()
    assert (pairs.loc[~pairs["primary"], "alpha"] == 0.05).all()
    assert any("btrfs" in line and "faster than btrfs" in line for line in lines)
    assert lines[0].startswith("Verdicts answer 5 questions") and "15 pairs" in lines[0]


def test_aa_default_shape_claims_nothing_and_says_what_it_could_have_seen():
    _, pairs, headline, _, lines = analysed(default_shaped({"e1": 1, "e2": 1, "e3": 1}, seed=4))
    assert not pairs.loc[pairs["primary"], "significant"].any()
    assert all(">" not in text for text in headline["ranking"])
    assert sum("could have found" in line for line in lines if line.startswith("    ")) == 10


def pairs_frame(significant: set[tuple[str, str]], names: list[str]) -> pd.DataFrame:
    """Pairwise rows where `significant` pairs (better, worse) differ by 2×."""
    rows = []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            differ = (a, b) in significant
            rows.append({"a": a, "b": b, "ratio": 2.0 if differ else 1.05,
                         "ratio_ci_low": 1.5 if differ else 0.9,
                         "ratio_ci_high": 2.5 if differ else 1.2, "p_adj": 0.001 if differ
                         else 0.6, "alpha": 0.05, "estimable": True,
                         "significant": differ, "mde_ratio": 1.3})
    return pd.DataFrame(rows)


def test_a_chain_cuts_only_where_every_pair_across_differs():
    names = ["a", "b", "c"]
    assert chain(names, pairs_of(pairs_frame({("a", "b"), ("a", "c"), ("b", "c")}, names))
                 ) == "a > b > c"
    assert chain(names, pairs_of(pairs_frame({("a", "c"), ("b", "c")}, names))) == "a ? b > c"
    # a beats c, but b sits between and beats neither: no clean cut, and it is said
    assert chain(names, pairs_of(pairs_frame({("a", "c")}, names))) == "a ? b ? c; but a > c"
    assert chain(names, pairs_of(pairs_frame(set(), names))) == "a ? b ? c"
    same = pairs_frame({("a", "c"), ("b", "c")}, names)
    same.loc[(same.a == "a") & (same.b == "b"), "decision"] = "equivalent"
    assert chain(names, pairs_of(same)) == "a = b > c"  # the same within the margin


def test_words_for_evidence_and_size_and_bounds_that_never_read_as_one():
    assert evidence(0.0004) == "very strong evidence" and evidence(0.2).startswith("no ")
    assert evidence(0.03) == "moderate evidence" and "certain" not in evidence(0.0)
    assert size(1.02) == "small difference" and size(2.5) == "very large difference"
    assert bound(1.0004) == "1.0004" and bound(0.99996) == "0.99996" and bound(1.23) == "1.23"


def test_primary_metric_rules():
    assert primary_metric("randread", ["iops", "bw_bytes"]) == "iops"
    assert primary_metric("seqread", ["iops", "bw_bytes"]) == "bw_bytes"
    assert primary_metric("seqread", ["iops", "bw_bytes"], declared="iops") == "iops"
    assert primary_metric("x", ["iops", "clat_p99_ns"],
                          campaign_primary=["clat_p99_ns"]) == "clat_p99_ns"
    assert primary_metric("smallfiles_4k", ["ops_per_s", "sync_seconds"]) == "ops_per_s"


def test_two_iterations_warn_and_a_dropped_target_is_named():
    metrics = default_shaped({"a": 1.0, "b": 1.0, "c": 1.0}, iterations=2)
    metrics = metrics[~((metrics["target"] == "c") & (metrics["iteration"] == 2)
                        & (metrics["workload"] == "randread"))]
    _, _, headline, _, lines = analysed(metrics)
    assert any("only 2 iterations" in line for line in lines)
    row = headline.set_index("workload").loc["randread"]
    assert "c (1 value, needs 2)" in row["left_out"]
    assert any("left out: c (1 value, needs 2)" in line for line in lines)
