"""The contract every workload implements: render, run, parse."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from fslab.metrics import Measurement


@dataclass
class RunOutput:
    """What one execution of a workload produced."""

    measurements: list[Measurement] = field(default_factory=list)
    status: str = "ok"  # ok | failed | unsupported
    reason: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)


class Workload(Protocol):
    """One workload of a campaign (a fio job, a user job file, ...)."""

    name: str
    family: str

    def check(self) -> None:
        """Raise UserError with one line when the workload cannot run here."""

    def required_bytes(self) -> int:
        """Space the workload's files need on the target (0 if unknown)."""

    def render(self, directory: Path) -> dict[str, str]:
        """Return the resolved input files (name -> text), as they would run in `directory`."""

    def run(self, directory: Path, run_dir: Path) -> RunOutput:
        """Run in `directory`, keep raw output in `run_dir`, and return what it measured."""

    def parse(self, run_dir: Path) -> list[Measurement]:
        """Rebuild the measurements from the raw output kept in `run_dir`."""
