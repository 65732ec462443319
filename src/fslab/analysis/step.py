"""The analysis's steps, registered as plug-ins are: a module declares `STEP = Step(...)`
and one line in core/lookups.py (`ANALYSIS_STEPS`) registers it. A step says what it
reads (the campaign's inputs, or what another step makes), what it makes, how (a pure
function called with what it reads, by name), the method statements methods.csv and the
report print, and which of what it makes are tables of stats/ (by file). The pipeline
(analysis/pipeline.py) runs every step in the order of what each reads, then writes
every table; a table no reader names is shown in the report under its step's method.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from fslab.core.lookups import ANALYSIS_STEPS

# What every step may read before any has run: the measured rows (pilot iterations left
# out), the run records, the environment, the campaign as recorded
# (core.campaign_settings.CampaignSettings: its margin, looks, primary metrics …), fio's
# per-interval values (None without logs) and whether iterations are blocks (not for
# imports).
INPUTS = ("metrics", "records", "environment", "settings", "intervals", "blocked")


@dataclass(frozen=True)
class Step:
    """One step: what it reads and makes, its function, its method and its tables."""

    name: str  # its row in methods.csv (when it states a method of its own)
    reads: tuple[str, ...]
    makes: tuple[str, ...]
    # called with what it reads, by name; returns what it makes (a tuple when several)
    run: Callable[..., Any] | None = None
    method: str = ""  # what it does and why, one statement ("" none of its own)
    rests_on: tuple[tuple[str, str], ...] = ()  # further (name, statement) rows after its own
    tables: Mapping[str, str] = field(default_factory=dict)  # made name -> file in stats/
    optional: frozenset[str] = frozenset()  # tables written only when not empty
    # whether its statements apply to this campaign (default: always), from what is made
    stated: Callable[[Mapping[str, Any]], bool] | None = None

    def statements(self, done: Mapping[str, Any]) -> list[dict[str, str]]:
        """Its rows of methods.csv for this campaign."""
        if self.stated is not None and not self.stated(done):
            return []
        own = [(self.name, self.method)] if self.method else []
        return [{"step": name, "method": text} for name, text in (*own, *self.rests_on)]

    def __call__(self, done: Mapping[str, Any]) -> dict[str, object]:
        """What it makes from what is done so far: {name: value}."""
        if self.run is None:
            return {}
        made = self.run(**{name: done[name] for name in self.reads})
        return dict(zip(self.makes, made if len(self.makes) != 1 else (made,), strict=True))


@lru_cache(maxsize=1)
def steps() -> tuple[Step, ...]:
    """Every registered step in the order of what each reads (registry order where that
    leaves a choice); a step that reads what none makes is a ValueError naming both."""
    declared = []
    for module in ANALYSIS_STEPS:
        step = getattr(importlib.import_module(module), "STEP", None)
        if not isinstance(step, Step):
            raise ValueError(f"analysis step module {module} declares no STEP of type Step")
        declared.append(step)
    made = set(INPUTS)
    for step in declared:
        made |= set(step.makes)
    for step in declared:
        if missing := [name for name in step.reads if name not in made]:
            raise ValueError(f"analysis step {step.name} reads {', '.join(missing)}, "
                             "which no step makes")
    ordered: list[Step] = []
    ready = set(INPUTS)
    while declared:
        step = next((s for s in declared if set(s.reads) <= ready), None)
        if step is None:
            raise ValueError("analysis steps read each other in a circle: "
                             + ", ".join(s.name for s in declared))
        declared.remove(step)
        ordered.append(step)
        ready |= set(step.makes)
    return tuple(ordered)


def table_files() -> dict[str, str]:
    """Every step's tables: made name -> file in stats/."""
    return {name: file for step in steps() for name, file in step.tables.items()}
