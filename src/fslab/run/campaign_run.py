"""One campaign run as a pipeline of named steps (run/orchestrator.py runs them: `fslab
run` through api.run, and every stage of a tune).

    start        prepare the plan and targets, open or create the results directory
    pre-run      age the targets that start aged, describe the environment, then each
                 participant's own first step (the raw-device ceiling measures the jobs
                 not measured in rounds: run/participants.py) (Runner.before)
    execute      the runner, with the participants in each round
    second stage an adaptive campaign's pilot decides how many more iterations to run:
                 a new CampaignRun over a replaced campaign (fslab.run.adaptive)
    finish       each participant's last step (the ceiling's values join environment.json),
                 then the analysis (adaptive: and what is still short of the goal)

Each step is one method, so a new pre-run step is one method and one entry of
`pre_run_steps`, and run/orchestrator.run_campaign reads as the list above.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fslab.aging.in_campaign import age_targets
from fslab.analysis.pipeline import analyze_results, preload
from fslab.analysis.sittings.repeat import PRIOR
from fslab.core.errors import Shortage, UserError
from fslab.history.sittings import history_spread as host_history
from fslab.host.children import while_unmeasured
from fslab.host.environment import capture, sitting
from fslab.plan.order import check_budget, make_plan
from fslab.plan.preflight import prepare
from fslab.results.intervals import write_intervals
from fslab.results.store import ResultsDir
from fslab.run.adaptive import second_stage, still_open
from fslab.run.aging_places import age_once, check_levels
from fslab.run.lab_space import campaign_need
from fslab.run.option_check import check_swept_options
from fslab.run.participants import participants
from fslab.run.runner import NoProgress, Runner

if TYPE_CHECKING:
    import pandas as pd

    from fslab.core.environment_record import SittingSpread
    from fslab.host.lab import Lab
    from fslab.plan.order import Plan
    from fslab.plan.schema import Campaign
    from fslab.report.run_text import RunOutcome
    from fslab.results.stats_files import Analysis
    from fslab.run.adaptive import Goal
    from fslab.run.option_check import Refused
    from fslab.run.participants import Beside
    from fslab.run.runner import Progress, RunnerResult
    from fslab.targets import Target


@dataclass
class RunResult:
    """What `run` produced: where the results are, and how the runs went."""

    results: ResultsDir
    runner: RunnerResult
    summary: pd.DataFrame | None = None  # the per-cell summary
    unconverged: list[str] = field(default_factory=list)  # --until-ci cells still too wide
    unresolved: list[str] = field(default_factory=list)  # --resolve: what no budget reached
    analysis: Analysis | None = None  # the analysis the run ended with
    # what `fslab run` says of it (report/run_text.py; api.run fills it in)
    outcome: RunOutcome | None = None


@dataclass(frozen=True)
class CampaignRun:
    """A campaign bound to its plan, targets, results directory and lab."""

    campaign: Campaign
    plan: Plan
    targets: dict[str, Target]
    results: ResultsDir
    lab: Lab
    resume: bool
    hosts: tuple[Any, ...]
    beside: tuple[Beside, ...]  # participants of the rounds (run/participants.py)
    notes: tuple[str, ...] = ()  # what the checks before the campaign want said once
    catalogue: Path | None = None  # where its host's history is (RunOptions.catalogue)
    # variants the file system refuses, by name, each with why (run/option_check.py)
    refused: dict[str, Refused] = field(default_factory=dict)

    @classmethod
    def start(cls, campaign: Campaign, out: Path, lab: Lab, *, resume: bool,
              confirmed_devices: frozenset[str], force_device: bool,
              budget: float | None = None) -> CampaignRun:
        """Check and plan the campaign (within `budget` seconds of measuring, when given),
        then open (resume) or create its results."""
        while_unmeasured(_preload_the_analysis)

        opened = ResultsDir.open(out) if resume else None
        notes: list[str] = []
        refused: dict[str, Refused] = {}
        planned = make_plan(campaign)  # once: the checks, the runner and the rounds share it
        if budget is not None:  # before any other check: the plan alone decides it
            done = opened.completed_run_ids() if opened is not None else set()
            check_budget([run for run in planned.runs if run.run_id not in done], budget)
        plan, targets = prepare(campaign, confirmed_devices=confirmed_devices,
                                force_device=force_device, plan=planned)
        need = campaign_need(plan.runs, targets)
        if short := need.shortfall(lab.root):  # no run fits the lab's disk: nothing made
            raise Shortage(short)
        if opened is None:
            check_levels(plan.targets, campaign)  # each aged level's settings, in one line

            checked = check_swept_options(targets, lab,  # before the results directory
                                          {spec.name: spec for spec in campaign.targets})
            notes, refused = list(checked.notes), checked.refused
            opened = ResultsDir.create(out)
            opened.write_campaign(campaign.settings())
        results = opened
        hosts = tuple(campaign.hosts)  # parsed once, with the campaign
        return cls(campaign, plan, targets, results, lab, resume, hosts,
                   participants(plan, results, lab, resume), tuple(notes), refused=refused)

    def pre_run_steps(self) -> list[Callable[[], None]]:
        """What must happen once before the first run, in order (Runner.before)."""
        return [self.age_targets, self.describe_environment,
                *(participant.before for participant in self.beside)]

    def age_targets(self) -> None:
        """Targets that start aged are aged first, so the environment describes them aged
        (and with age_reuse, each aged level of the `age` factor once: run/aging_places)."""
        age_targets(self.campaign.targets, self.lab, self.results)
        age_once(self.plan.targets, self.campaign, self.lab, self.results, self.plan.runs)

    def describe_environment(self) -> None:
        """environment.json: the machine, tools and targets (a resume keeps what its
        participants recorded there)."""
        environment = capture(self.lab.root, [tool for target in self.targets.values()
                                              for tool in target.tools])
        environment.targets = {name: t.describe() for name, t in self.targets.items()}
        environment.sitting = sitting(environment, simulated_host(self.campaign))
        if self.catalogue is not None:
            environment.sitting.spread = recorded_spread(self.catalogue,
                                                         environment.sitting.host)
        if self.resume:
            before = self.results.environment()
            environment.ceilings = before.ceilings
            environment.ceilings_by_iteration = before.ceilings_by_iteration
            environment.ceilings_reused = before.ceilings_reused
            environment.more = {**before.more, **environment.more}
        with self.results.room():
            self.results.write_environment(environment)

    def execute(self, progress: Progress | None, rerun_disturbed: bool,
                before: list[Callable[[], None]] | None = None,
                rerun_unsteady: bool = False) -> RunnerResult:
        """Run every run of the plan not yet complete."""
        outcome = Runner(self.plan, self.results, self.lab, self.targets,
                         progress or NoProgress(), hosts=self.hosts,
                         rerun_disturbed=rerun_disturbed, rerun_unsteady=rerun_unsteady,
                         beside=self.beside, refused=self.refused,
                         before=before or []).execute()
        outcome.warnings[:0] = self.notes
        return outcome

    def second_stage(self, goal: Goal, max_iterations: int) -> CampaignRun | None:
        """An adaptive campaign's second stage: the iterations run so far were the pilot,
        and a replaced campaign adds as many as the pilot asks for (fslab.run.adaptive)."""
        if not goal or self.campaign.pilot:
            return None
        iterations = self.campaign.iterations
        more = second_stage(self.results.path, goal, iterations, max_iterations)
        campaign = dataclasses.replace(self.campaign, pilot=iterations,
                                       iterations=iterations + more)
        self.results.write_campaign(campaign.settings())
        return dataclasses.replace(self, campaign=campaign, plan=make_plan(campaign),
                                   resume=True, notes=())

    def finish(self, outcome: RunnerResult, goal: Goal, analyse: bool = True) -> RunResult:
        """The participants' last steps, then analyse: every stats/ table, so that
        `fslab report` renders what the run left without analysing again (adaptive: also
        say what is still short of the goal). Without `analyse`, the values alone."""
        with self.results.room():  # a directory that cannot be written: one line
            for participant in self.beside:
                participant.finish()
            write_intervals(self.results)
            if not analyse:
                return RunResult(self.results, outcome)
            done = analyze_results(self.results)
        if not goal:
            return RunResult(self.results, outcome, done.summary, analysis=done)

        return RunResult(self.results, outcome, done.summary,
                         still_open(done.summary, done.tests, goal), analysis=done)


def both(first: RunnerResult, second: RunnerResult | None) -> RunnerResult:
    """The counts of a campaign run in two stages, as one."""
    if second is None:
        return first
    return dataclasses.replace(first, ok=first.ok + second.ok,
                               failed=first.failed + second.failed,
                               warnings=first.warnings + second.warnings)


def _preload_the_analysis() -> None:
    """The analysis's libraries, imported while fslab waits on a layout pass
    (analysis.pipeline.preload)."""
    preload()


def simulated_host(campaign: Campaign) -> str:
    """The host a simulator campaign names (the null workload's option `host`), or ''."""
    for entry in campaign.workloads:
        if entry.preset == "null" and entry.options.get("host"):
            return str(entry.options["host"])
    return ""


def recorded_spread(catalogue: Path, host: str) -> SittingSpread:
    """The host's between-sitting spread in the catalogue (history/sittings.py), for
    environment.json ("sitting" → "spread"); an unreadable catalogue counts as none (the
    campaign never fails for its catalogue)."""
    try:
        found = host_history(catalogue, host) if Path(catalogue).exists() else PRIOR
    except (UserError, OSError):
        found = PRIOR
    return found
