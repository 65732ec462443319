"""Progress of a campaign: a rich bar on a terminal (current run, runs done, elapsed and
ETA); one line per finished run elsewhere (a CI log, nohup, `make run > log`), so a
ten-minute campaign is never ten minutes of silence."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import TextIO

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

from fslab.core.cell_keys import CellKey, short_names
from fslab.plan.order import RunSpec


class HeldNotes:
    """Status lines held until the runs start, so that an error before any run stays
    one line (safe from another thread)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._started = False
        self._waiting: list[str] = []

    def hold(self, line: str) -> bool:
        """Keep `line` for later (True) while the runs have not started."""
        with self._lock:
            if not self._started:
                self._waiting.append(line)
                return True
        return False

    def release(self) -> list[str]:
        """The runs start: the lines held until now."""
        with self._lock:
            self._started, waiting, self._waiting = True, self._waiting, []
        return waiting


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
        self.held = HeldNotes()
        self.names: dict[CellKey, str] = {}

    def __enter__(self) -> RichProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.bar.stop()

    def start(self, runs: Sequence[RunSpec], done: int) -> None:
        """Show the bar only once the runs start, so early errors stay one clean line."""
        self.names = run_names(runs)
        self.bar.update(self.task, total=len(runs), completed=done)
        for line in self.held.release():
            self.note(line)
        self.bar.start()

    def note(self, line: str) -> None:
        """A status line above the bar once the runs have started (HeldNotes until then)."""
        if not self.held.hold(line):
            self.bar.console.print(line, markup=False, highlight=False, style="dim")

    def run_started(self, run: RunSpec) -> None:
        self.bar.update(
            self.task,
            description=f"iteration {run.iteration}: {self.names.get(run.cell, run.run_id)}",
        )

    def run_finished(self, run: RunSpec, status: str, reason: str,
                     headline: str = "") -> None:
        if status != "ok":
            self.bar.console.print(f"[yellow]{run.run_id}: {status}: {reason}[/yellow]")
        self.bar.advance(self.task)


class LineProgress:
    """One line per finished run: which, its headline value, elapsed and remaining."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.total = self.done = self.counted = 0
        self.began = time.monotonic()
        self.held = HeldNotes()
        self.names: dict[CellKey, str] = {}

    def __enter__(self) -> LineProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stream.flush()

    def start(self, runs: Sequence[RunSpec], done: int) -> None:
        self.total, self.done, self.began = len(runs), done, time.monotonic()
        self.names = run_names(runs)
        for line in self.held.release():
            self._say(line)
        self._say(f"fslab: {self.total - done} runs to go")

    def note(self, line: str) -> None:
        """A status line (HeldNotes until the runs start)."""
        if not self.held.hold(line):
            self._say(line)

    def run_started(self, run: RunSpec) -> None:
        return None

    def run_finished(self, run: RunSpec, status: str, reason: str,
                     headline: str = "") -> None:
        self.done += 1
        self.counted += 1
        elapsed = time.monotonic() - self.began
        left = elapsed / self.counted * max(self.total - self.done, 0)
        what = headline if status == "ok" else f"{status}: {reason}"
        self._say(f"[{self.done}/{self.total}] iteration {run.iteration} "
                  f"{self.names.get(run.cell, run.run_id)}: {what} — {_clock(elapsed)} "
                  f"elapsed, about {_clock(left)} left")

    def _say(self, line: str) -> None:
        self.stream.write(line + "\n")
        self.stream.flush()


def run_names(runs: Sequence[RunSpec]) -> dict[CellKey, str]:
    """Each cell's name as short as the campaign allows, and its job: 'noatime -J size=16
    randwrite' where only ext4's options vary, 'ext4 randread' where targets do."""
    cells = list(dict.fromkeys(run.cell for run in runs))
    jobs_named = len({cell.job for cell in cells}) > 1  # short_names names them then
    return {cell: name if jobs_named or name == cell.label() else f"{name} {cell.job}"
            for cell, name in zip(cells, short_names(cells), strict=True)}


def _clock(seconds: float) -> str:
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest:02d} s" if minutes else f"{rest} s"
