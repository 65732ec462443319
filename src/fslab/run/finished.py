"""The runner's step from a finished workload to its record: the parse stage on the files
the run left in its directory (parsers/registry.py; `fslab reparse` runs the same), then
one run.json with the rows."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from fslab.core.failures import Failure, failure_of
from fslab.core.metrics import Measurement, add_rows, empty_columns, rows, title
from fslab.core.record import RunRecord
from fslab.core.run_parts import TargetDescription, Witness, WorkloadMetadata
from fslab.core.units import format_value
from fslab.parsers.raw_files import DirFiles, RawOutputError
from fslab.parsers.registry import parse_run
from fslab.workloads.base import RunOutput

if TYPE_CHECKING:
    from fslab.plan.order import RunSpec
    from fslab.plan.schema import Campaign


@dataclass(frozen=True)
class RunFacts:
    """What the runner knows of a run beside its output."""

    description: TargetDescription  # the target's, as provisioned
    started: float
    caches_dropped: bool
    run_dir: Path
    host: str  # the machine whose rows these are


def finished_record(campaign: Campaign, run: RunSpec, output: RunOutput,
                    finished: RunFacts) -> RunRecord:
    """The run's record with its rows, parsed from what it left in its directory."""
    measurements, derived = parsed_output(output, finished.run_dir)
    description = finished.description
    metadata = dict(output.metadata)
    witness = Witness.from_json(metadata.pop("witness", {}))
    record = RunRecord(
        run_id=run.run_id, campaign=campaign.name, target=run.target.name,
        fs=description.fs or run.target.fs, fs_impl=description.fs_impl,
        workload=run.workload.name, iteration=run.iteration, position=run.position,
        family=run.workload.family, status=output.status, reason=output.reason,
        failure=failure_of(output.status, output.failure), tool_said=output.tool_said,
        started=finished.started, finished=time.time(),
        caches_dropped=finished.caches_dropped, scale=campaign.scale,
        target_description=description,
        workload_metadata=WorkloadMetadata.from_json(metadata).merged(derived),
        witness=witness, levels=run.levels,
        target_base=run.target.base, job=run.job_name)
    columns = empty_columns()
    add_rows(columns, record.identity(), measurements, finished.host)
    record.metrics = rows(columns)
    return record


def parsed_output(output: RunOutput, run_dir: Path
                  ) -> tuple[list[Measurement], dict[str, object]]:
    """A finished run's rows and what the parse stage derived from its raw output (it
    joins the run's metadata). A run whose raw output cannot be read becomes a failed run
    that says why."""
    if output.status != "ok":
        return [], {}
    try:
        parsed = parse_run(DirFiles(run_dir))
    except RawOutputError as exc:
        output.status, output.reason, output.failure = "failed", str(exc), Failure.TOOL
        return [], {}
    return parsed.measurements, parsed.metadata


def headline_text(record: RunRecord | None, metric: str) -> str:
    """A finished run's value of its workload's primary metric, as the progress lines show
    it ('read 25.3 k IOPS'; '' when it has none: a user's job file, a failed run)."""
    rows = [m for m in (record.metrics if record else []) if m.get("metric") == metric
            and not m.get("sample")]
    if not rows:
        return ""
    row = next((m for m in rows if m.get("op") == "total"), rows[0])
    number = row["value"]
    if not isinstance(number, int | float):  # a row of run.json: a number where it measured
        return ""
    value = format_value(float(number), str(row.get("unit", "")))
    unit = title(metric) if metric in ("iops", "ops_per_s") else ""
    return f"{row.get('op')} {value}{' ' + unit if unit else ''}"
