"""`fslab reparse DIR`: rebuild a results directory's rows from its raw outputs.

Parsing is a stage of its own (issue 16): every run keeps its raw output (fio.json,
samples.json, bonnie.csv, ...) beside run.json, and each workload can parse it again. A
corrected parser (this release groups fio jobs per section, for one) reaches results
already on disk with `fslab reparse DIR`: each finished run is parsed again from its raw
output, through the workload the saved campaign defines, and its rows are rewritten in
run.json and metrics.parquet (`fslab reparse` then analyses again when stats/ was there)
— nothing is re-run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fslab.errors import UserError
from fslab.metrics import add_rows, empty_columns, rows
from fslab.store import ResultsDir
from fslab.workloads.process import HostCpu, host_cpu_measurements


@dataclass
class ReparseReport:
    """Runs parsed again, and runs whose rows were kept as they were (with why)."""

    reparsed: int = 0
    kept: list[tuple[str, str]] = field(default_factory=list)
    rows: int = 0


def reparse(results_dir: Path) -> ReparseReport:
    """Parse every finished run of `results_dir` again from its raw output."""
    from fslab.campaign import Overrides, load_campaign
    from fslab.workloads.build import build_workloads

    results = ResultsDir.open(results_dir)
    if (results.path / "runs.csv").exists() and not any(results.runs_dir.glob("*/run.json")):
        raise UserError(f"{results_dir} was imported without copies of its files: import "
                        "the original files again to parse them anew")
    if not results.campaign_path().exists():
        raise UserError(f"{results_dir} has no campaign.toml to rebuild its workloads from")
    campaign = load_campaign(results.campaign_path(), Overrides(out=str(results_dir)))
    workloads = {w.name: w for w in build_workloads(campaign)}
    default_host = str(results.environment().get("host", ""))
    report = ReparseReport()
    for record in list(results.run_records()):
        run_id = str(record["run_id"])
        if record.get("status") != "ok":
            continue
        workload = workloads.get(str(record.get("workload")))
        if workload is None:
            report.kept.append((run_id, "its workload is not in the saved campaign"))
            continue
        try:
            measurements = workload.parse(results.runs_dir / run_id)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            report.kept.append((run_id, f"raw output unreadable: {exc}"))
            continue
        measurements += _host_cpu(record, measurements)
        columns = empty_columns()
        add_rows(columns, _identity(record), measurements, _host(record, default_host))
        record["metrics"] = rows(columns)
        results.save_run(run_id, record)
        report.reparsed += 1
    report.rows = results.rebuild_metrics()
    return report


def _identity(record: dict[str, Any]) -> dict[str, Any]:
    description = record.get("target_description") or {}
    return {"campaign": record.get("campaign", ""), "run_id": record["run_id"],
            "target": record.get("target", ""),
            "fs": record.get("fs") or description.get("fs", ""),
            "fs_impl": record.get("fs_impl") or description.get("fs_impl", ""),
            "workload": record.get("workload", ""), "iteration": record.get("iteration", 0)}


def _host(record: dict[str, Any], default: str) -> str:
    """The host the run's rows carried (the machine that ran it)."""
    for row in record.get("metrics") or []:
        if isinstance(row, dict) and row.get("host") and row.get("host") != "All clients":
            return str(row["host"])
    return default


def _host_cpu(record: dict[str, Any], measurements: list[Any]) -> list[Any]:
    """The system-wide CPU rows the runner added, from what run.json recorded."""
    seen = (record.get("workload_metadata") or {}).get("host_cpu")
    if not isinstance(seen, dict):
        return []
    use = HostCpu(float(seen.get("pct_of_one_core", "nan")),
                  float(seen.get("busy_seconds", "nan")))
    return host_cpu_measurements(use, measurements)
