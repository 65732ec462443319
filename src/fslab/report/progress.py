"""A rich progress bar for the runner: current run, runs done, elapsed and ETA."""

from __future__ import annotations

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

from fslab.plan import RunSpec


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

    def __enter__(self) -> RichProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.bar.stop()

    def start(self, total: int, done: int) -> None:
        """Show the bar only once the runs start, so early errors stay one clean line."""
        self.bar.update(self.task, total=total, completed=done)
        self.bar.start()

    def run_started(self, run: RunSpec) -> None:
        self.bar.update(
            self.task,
            description=f"iteration {run.iteration}: {run.workload.name} on {run.target.name}",
        )

    def run_finished(self, run: RunSpec, status: str, reason: str) -> None:
        if status != "ok":
            self.bar.console.print(f"[yellow]{run.run_id}: {status}: {reason}[/yellow]")
        self.bar.advance(self.task)
