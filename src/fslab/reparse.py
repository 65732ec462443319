"""`fslab reparse DIR`: rebuild a results directory's rows from its raw outputs.

Parsing is a stage of its own (issue 16): every run keeps its raw output (fio.json,
samples.json, bonnie.csv, ...) beside run.json, and each workload can parse it again. A
corrected parser (this release groups fio jobs per section, for one) reaches results
already on disk with `fslab reparse DIR`: each finished run is parsed again from its raw
output, through the workload the saved campaign defines (an imported file: from its
copy, through the importer's readers), and its rows are rewritten in run.json and
metrics.parquet (`fslab reparse` then analyses again when stats/ was there)
— nothing is re-run.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from fslab.errors import UserError
from fslab.importer import add_file_rows, parse_copy
from fslab.metrics import Measurement, add_rows, empty_columns, rows
from fslab.run_record import RunRecord
from fslab.store import ResultsDir
from fslab.workloads.process import HostCpu, host_cpu_measurements

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
    records = list(results.run_records())
    parse = _campaign_parser(results, results_dir) if any(
        not record.imported for record in records) else None
    default_host = str(results.environment().get("host", ""))
    report = ReparseReport()
    imported = empty_columns()  # an import's rows live in metrics.parquet alone
    previous: list[pd.DataFrame] = []  # the rows before, read once if a copy fails
    for record in records:
        if record.status != "ok":
            continue
        run_dir = results.run_dir(record.run_id)
        try:
            if record.imported:
                add_file_rows(imported, record, parse_copy(results, record))
                report.reparsed += 1
                continue
            assert parse is not None
            measurements = parse(record, run_dir)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            report.kept.append((record.run_id, f"raw output unreadable: {exc}"))
            if record.imported:
                previous = previous or [results.load_metrics()]
                _keep_previous_rows(previous[0], record.run_id, imported)
            continue
        if measurements is None:
            report.kept.append((record.run_id, "its workload is not in the saved campaign"))
            continue
        measurements += _host_cpu(record, measurements)
        columns = empty_columns()
        add_rows(columns, record.identity(), measurements, _host(record, default_host))
        record.metrics = rows(columns)
        results.save_run(record)
        report.reparsed += 1
    results.close()
    report.rows = results.rebuild_metrics(results.metric_rows() + rows(imported))
    return report


def _keep_previous_rows(previous: pd.DataFrame, run_id: str,
                        columns: dict[str, list[object]]) -> None:
    """An imported file whose copy no longer parses keeps the rows it had."""
    for row in previous[previous["run_id"] == run_id].to_dict("records"):
        for name, values in columns.items():
            values.append(row[name])


Parser = Callable[[RunRecord, Path], "list[Measurement] | None"]


def _campaign_parser(results: ResultsDir, results_dir: Path) -> Parser:
    """Parses a campaign run's raw output through the workload the saved campaign
    defines (None: the campaign has no such workload)."""
    from fslab.campaign import Overrides, load_campaign
    from fslab.workloads.build import build_workloads

    if not results.campaign_path().exists():
        raise UserError(f"{results_dir} has no campaign.toml to rebuild its workloads from")
    campaign = load_campaign(results.campaign_path(), Overrides(out=str(results_dir)))
    workloads = {w.name: w for w in build_workloads(campaign)}

    def parse(record: RunRecord, run_dir: Path) -> list[Measurement] | None:
        workload = workloads.get(record.workload)
        return None if workload is None else list(workload.parse(run_dir))

    return parse


def _host(record: RunRecord, default: str) -> str:
    """The host the run's rows carried (the machine that ran it)."""
    for row in record.metrics:
        if row.get("host") and row.get("host") != "All clients":
            return str(row["host"])
    return default


def _host_cpu(record: RunRecord, measurements: list[Measurement]) -> list[Measurement]:
    """The system-wide CPU rows the runner added, from what run.json recorded."""
    seen = record.workload_metadata.get("host_cpu")
    if not isinstance(seen, dict):
        return []
    use = HostCpu(float(seen.get("pct_of_one_core", "nan")),
                  float(seen.get("busy_seconds", "nan")))
    return host_cpu_measurements(use, measurements)
