"""How a tuner's stage measures configurations: `Measure(stage, rounds, configs)` makes
sure each configuration has a value in each of those rounds (one fresh file system per
configuration and round) and returns everything the stage measured so far, as plain data.

`CampaignMeasure` does it as `fslab run` runs a campaign (run/orchestrator.run_campaign): a
stage is a results directory under the tune's own (screen/, race/, confirm/), a call
measures the question's target and job with every factor swept and only `configs` as
cells, in iterations `rounds` only; a call that finds them on disk (a resumed tune)
measures nothing again. The stages are pure functions of what Measure returns, so a
simulated measure (benchmarks, tests) and the real one give them the same data.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, Protocol

from fslab.analysis.cells.observations import per_run
from fslab.analysis.factors.levels import cell_levels, with_levels
from fslab.analysis.factors.sweeps import job_questions
from fslab.analysis.pairs.questions import declared_primaries
from fslab.analysis.pipeline import analyze_results
from fslab.core.errors import UserError
from fslab.core.failures import Failure
from fslab.core.metrics import METRIC_UNITS
from fslab.host.kernel_log import briefly
from fslab.plan.sweep import workload_variants
from fslab.results.store import ResultsDir
from fslab.run.orchestrator import RunOptions, run_campaign
from fslab.tune.space import Config, Configuration, Space
from fslab.workloads.null import SITTING_SPAN

if TYPE_CHECKING:
    import pandas as pd

    from fslab.host.lab import Lab
    from fslab.plan.schema import Campaign
    from fslab.run.runner import Progress

SCREEN, RACE, CONFIRM = "screen", "race", "confirm"
STAGE_SEEDS = {SCREEN: 1, RACE: 2, CONFIRM: 3}  # each stage draws fresh data, in one
# sitting: stage k runs under the tune's seed + k·SITTING_SPAN (the simulator's sitting is
# the seed modulo it: its sitting's effects are the same in every stage)
Values = dict[Config, dict[int, float]]  # configuration -> {round: value}


REFUSED, FAILED = "refused", "failed"  # a configuration's file system would not be made


class Unmeasured(NamedTuple):
    """Why nothing of a configuration was measured: its status (REFUSED where the file
    system would not be made, no other round could change that; FAILED otherwise) and
    the words of the tool or the first run's reason."""

    status: str
    detail: str

    def __str__(self) -> str:
        return f"{self.status}: {self.detail}"


@dataclass(frozen=True)
class Question:
    """What a tune answers: one target and one job of the campaign, by one metric."""

    target: str
    job: str
    op: str
    metric: str
    better: str


@dataclass
class StageData:
    """What a stage measured so far: each configuration's objective by round, each
    bounded metric's, the configurations of which nothing could be measured (and why:
    'refused: …' where the file system would not be made, 'failed: …' otherwise), and the
    machine seconds each configuration's runs took."""

    question: Question
    values: Values = field(default_factory=dict)
    bounded: dict[str, Values] = field(default_factory=dict)
    unmeasured: dict[Config, Unmeasured] = field(default_factory=dict)
    seconds: dict[Config, float] = field(default_factory=dict)

    def only(self, configs: Sequence[Config]) -> StageData:
        """The same, for `configs` only."""
        keep = set(configs)
        return StageData(self.question, {c: v for c, v in self.values.items() if c in keep},
                        {m: {c: v for c, v in g.items() if c in keep}
                         for m, g in self.bounded.items()},
                        {c: w for c, w in self.unmeasured.items() if c in keep},
                        {c: s for c, s in self.seconds.items() if c in keep})


class Measure(Protocol):
    """Measure `configs` in `rounds` of `stage`; what the stage measured so far."""

    def __call__(self, stage: str, rounds: range, configs: Sequence[Config]) -> StageData: ...


@dataclass
class CampaignMeasure:
    """A stage measured as a campaign of the question's target and job (module doc)."""

    base: Campaign
    space: Space
    target: str
    job: str
    out: Path
    lab: Lab
    progress: Progress | None = None
    question: Question | None = None

    def __call__(self, stage: str, rounds: range, configs: Sequence[Config]) -> StageData:
        where = self.out / stage
        campaign = stage_campaign(self.base, self.space, self.target, self.job, stage,
                                  list(configs), rounds)
        run_campaign(campaign, where, self.lab,
                     RunOptions(resume=(where / "format.json").exists(), analyse=False),
                     self.progress)
        if self.question is None:
            self.question = question_of(where, self.target, self.job, self.space.objective)
        return read(where, self.space, self.question, until=rounds.stop - 1)

    def analyse(self, stage: str) -> None:
        """The stage's whole analysis, once at its end (its rounds skip it): `fslab
        report DIR/stage` shows it like any campaign."""
        where = self.out / stage
        if (where / "format.json").exists():
            analyze_results(ResultsDir.open(where))


def plain(campaign: Campaign) -> Campaign:
    """The campaign without a design of its own (no sweep, cells or looks)."""
    return dataclasses.replace(campaign, sweep={}, target_sweeps={}, cells=[],
                               factor_scopes={}, looks=[], look_cells=[])


