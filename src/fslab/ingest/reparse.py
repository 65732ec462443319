"""`fslab reparse DIR`: rebuild a results directory's rows from its raw outputs.

Parsing is a stage of its own: every run keeps its raw output (fio.json, samples.json,
bonnie.csv, an imported file's copy, ...) beside run.json, and the parse stage
(parsers/registry.py) reads it the same way the runner and `fslab import` did. A
corrected parser reaches results already on disk with `fslab reparse DIR`: each finished
run is parsed again, its rows and what is derived from its raw output (which jobs formed
each observation, each clone's figures, ...) are rewritten in run.json and
metrics.parquet (`fslab reparse` then analyses again when stats/ was there) — nothing is
re-run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from fslab.core.errors import UserError
from fslab.core.metrics import add_rows, empty_columns, rows
from fslab.core.record import RunRecord
from fslab.ingest.importer import add_file_rows
from fslab.parsers.raw_files import RawOutputError
from fslab.parsers.registry import parse_run
from fslab.results.intervals import write_intervals
from fslab.results.store import ResultsDir

if TYPE_CHECKING:
    import pandas as pd


@dataclass
class ReparseReport:
    """Runs parsed again, and runs whose rows were kept as they were (with why)."""

    reparsed: int = 0
    kept: list[tuple[str, str]] = field(default_factory=list)
    rows: int = 0


def reparse(results_dir: Path) -> ReparseReport:
    """Parse every finished run of `results_dir` again from its raw output."""
    results = ResultsDir.open(results_dir)
    if results.version < 3 and (results.path / "runs.csv").exists():  # store.FORMAT
        raise UserError(f"{results_dir} was imported without copies of its files (by fslab "
                        "before results format 3): import the original files again")
    default_host = results.environment().host
    report = ReparseReport()
    imported = empty_columns()  # an import's rows live in metrics.parquet alone
    previous: list[pd.DataFrame] = []  # the rows before, read once if a copy fails
    for record in list(results.run_records()):  # each is saved again as it goes
        if record.status != "ok":
            continue
        try:
            parsed = parse_run(results.raw_files(record))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            report.kept.append((record.run_id, str(exc) if isinstance(exc, RawOutputError)
                                else f"raw output unreadable: {exc}"))
            if record.imported:
                previous = previous or [results.load_metrics()]
                _keep_previous_rows(previous[0], record.run_id, imported)
            continue
        report.reparsed += 1
        if record.imported:
            add_file_rows(imported, record, parsed.measurements)
            continue
        record.workload_metadata = record.workload_metadata.merged(parsed.metadata)
        columns = empty_columns()
        add_rows(columns, record.identity(), parsed.measurements, _host(record, default_host))
        record.metrics = rows(columns)
        results.save_run(record)
    results.close()
    report.rows = results.rebuild_metrics(results.metric_rows() + rows(imported))

    write_intervals(results)
    return report


def _keep_previous_rows(previous: pd.DataFrame, run_id: str,
                        columns: dict[str, list[object]]) -> None:
    """An imported file whose copy no longer parses keeps the rows it had."""
    for row in previous[previous["run_id"] == run_id].to_dict("records"):
        for name, values in columns.items():
            values.append(row[name])


def _host(record: RunRecord, default: str) -> str:
    """The host the run's rows carried (the machine that ran it)."""
    for row in record.metrics:
        if row.get("host") and row.get("host") != "All clients":
            return str(row["host"])
    return default
