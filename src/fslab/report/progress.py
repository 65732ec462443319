"""A rich progress bar for the runner: current run, runs done, elapsed and ETA."""

from __future__ import annotations

import threading

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from fslab.plan.order import RunSpec


class RichProgress:
    """Shows which run is in flight and when the campaign should end."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self.bar = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console,
            transient=False,
        )
        self.task = self.bar.add_task("starting", total=None)
        self._lock = threading.Lock()
        self._started = False
        self._waiting: list[str] = []

    def __enter__(self) -> RichProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.bar.stop()

    def start(self, total: int, done: int) -> None:
        """Show the bar only once the runs start, so early errors stay one clean line."""
        self.bar.update(self.task, total=total, completed=done)
        with self._lock:
            self._started, waiting, self._waiting = True, self._waiting, []
        for line in waiting:
            self.note(line)
        self.bar.start()

    def note(self, line: str) -> None:
        """A status line above the bar once the runs have started (safe from another
        thread); until then it waits, so that an error before any run stays one line."""
        with self._lock:
            if not self._started:
                self._waiting.append(line)
                return
        self.bar.console.print(line, markup=False, highlight=False, style="dim")

    def run_started(self, run: RunSpec) -> None:
        self.bar.update(
            self.task,
            description=f"iteration {run.iteration}: {run.workload.name} on {run.target.name}",
        )

    def run_finished(self, run: RunSpec, status: str, reason: str) -> None:
        if status != "ok":
            self.bar.console.print(f"[yellow]{run.run_id}: {status}: {reason}[/yellow]")
        self.bar.advance(self.task)
