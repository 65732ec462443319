"""Participants beside a campaign's own targets: measured in the same interleaved rounds
as the cells, saved in a results directory of their own, and told once before the first
run and once after the last.

The raw device under the loop images (the ceiling that marks cache-bound results:
run/ceiling.py) is one; a new one is a module with a factory and one line in
core/lookups.py (PARTICIPANTS: factories are found by name, so the runner imports none). The
runner and the campaign's steps know only this protocol: a campaign without a
participant (`--no-ceiling`) runs the same code with one participant fewer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Protocol

from fslab.core.lookups import PARTICIPANTS

if TYPE_CHECKING:
    from fslab.host.lab import Lab
    from fslab.plan.order import Plan, RunSpec
    from fslab.results.store import ResultsDir
    from fslab.targets import Target


class Beside(Protocol):
    """One participant beside the campaign's targets."""

    @property
    def name(self) -> str:
        """Its target's name (runs on it are saved in `store`, not the campaign's)."""

    @property
    def target(self) -> Target: ...

    @property
    def store(self) -> ResultsDir:
        """Its own results directory, inside the campaign's."""

    @property
    def every_round(self) -> bool:
        """Whether it runs in each round of a job, or samples one round of each (drawn
        from the campaign's seed): a reference that need not cost a target's time."""

    def before(self) -> None:
        """Once, before the campaign's first run."""

    def runs_beside(self, group: list[RunSpec]) -> list[RunSpec]:
        """Its runs in the rounds `group` (one job's runs of one iteration) is measured in."""

    def finish(self) -> None:
        """Once, after the campaign's last run and before its analysis."""


# (plan, the campaign's results, lab, resumed) -> the participant, or None (not needed)
Factory = Callable[["Plan", "ResultsDir", "Lab", bool], "Beside | None"]


def participants(plan: Plan, results: ResultsDir, lab: Lab,
                 resume: bool) -> tuple[Beside, ...]:
    """Every participant this campaign has (each factory decides whether it is needed)."""
    import importlib

    found = []
    for entry in PARTICIPANTS:
        module, _, name = entry.partition(":")
        factory: Factory = getattr(importlib.import_module(module), name)
        found.append(factory(plan, results, lab, resume))
    return tuple(p for p in found if p is not None)
