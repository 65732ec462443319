"""The runner's step from a finished workload to its rows: the parse stage, on the files
the run left in its directory (parsers/registry.py; `fslab reparse` runs the same)."""

from __future__ import annotations

from pathlib import Path

from fslab.metrics import Measurement
from fslab.parsers.raw_files import DirFiles
from fslab.parsers.registry import RawOutputError, merge_derived, parse_run
from fslab.workloads.base import RunOutput


def parsed_output(output: RunOutput, run_dir: Path) -> list[Measurement]:
    """A finished run's rows; what is derived from its raw output joins its metadata. A
    run whose raw output cannot be read becomes a failed run that says why."""
    if output.status != "ok":
        return []
    try:
        parsed = parse_run(DirFiles(run_dir))
    except RawOutputError as exc:
        output.status, output.reason = "failed", f"raw output: {exc}"
        return []
    merge_derived(output.metadata, parsed.metadata)
    return parsed.measurements
