"""The analyze stage: metrics.parquet in, stats/ out (what `fslab analyze` runs).

Each step is a pure function of its own module (summary, comparisons, drivers, hosts,
aged, drift, verdicts); this module only runs them in order on one shared per-run table
and writes what they return to stats/ (stats_files.py reads it back for the report).
"""

from __future__ import annotations

import pandas as pd

from fslab.stats_files import Analysis, write_index
from fslab.store import ResultsDir, write_atomic


def summarize_results(results: ResultsDir, metrics: pd.DataFrame,
                      runs: pd.DataFrame | None = None) -> pd.DataFrame:
    """The per-cell summary, with cache-bound cells marked (analysis.cachebound)."""
    from fslab.analysis.cachebound import mark_cache_bound
    from fslab.analysis.summary import summarize

    return mark_cache_bound(summarize(metrics, runs), results.run_records(),
                            results.environment())


def write_summary(results: ResultsDir) -> pd.DataFrame:
    """stats/summary.csv alone (what a run ends with: the tests and models cost seconds
    that a short campaign should not pay, benchmarks/harness_overhead)."""
    summary = summarize_results(results, results.load_metrics())
    results.stats_dir.mkdir(exist_ok=True)
    write_atomic(results.stats_dir / "summary.csv", summary.to_csv(index=False))
    return summary


def analyze_results(results: ResultsDir) -> Analysis:
    """Every step of the analysis, written to stats/ (tables, verdicts.txt, index)."""
    from fslab.analysis.aged import aged_verdicts, aged_vs_fresh
    from fslab.analysis.comparisons import compare_targets
    from fslab.analysis.drift import drift_note, iteration_drift
    from fslab.analysis.drivers import drivers
    from fslab.analysis.hosts import host_spread
    from fslab.analysis.observations import per_run
    from fslab.analysis.verdicts import headline, verdicts

    metrics = results.load_metrics(categorical=True)
    runs = per_run(metrics)  # shared by every step below
    environment = results.environment()
    summary = summarize_results(results, metrics, runs)
    tests, pairs = compare_targets(metrics, runs,
                                   blocked_allowed=not environment.get("imported"))
    factors = drivers(runs)
    spread = host_spread(metrics)
    ages = aged_vs_fresh(summary, pairs, environment.get("targets", {}))
    drift_table, drift_share = iteration_drift(runs)
    note = drift_note(drift_table, drift_share)
    lines = verdicts(summary, tests, pairs) + aged_verdicts(ages) + ([note] if note else [])
    winners = headline(summary, tests, pairs)
    tables = {"summary.csv": summary, "tests.csv": tests, "pairwise.csv": pairs,
              "headline.csv": winners, "drivers.csv": factors, "drift.csv": drift_table}
    if not spread.empty:
        tables["hosts.csv"] = spread
    if not ages.empty:
        tables["aged_vs_fresh.csv"] = ages
    results.stats_dir.mkdir(exist_ok=True)
    for name, table in tables.items():
        write_atomic(results.stats_dir / name, table.to_csv(index=False))
    write_atomic(results.stats_dir / "verdicts.txt", "\n".join(lines) + "\n")
    done = Analysis(metrics, runs, summary, tests, pairs, lines, winners, factors, spread)
    write_index(results, done)
    return done
