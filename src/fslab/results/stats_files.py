"""stats/ as a stage on disk: what `fslab analyze` wrote, read back by `fslab report`.

`fslab analyze` writes the tables (each declared by its step: analysis/step.py;
verdicts.txt is the text of verdicts.csv), the per-run table the charts draw
(runs.parquet) and `analysis.json`: the analysis format version, every table's file and
the metrics table it was computed from (size and time). A
report renders from these without importing the analysis (scipy.stats, statsmodels)
while they are current; otherwise it analyses again.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from fslab.core.dirformat import DirFormat
from fslab.core.pair import Pair, pairs_of, table_of
from fslab.results.store import ResultsDir, write_atomic

if TYPE_CHECKING:
    import pandas as pd


@dataclass
class Analysis:
    """Everything `analyze` computes, for reporters (what stats/ holds). The compared
    pairs are records (`pairs`); pairwise.csv is their table, derived from them."""

    metrics: pd.DataFrame | None  # None when read back from stats/ (not kept there)
    runs: pd.DataFrame  # one value per run and metric (analysis.cells.observations.per_run)
    summary: pd.DataFrame  # per cell (stats/summary.csv)
    tests: pd.DataFrame  # per workload × op × metric: the model and why (tests.csv)
    pairs: list[Pair]  # every compared pair, decided (pairwise.csv: `pairwise`)
    verdicts: pd.DataFrame  # one row per sentence: kind, workload, text (verdicts.csv)
    headline: pd.DataFrame  # per primary question: the ranking (headline.csv)
    ranking: pd.DataFrame  # per primary question × target: ratio to the best (ranking.csv)
    drift: pd.DataFrame  # per iteration: the factor shared by every target (drift.csv)
    hosts: pd.DataFrame  # per-host spread of distributed runs (empty otherwise)
    aged: pd.DataFrame  # aged/fresh rows of pairwise (aged_vs_fresh.csv; empty otherwise)
    disturbed: pd.DataFrame  # per run: what the witness saw (disturbed.csv)
    methods: pd.DataFrame  # per analysis step: its method statement (methods.csv)
    probe_states: pd.DataFrame  # states probed during runs, in order (aging runs)
    effects: pd.DataFrame  # a sweep's factor effects (effects.csv; empty without a sweep)
    best: pd.DataFrame  # a sweep's best configurations and those within reach (best.csv)
    # every other table: the plug-ins' statistics (analysis/statistic.py) and the tables
    # of steps no reader names (analysis/step.py): file in stats/ -> its table
    extra: dict[str, pd.DataFrame] = field(default_factory=dict)
    # each named table and step's table that is written: its name -> its file in stats/,
    # as its step declares it (an empty optional one is not written)
    files: dict[str, str] = field(default_factory=dict)

    @cached_property
    def pairwise(self) -> pd.DataFrame:
        """pairwise.csv: one row per pair (analysis.pairs.pair.table_of)."""
        return table_of(self.pairs)


# The tables readers name (Analysis's fields); their files are their steps' declarations.
ANALYSIS_TABLES = ("summary", "tests", "pairwise", "verdicts", "headline", "ranking", "drift",
                   "hosts", "aged", "disturbed", "methods", "probe_states", "effects", "best")
# A table that is the serialisation of records a step makes: its name -> theirs.
DERIVED = {"pairwise": "pairs"}


# stats/ is derived: one of another format (older or newer) is not read but analysed
# again, so only the stamp and history come from fslab.core.dirformat, not its refusal.
STATS = DirFormat("analysis", "analysis.json", unstamped=0, history={
    1: "summary/tests/pairwise/headline/drivers(/hosts).csv, verdicts.txt, runs.parquet; "
       "later also drift.csv (written for people; nothing reads it back)",
    2: "primary questions as one family (pairwise: primary, alpha, se_log, family); "
       "headline.csv one row per primary question with its ranking; ranking.csv; "
       "drivers.csv gone; drift.csv and aged_vs_fresh.csv declared and read back; "
       "disturbed.csv (the witness of every run)",
    3: "verdicts.csv (kind, workload, text: verdicts.txt is its text); methods.csv (each "
       "analysis step's method statement, printed by the report)",
    4: "runs.parquet has a sample column (an aging run's sections are observations); "
       "series.csv (the states an aging run's probes saw, in order)",
    5: "a sweep: effects.csv and best.csv; summary.csv has one column per factor; "
       "verdicts.csv rows of kind best and factor",
    6: "a cell's fields: summary.csv and runs.parquet carry target_base and job; "
       "ranking.csv a group column (the chain's '>'-separated groups, 0 the best's); "
       "best.csv names configurations as shortly as the job's allow",
    7: "the plug-ins' statistics: a table each (analysis.json lists them under extra); "
       "the probes' states of an aging run in probe_states.csv (was series.csv)",
    8: "analysis.json's tables name every step's table (its name: its file), a table no "
       "reader names among them; pairwise.csv has better, t and noise; summary.csv's "
       "primary column before the factors'",
})
INDEX = STATS.marker
def write_tables(results: ResultsDir, done: Analysis) -> None:
    """Write every table of `done.files` and every extra table; a table the analysis
    before wrote and this one does not (an optional one now empty) is removed."""
    before = (_index(results) or {}).get("tables", {})
    extra_files = set(done.extra)
    for name, file in done.files.items():
        frame = getattr(done, name) if name in ANALYSIS_TABLES else done.extra[file]
        write_atomic(results.stats_dir / file, frame.to_csv(index=False))
        extra_files.discard(file)
    for file in sorted(extra_files):
        write_atomic(results.stats_dir / file, done.extra[file].to_csv(index=False))
    for file in set(before.values()) - set(done.files.values()) if isinstance(before, dict) \
            else ():
        (results.stats_dir / str(file)).unlink(missing_ok=True)


def _source(results: ResultsDir) -> dict[str, float]:
    if not results.metrics_path.exists():
        return {"size": 0, "mtime_ns": 0}
    stat = os.stat(results.metrics_path)
    return {"size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


def write_index(results: ResultsDir, done: Analysis) -> None:
    """Keep the per-run table and say what stats/ was computed from."""
    done.runs.to_parquet(results.stats_dir / "runs.parquet", index=False)
    write_atomic(results.stats_dir / INDEX, json.dumps({
        **STATS.stamp(), "metrics": _source(results),
        "tables": done.files,
        "extra": sorted(set(done.extra) - set(done.files.values())),
    }, indent=1))


def _index(results: ResultsDir) -> dict | None:
    try:
        index = json.loads((results.stats_dir / INDEX).read_text())
    except (OSError, ValueError):
        return None
    return index if isinstance(index, dict) else None


def stale_reason(results: ResultsDir) -> str | None:
    """Why stats/ cannot be read back as it is (None: it is current), in words."""
    index = _index(results)
    if index is None:
        return "stats/ holds no analysis yet"
    if index.get("format") != STATS.current:
        return (f"stats/ was written by another fslab (analysis format "
                f"{index.get('format')}, this one reads {STATS.current})")
    if index.get("metrics") != _source(results):
        return "the results changed after stats/ was written"
    return None


def load_analysis(results: ResultsDir) -> Analysis | None:
    """The analysis as `fslab analyze` left it, or None when it is missing or stale
    (stale_reason says why)."""
    index = _index(results)
    if index is None or stale_reason(results) is not None:
        return None
    import pandas as pd


    def table(key: str) -> pd.DataFrame:
        name = index.get("tables", {}).get(key)
        return read(name) if name else pd.DataFrame()

    def read(name: str) -> pd.DataFrame:
        try:
            frame = pd.read_csv(results.stats_dir / name)
        except pd.errors.EmptyDataError:  # a statistic's empty table
            return pd.DataFrame()
        text = frame.select_dtypes(include=["object", "string"]).columns
        frame[text] = frame[text].fillna("")
        return frame

    files = index.get("tables", {})
    try:
        runs = pd.read_parquet(results.stats_dir / "runs.parquet")
        return Analysis(metrics=None, runs=runs, pairs=pairs_of(table("pairwise")),
                        **{key: table(key) for key in ANALYSIS_TABLES if key not in DERIVED},
                        extra={**{file: read(file) for name, file in files.items()
                                  if name not in ANALYSIS_TABLES},
                               **{name: read(name) for name in index.get("extra", [])}},
                        files=files)
    except (OSError, ValueError, KeyError):
        return None
