"""The analyze stage: metrics.parquet in, stats/ out (what `fslab analyze` runs).

Each step is a pure function of its own module, declared there with what it reads and
makes, its method and its tables (analysis/step.py; core/lookups.py's ANALYSIS_STEPS
lists them); this module runs them in the order of what each reads and writes what they
make to stats/ (stats_files.py reads it back for the report).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pandas as pd

from fslab.analysis.step import steps
from fslab.analysis.verdicts import as_text
from fslab.core.campaign_settings import CampaignSettings
from fslab.core.environment_record import Environment
from fslab.core.lookups import PRELOADED
from fslab.core.record import RunRecord
from fslab.results.intervals import load_intervals
from fslab.results.stats_files import (
    ANALYSIS_TABLES,
    DERIVED,
    Analysis,
    write_index,
    write_tables,
)
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
    environment: Environment  # environment.json, typed
    settings: CampaignSettings  # campaign.toml, typed (the defaults for imports)
    intervals: pd.DataFrame | None = None  # fio's per-interval values (intervals.parquet)

    def values(self) -> dict[str, Any]:
        """What every step may read before any has run (analysis/step.py: INPUTS): these,
        and whether iterations are blocks (not for imports)."""
        return {"metrics": self.metrics, "records": self.records,
                "environment": self.environment, "settings": self.settings,
                "intervals": self.intervals, "blocked": not self.environment.imported}


def inputs_of(results: ResultsDir) -> Inputs:
    """The analysis inputs of one results directory. An import's run records say where
    each file came from and nothing the analysis reads (no witness, no declared primary
    metric, no I/O of a run on this machine): they are not read (10^4 of them, packed in
    archives, cost an import's analysis a second)."""
    environment = results.environment()
    records = [] if environment.imported else list(results.run_records())

    return Inputs(measured_metrics(results, categorical=True), records, environment,
                  results.campaign_settings(), load_intervals(results))


def write_summary(results: ResultsDir) -> pd.DataFrame:
    """stats/summary.csv alone (`fslab.api.analyze(full=False)`): the steps up to it."""
    inputs = Inputs(measured_metrics(results), list(results.run_records()),
                    results.environment(), results.campaign_settings())
    summary = made(inputs, "summary")
    results.stats_dir.mkdir(exist_ok=True)
    write_atomic(results.stats_dir / "summary.csv", summary.to_csv(index=False))
    return summary


def measured_metrics(results: ResultsDir, categorical: bool = False) -> pd.DataFrame:
    """The metrics every estimate and verdict uses: an adaptive campaign's pilot
    iterations (which chose how many to run: fslab.run.adaptive) are left out, so that the
    choice cannot bias what it chose."""
    metrics = results.load_metrics(categorical=categorical)
    pilot = results.campaign_settings().pilot
    if pilot and not metrics.empty:
        metrics = metrics[metrics["iteration"].astype(int) > pilot].reset_index(drop=True)
    return metrics


PILOT_METHOD = ("Adaptive runs (--until-ci, --until-detectable): the campaign's first "
                "{pilot} iterations were a pilot that decided how many more to run; "
                "estimates and verdicts use only the iterations after it, so stopping on a "
                "lucky spread cannot inflate them (fslab.run.adaptive).")


def made(inputs: Inputs, wanted: str) -> Any:
    """One value the steps make, running only the steps before it."""
    done = inputs.values()
    for step in steps():
        if wanted in done:
            break
        done.update(step(done))
    return done[wanted]


def load_steps() -> None:
    """Import every step of the analysis now (fslab import loads them while its files are
    parsed: importer.load_analysis_libraries)."""
    steps()


def analyze_results(results: ResultsDir) -> Analysis:
    """Every step of the analysis, written to stats/ (tables, verdicts.txt, index)."""
    done = analyse(inputs_of(results))
    write_analysis(results, done)
    return done


def write_analysis(results: ResultsDir, done: Analysis) -> None:
    """stats/: every table, verdicts.txt, and the index saying which metrics.parquet the
    analysis is of (written last: the directory's metrics must be there first)."""
    results.stats_dir.mkdir(exist_ok=True)
    write_tables(results, done)
    write_atomic(results.stats_dir / "verdicts.txt", "\n".join(as_text(done.verdicts)) + "\n")
    write_index(results, done)


def analyse(inputs: Inputs) -> Analysis:
    """Every step of the analysis (analysis/step.py: core/lookups.py's ANALYSIS_STEPS) on
    one set of inputs, each in the order of what it reads (pure: nothing is read or
    written); its tables, its method statements and the statistics' tables."""
    done = inputs.values()
    statements: list[dict[str, str]] = []
    files: dict[str, str] = {}
    for step in steps():
        done.update(step(done))
        statements += step.statements(done)
        files.update({name: file for name, file in step.tables.items()
                      if name not in step.optional or not done[name].empty})
    statistics = done["statistics"]
    pilot = inputs.settings.pilot
    methods = pd.DataFrame(statements + statistics.methods + (
        [{"step": "adaptive", "method": PILOT_METHOD.format(pilot=pilot)}] if pilot else []),
        columns=["step", "method"])
    named = {name: done[name] for name in files if name in ANALYSIS_TABLES
             and name not in DERIVED}
    extra = {file: done[name] for name, file in files.items()
             if name not in named and name not in DERIVED}
    return Analysis(metrics=inputs.metrics, runs=done["runs"], methods=methods,
                    pairs=done["pairs"], files={**files, "methods": "methods.csv"},
                    extra={**extra, **statistics.tables},
                    **{name: named.get(name, pd.DataFrame()) for name in ANALYSIS_TABLES
                       if name != "methods" and name not in DERIVED})
