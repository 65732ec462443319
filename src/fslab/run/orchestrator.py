"""The one campaign orchestrator: start, execute (with --resolve's looks, or an adaptive
campaign's second stage), finish — what `fslab run` (through api.run) and every stage of a
tune (tune/measure.py) do with a campaign."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from fslab.core.errors import UserError
from fslab.plan.order import DEFAULT_BUDGET_S
from fslab.run.adaptive import Goal
from fslab.run.campaign_run import CampaignRun, RunResult, both
from fslab.run.resolve import resolve, start_looking

if TYPE_CHECKING:
    from fslab.host.lab import Lab
    from fslab.plan.schema import Campaign
    from fslab.run.runner import Progress


@dataclass(frozen=True)
class RunOptions:
    """How to run a campaign: `fslab run`'s flags by their names (tests/cli/
    test_run_options.py holds each field to its flag), and what the api asks of a run
    besides. A new run option is its flag in cli/run.py, its field here and the code that
    reads it (api.run documents them)."""

    resume: bool = False
    confirmed_devices: frozenset[str] = frozenset()
    force_device: bool = False
    until_ci: float | None = None
    max_iterations: int = 20
    until_detectable: float | None = None
    rerun_disturbed: bool = False
    rerun_unsteady: bool = False
    # Measuring seconds a plan may take (None: no limit); with `resolve`, the machine
    # seconds the campaign's runs may take in all (None: plan.order.DEFAULT_BUDGET_S).
    budget: float | None = None
    yes: bool = False  # run a plan past its budget
    resolve: bool = False
    # The catalogue the campaign is recorded in: its host's between-sitting spread is read
    # from it at the start, for the repeat intervals (analysis/sittings/repeat.py).
    catalogue: Path | None = None
    # The results directory this run is a new sitting of (`fslab run --again DIR`): with
    # `summarise`, all of its sittings are pooled at the end (api/again.py).
    again: Path | None = None
    # Write every stats/ table at the end (False: only what a reader of the values needs,
    # the metrics and intervals: a tune's rounds, analysed once at the stage's end).
    analyse: bool = True
    # Record the finished campaign in `catalogue`, pool `again`'s sittings and say what
    # `fslab run` prints of it (api.run: RunResult.outcome).
    summarise: bool = False

    @property
    def plan_budget(self) -> float | None:
        """The measuring seconds a plan may take before it is refused (None: any)."""
        return None if self.yes else self.budget


def run_campaign(campaign: Campaign, out: Path, lab: Lab,
                 options: RunOptions = RunOptions(), progress: Progress | None = None
                 ) -> RunResult:
    """Run a campaign into a results directory: start, execute (with --resolve's looks, or
    an adaptive campaign's second stage), finish (module doc; api.run documents the
    options)."""
    goal = Goal(options.until_ci, options.until_detectable)
    if options.resolve and goal:
        raise UserError("--resolve decides questions by looks of its own: drop --until-ci "
                        "and --until-detectable")
    first = CampaignRun.start(campaign, out, lab, resume=options.resume,
                              force_device=options.force_device,
                              confirmed_devices=options.confirmed_devices,
                              budget=options.plan_budget)
    if options.catalogue is not None:
        import dataclasses

        first = dataclasses.replace(first, catalogue=options.catalogue)
    if options.resolve:
        first = start_looking(first)
    outcome = first.execute(progress, options.rerun_disturbed,
                            before=first.pre_run_steps(),
                            rerun_unsteady=options.rerun_unsteady)
    if options.resolve:
        spend = options.budget or DEFAULT_BUDGET_S
        last, outcome, left_out = resolve(first, outcome, spend, progress,
                                          options.rerun_disturbed, options.rerun_unsteady)
        result = last.finish(outcome, goal)
        result.unresolved = left_out
        return result
    second = first.second_stage(goal, options.max_iterations)
    if second is not None:
        outcome = both(outcome, second.execute(progress, options.rerun_disturbed,
                                               rerun_unsteady=options.rerun_unsteady))
    return first.finish(outcome, goal, analyse=options.analyse)



