"""The analyze stage: metrics.parquet in, stats/ out (what `fslab analyze` runs).

Each step is a pure function of its own module (summary, comparisons, ranking, hosts,
aged, drift, verdicts); this module only runs them in order on one shared per-run table
and writes what they return to stats/ (stats_files.py reads it back for the report).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from fslab.core.lookups import ANALYSIS_STEPS, PRELOADED
from fslab.core.record import RunRecord
from fslab.results.stats_files import Analysis, write_index, write_tables
from fslab.results.store import ResultsDir, write_atomic


def preload() -> None:
    """Import what the parse stage and the analysis load (core/lookups.py: PRELOADED) now;
    one that cannot be imported is left to fail where it is used."""
    import contextlib
    import importlib

    for name in PRELOADED:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)


@dataclass
class Inputs:
    """What the analysis reads of a results directory (or of several, seen as one:
    fslab/report/several.py): the measured rows, the run records, the environment, the campaign."""

    metrics: pd.DataFrame
    records: list[RunRecord]
    environment: dict[str, Any]
    settings: dict[str, Any]  # the resolved campaign.toml ({} for imports)
    intervals: pd.DataFrame | None = None  # fio's per-interval values (intervals.parquet)


def inputs_of(results: ResultsDir) -> Inputs:
    """The analysis inputs of one results directory. An import's run records say where
    each file came from and nothing the analysis reads (no witness, no declared primary
    metric, no I/O of a run on this machine): they are not read (10^4 of them, packed in
    archives, cost an import's analysis a second)."""
    environment = results.environment()
    records = [] if environment.get("imported") else list(results.run_records())
    from fslab.results.intervals import load_intervals

    return Inputs(measured_metrics(results, categorical=True), records, environment,
                  campaign_settings(results), load_intervals(results))


def summarized(metrics: pd.DataFrame, runs: pd.DataFrame, records: list[RunRecord],
               environment: dict[str, Any]) -> pd.DataFrame:
    """The per-cell summary, with cache-bound cells marked (analysis.cells.cachebound)."""
    from fslab.analysis.cells.cachebound import mark_cache_bound
    from fslab.analysis.cells.summary import summarize
    from fslab.analysis.factors.levels import cell_levels, with_levels

    summary = mark_cache_bound(summarize(metrics, runs), records, environment, runs)
    return with_levels(summary, cell_levels(metrics))  # a sweep's factors as columns


def write_summary(results: ResultsDir) -> pd.DataFrame:
    """stats/summary.csv alone (`fslab.api.analyze(full=False)`)."""
    from fslab.analysis.cells.observations import per_run

    metrics = measured_metrics(results)
    summary = summarized(metrics, per_run(metrics), list(results.run_records()),
                         results.environment())
    results.stats_dir.mkdir(exist_ok=True)
    write_atomic(results.stats_dir / "summary.csv", summary.to_csv(index=False))
    return summary


def measured_metrics(results: ResultsDir, categorical: bool = False) -> pd.DataFrame:
    """The metrics every estimate and verdict uses: an adaptive campaign's pilot
    iterations (which chose how many to run: fslab.run.adaptive) are left out, so that the
    choice cannot bias what it chose."""
    metrics = results.load_metrics(categorical=categorical)
    pilot = int(campaign_settings(results).get("pilot", 0) or 0)
    if pilot and not metrics.empty:
        metrics = metrics[metrics["iteration"].astype(int) > pilot].reset_index(drop=True)
    return metrics


def campaign_settings(results: ResultsDir) -> dict[str, Any]:
    """The resolved campaign.toml ({} for imports and directories without one)."""
    import tomllib

    try:
        return tomllib.loads(results.campaign_path().read_text())
    except (OSError, ValueError):
        return {}


def declared_primaries(records: list[RunRecord]) -> dict[str, str]:
    """{workload or run id: the primary metric it declared when it ran} (run.json
    metadata; by run id too, for the questions of a job file's sections)."""
    out: dict[str, str] = {}
    for record in records:
        declared = record.workload_metadata.get("primary_metric")
        if isinstance(declared, dict):
            out.update({str(k): str(v) for k, v in declared.items()})
        elif declared:
            out[record.workload] = out[record.run_id] = str(declared)
    return out


# The steps whose method statements the report prints, in reading order (each module's
# METHOD); the last ones only where the campaign used them.
METHOD_STEPS = ["observations", "summary", "median", "cachebound", "questions", "model",
                "decisions", "ranking", "power", "drift", "disturbance"]
PILOT_METHOD = ("Adaptive runs (--until-ci, --until-detectable): the campaign's first "
                "{pilot} iterations were a pilot that decided how many more to run; "
                "estimates and verdicts use only the iterations after it, so stopping on a "
                "lucky spread cannot inflate them (fslab.run.adaptive).")


# Every module analyse() runs, for loading ahead (fslab import loads them while its files
# are parsed: importer.load_analysis_libraries).
STEP_MODULES = sorted({*METHOD_STEPS, "aged", "hosts", "comparisons", "verdicts", "sweeps",
                       "sequential", "aging_ranking"})


def step_module(step: str) -> str:
    """The module of a step named in METHOD_STEPS or STEP_MODULES: the room of the
    question it answers (core/lookups.py: ANALYSIS_STEPS)."""
    return ANALYSIS_STEPS[step]


def load_steps() -> None:
    """Import every module of the analysis now (see STEP_MODULES)."""
    import importlib

    for step in STEP_MODULES:
        importlib.import_module(step_module(step))


def method_statements(*, hosts: bool, aged: bool, pilot: int,
                      sweep: bool = False, looks: bool = False,
                      aging: bool = False) -> pd.DataFrame:
    """stats/methods.csv: (step, method), one row per analysis step this campaign used,
    each step's own statement (its module's METHOD)."""
    import importlib

    steps = (METHOD_STEPS + ["hosts"] * hosts + ["aged"] * aged + ["effects"] * sweep
             + ["sequential"] * looks + ["aging_ranking"] * aging)
    rows = [{"step": step,
             "method": importlib.import_module(step_module(step)).METHOD}
            for step in steps]
    if pilot:
        rows.append({"step": "adaptive", "method": PILOT_METHOD.format(pilot=pilot)})
    return pd.DataFrame(rows, columns=["step", "method"])


def analyze_results(results: ResultsDir) -> Analysis:
    """Every step of the analysis, written to stats/ (tables, verdicts.txt, index)."""
    done = analyse(inputs_of(results))
    write_analysis(results, done)
    return done


def write_analysis(results: ResultsDir, done: Analysis) -> None:
    """stats/: every table, verdicts.txt, and the index saying which metrics.parquet the
    analysis is of (written last: the directory's metrics must be there first)."""
    from fslab.analysis.verdicts import as_text

    results.stats_dir.mkdir(exist_ok=True)
    write_tables(results, done)
    write_atomic(results.stats_dir / "verdicts.txt", "\n".join(as_text(done.verdicts)) + "\n")
    write_index(results, done)


def analyse(inputs: Inputs) -> Analysis:
    """Every step of the analysis on one set of inputs (pure: nothing is read or written)."""
    from fslab.analysis.cells.disturbance import disturbance, disturbance_note, unsteady_note
    from fslab.analysis.cells.drift import drift_note, iteration_drift
    from fslab.analysis.cells.hosts import host_spread
    from fslab.analysis.cells.observations import per_run, probe_states
    from fslab.analysis.pairs.aged import aged_verdicts, aged_vs_fresh
    from fslab.analysis.pairs.comparisons import compared_pairs
    from fslab.analysis.pairs.decisions import machine_seconds, seconds_per_iteration
    from fslab.analysis.pairs.questions import primary_questions
    from fslab.analysis.pairs.sequential import iteration_weights
    from fslab.analysis.verdicts import (
        VERDICT_COLUMNS,
        decided_row,
        error_rows,
        rankings,
        verdict_rows,
    )
    from fslab.core.metrics import HEADLINE_METRICS
    from fslab.core.units import DEFAULT_MARGIN, parse_margin

    metrics, records, environment = inputs.metrics, inputs.records, inputs.environment
    settings = inputs.settings
    runs = per_run(metrics)  # shared by every step below
    declared, wanted = declared_primaries(records), tuple(settings.get("primary", ()))
    asked = primary_questions(runs[runs["metric"].isin(HEADLINE_METRICS)], declared, wanted)
    summary = summarized(metrics, runs, records, environment)
    summary["primary"] = [key in asked for key in zip(
        summary["workload"].astype(str), summary["op"].astype(str),
        summary["metric"].astype(str), strict=True)]  # the history reads it
    tests, pairs = compared_pairs(metrics, runs,
                                  blocked_allowed=not environment.get("imported"),
                                  declared=declared, campaign_primary=wanted, asked=asked,
                                  margin=parse_margin(settings.get("margin", DEFAULT_MARGIN)),
                                  seconds=seconds_per_iteration(records),
                                  machine=machine_seconds(records),
                                  weights=iteration_weights(settings.get("resolve")),
                                  looks=list((settings.get("resolve") or {}).get("looks", [])))
    sitting = environment.get("sitting") or {}
    if "spread" in sitting:  # recorded with --catalogue: would the answers hold on a repeat
        from fslab.analysis.sittings.on_repeat import spread_of, with_repeat

        pairs = with_repeat(pairs, spread_of(sitting["spread"]))
    spread = host_spread(metrics)
    ages = aged_vs_fresh(summary, pairs, environment.get("targets", {}))
    drift_table, shared = iteration_drift(runs)
    note = drift_note(drift_table, shared)
    from fslab.analysis.factors.levels import (
        cell_levels,
        factor_scopes,
        factors_of,
        target_names,
    )
    from fslab.analysis.factors.sweeps import analyse_sweep

    cells = cell_levels(metrics)
    scopes = factor_scopes(settings, factors_of(cells))
    names = target_names(cells, scopes)
    headline, ranking = rankings(summary, tests, pairs, runs, names)
    effects, best = analyse_sweep(runs, cells, settings,
                                  declared, summary,
                                  not environment.get("imported"),
                                  parse_margin(settings.get("margin", DEFAULT_MARGIN)), pairs)
    from fslab.analysis.statistic import Measured, computed

    extra, extra_methods, failed = computed(Measured(runs, summary, settings,
                                                     tuple(records), inputs.intervals))
    seen = disturbance(records)
    busy = disturbance_note(seen)
    unsteady = unsteady_note(records)
    from fslab.analysis.factors.aging_ranking import aging_labels, aging_ranking, aging_verdicts

    aging = aging_ranking(runs, cells, pairs,
                          parse_margin(settings.get("margin", DEFAULT_MARGIN)),
                          list((settings.get("sweep") or {}).get("age", [])))
    said = verdict_rows(headline, ranking, tests, pairs, effects, best, cells, scopes, names)
    if "spread" in sitting:
        from fslab.analysis.sittings.on_repeat import repeat_rows, spread_of

        said = repeat_rows(said, pairs, spread_of(sitting["spread"]), str(sitting["host"]))
    verdicts = pd.DataFrame(
        aging_verdicts(aging, aging_labels(records, settings))  # the aging question first
        + ([{"kind": "machine", "workload": "", "text": busy}] if busy else [])
        + ([{"kind": "machine", "workload": "", "text": unsteady}] if unsteady else [])
        + error_rows(runs) + said
        + aged_verdicts(ages)
        + ([{"kind": "drift", "workload": "", "text": note}] if note else [])
        + [{"kind": "statistic", "workload": "", "text": line} for line in failed]
        + decided_row(pairs, sum(float(r.machine_s) for r in records), names),
        columns=VERDICT_COLUMNS)
    methods = method_statements(
        hosts=not spread.empty, aged=not ages.empty,
        pilot=int(settings.get("pilot", 0) or 0), sweep=not effects.empty,
        looks=bool((settings.get("resolve") or {}).get("looks")), aging=not aging.empty)
    from fslab.analysis.pairs.pair import table_of

    return Analysis(metrics=metrics, runs=runs, summary=summary, tests=tests,
                    pairwise=table_of(pairs), verdicts=verdicts, headline=headline, ranking=ranking,
                    drift=drift_table, hosts=spread, aged=ages, disturbed=seen,
                    probe_states=probe_states(metrics), effects=effects, best=best,
                    aging_ranking=aging,
                    methods=pd.concat([methods, pd.DataFrame(extra_methods,
                                                             columns=methods.columns)],
                                      ignore_index=True),
                    extra=extra)
