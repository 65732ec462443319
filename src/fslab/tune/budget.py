"""What a tune may spend: runs (--max-runs) or wall seconds (--budget), counted as the
stages plan their runs — never from what is on disk, so a resumed tune with --max-runs
replays the decisions of an uninterrupted one exactly. A wall-time budget's runs left
follow the runs measured so far, not the estimate made before any ran."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

NO_LIMIT = 10**9


@dataclass
class Budget:
    """Runs or seconds, and what was spent."""

    max_runs: int | None
    seconds: float | None
    per_run_s: float  # the estimate before any run; then what runs took here
    spent: int = 0
    started: float = field(default_factory=time.monotonic)

    def spend(self, runs: int) -> None:
        """Count `runs` as measured; a run's cost follows the machine."""
        self.spent += runs
        if self.spent:
            self.per_run_s = max(self.per_run_s,
                                 (time.monotonic() - self.started) / self.spent)

    def left(self) -> int:
        """Runs the budget still pays for."""
        by_runs = self.max_runs - self.spent if self.max_runs is not None else math.inf
        by_time = ((self.seconds - (time.monotonic() - self.started))
                   / max(self.per_run_s, 1e-3) if self.seconds is not None else math.inf)
        left = min(by_runs, by_time)
        return max(0, int(left)) if math.isfinite(left) else NO_LIMIT

    def total(self) -> int:
        """Runs in all: spent and left."""
        return self.spent + self.left()

    def share(self, parts: int) -> Budget:
        """An equal part of what is left (each question of a tune of several)."""
        return Budget(None if self.max_runs is None else self.max_runs // parts,
                      None if self.seconds is None else self.seconds / parts,
                      self.per_run_s)