def questions_of(campaign: Campaign) -> list[tuple[str, str]]:
    """(target, job) of every question the campaign asks a tuner: each declared target
    with each job of its workloads."""
    jobs = list(dict.fromkeys(v.job for v in workload_variants(plain(campaign))))
    return [(spec.name, job) for spec in campaign.targets for job in jobs]


def stage_campaign(base: Campaign, space: Space, target: str, job: str, stage: str,
                   configs: list[Config], rounds: range) -> Campaign:
    """The campaign of one call of a stage: the question's target and job, every factor
    at every level, only `configs` as cells, iterations `rounds`, the stage's own seed."""
    spec = next(t for t in base.targets if t.name == target)
    campaign = dataclasses.replace(
        plain(base), name=f"{base.name}-{stage}", targets=[spec],
        sweep={f.name: list(f.levels) for f in space.factors},
        first_iteration=rounds.start, iterations=rounds.stop - 1,
        seed=base.seed + STAGE_SEEDS[stage] * SITTING_SPAN,
        workloads=list(base.workloads), out=None,
        factor_scopes={f.name: "target" if f in space.target_factors() else "job"
                       for f in space.factors})
    return dataclasses.replace(campaign, cells=[
        Configuration(space, config).cell(target, job) for config in configs])


def read(where: Path, space: Space, question: Question, until: int) -> StageData:
    """What a stage's directory holds of the question in rounds up to `until` (a resumed
    tune finds later rounds on disk: its looks must not see them early), by
    configuration: each run's value, read by the levels it recorded (core/cell_keys.py),
    never by its name."""
    results = ResultsDir.open(where)
    metrics = results.load_metrics()
    found = StageData(question)
    metrics = metrics[metrics["iteration"].astype(int) <= until] if not metrics.empty \
        else metrics
    if not metrics.empty:
        runs = with_levels(per_run(metrics), cell_levels(metrics))
        mine = runs[(runs["job"].astype(str) == question.job)
                    & (runs["op"].astype(str) == question.op)]
        found.values = _by_config(mine[mine["metric"].astype(str) == question.metric], space)
        for bound in space.bounds:
            found.bounded[bound.metric] = _by_config(
                mine[mine["metric"].astype(str) == bound.metric], space)
    runs_table = results.load_runs()
    if not runs_table.empty:
        runs_table = runs_table[runs_table["iteration"].astype(int) <= until]
    found.unmeasured = _unmeasured(runs_table, space)
    found.seconds = _seconds(runs_table, space)
    return found


def _by_config(rows: pd.DataFrame, space: Space) -> Values:
    out: Values = {}
    for row in rows.to_dict("records"):
        config = config_of(row, space)
        if config is not None:
            out.setdefault(config, {})[int(row["iteration"])] = float(row["value"])
    return out


def config_of(row: dict[str, object], space: Space) -> Config | None:
    """The configuration a row's levels name (Configuration.of_row)."""
    found = Configuration.of_row(space, row)
    return found.config if found is not None else None


def _unmeasured(runs: pd.DataFrame, space: Space) -> dict[Config, Unmeasured]:
    """{configuration: why} of those whose every run so far failed: 'refused: …' where
    the file system would not be made (no other round could change that), 'failed: …'
    (the first run's reason) otherwise."""
    if runs.empty:
        return {}
    failed: dict[Config, Unmeasured] = {}
    measured: set[Config] = set()
    for row in runs.to_dict("records"):
        config = config_of(row, space)
        if config is None:
            continue
        if row["status"] == "ok":
            measured.add(config)
        elif row.get("failure") == Failure.REFUSED:
            said = str(row.get("tool_said") or row["reason"])
            failed.setdefault(config, Unmeasured(REFUSED, briefly(said)))
        else:
            failed.setdefault(config, Unmeasured(FAILED, str(row["reason"])))
    return {c: why for c, why in failed.items() if c not in measured}


def _seconds(runs: pd.DataFrame, space: Space) -> dict[Config, float]:
    """Machine seconds of each configuration's runs (the runs table's machine_s: each
    run's share of the machine's time, setup and measuring)."""
    out: dict[Config, float] = {}
    if runs.empty or "machine_s" not in runs:
        return out
    for row in runs.to_dict("records"):
        config = config_of(row, space)
        took = float(row["machine_s"]) if row["machine_s"] is not None else math.nan
        if config is not None and took == took:
            out[config] = out.get(config, 0.0) + took
    return out


def question_of(where: Path, target: str, job: str, objective: str) -> Question:
    """The question a stage's results answer: the job's primary question (or the
    `objective` metric) and its direction, as the campaign's own analysis finds it."""
    results = ResultsDir.open(where)
    metrics = results.load_metrics()
    if metrics.empty:
        raise UserError(f"{job} on {target}: nothing was measured (every run failed: see "
                        f"{where / 'runs'})")
    runs = with_levels(per_run(metrics), cell_levels(metrics))
    asked = job_questions(runs, declared_primaries(list(results.run_records())),
                          (objective,) if objective else results.campaign_settings().primary)
    if job not in asked:
        raise UserError(f"{job} on {target}: the stage measured no {objective or 'primary'} "
                        "metric to tune for")
    op, metric = asked[job]
    return Question(target, job, op, metric, METRIC_UNITS[metric][1])
