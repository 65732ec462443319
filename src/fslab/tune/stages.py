"""A tuner's stages as campaigns: the question's target and job, every factor swept at
every level, and only the stage's configurations as cells (plan: Campaign.cells), each a
fresh file system per round; run as `fslab run` runs a campaign (run/campaign.py), into a
results directory of its own, resumed where it stopped; read back as each
configuration's values of the objective, by round."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from fslab.core.errors import UserError
from fslab.host.kernel_log import briefly
from fslab.plan.model import Campaign
from fslab.plan.sweep import target_variants, workload_variants
from fslab.run.places import REFUSED_BY_TOOL
from fslab.tune.space import Config, Space

if TYPE_CHECKING:
    import pandas as pd

    from fslab.host.lab import Lab
    from fslab.run.runner import Progress

SCREEN, RACE, CONFIRM = "screen", "race", "confirm"
STAGE_SEEDS = {SCREEN: 0, RACE: 1, CONFIRM: 2}  # each stage draws fresh data


@dataclass(frozen=True)
class Question:
    """What a tune answers: one target and one job of the campaign, by one metric."""

    target: str
    job: str
    op: str
    metric: str
    better: str


def questions_of(campaign: Campaign) -> list[tuple[str, str]]:
    """(target, job) of every question the campaign asks a tuner: each declared target
    with each job of its workloads."""
    jobs = list(dict.fromkeys(v.job for v in workload_variants(_plain(campaign))))
    return [(spec.name, job) for spec in campaign.targets for job in jobs]


def _plain(campaign: Campaign) -> Campaign:
    return dataclasses.replace(campaign, sweep={}, target_sweeps={}, cells=[],
                               factor_scopes={}, looks=[], look_cells=[])


def stage_campaign(base: Campaign, space: Space, target: str, job: str, stage: str,
                   configs: list[Config], iterations: int) -> Campaign:
    """The campaign of one stage: the question's target and job, every factor at every
    level, only `configs` as cells, `iterations` rounds, the stage's own seed."""
    spec = next(t for t in base.targets if t.name == target)
    sweep = {f.name: list(f.levels) for f in space.factors}
    campaign = dataclasses.replace(
        _plain(base), name=f"{base.name}-{stage}", targets=[spec], sweep=sweep,
        iterations=iterations, seed=base.seed * 3 + STAGE_SEEDS[stage],
        workloads=[entry for entry in base.workloads], out=None,
        factor_scopes={f.name: "target" if f in space.target_factors() else "job"
                       for f in space.factors})
    names = cell_names(campaign, space, job)
    missing = [space.describe(c) for c in configs if c not in names]
    if missing:
        raise UserError(f"target {target}, job {job}: no cell for {missing[0]}")
    return dataclasses.replace(campaign, cells=[names[c] for c in configs])


def cell_names(campaign: Campaign, space: Space, job: str) -> dict[Config, tuple[str, str]]:
    """{configuration: (target name, workload name)} of one job in a campaign that sweeps
    every factor of the space (the names plan/sweep.py gives its variants)."""
    targets = {tuple(sorted(spec.levels)): spec.name for spec in target_variants(campaign)}
    workloads = {tuple(sorted(v.levels)): v.workload.name
                 for v in workload_variants(campaign) if v.job == job}
    own = {f.name for f in space.target_factors()}
    out = {}
    for config in space.every():
        levels = space.levels(config)
        target = targets.get(tuple(sorted((k, v) for k, v in levels.items() if k in own)))
        workload = workloads.get(tuple(sorted((k, v) for k, v in levels.items()
                                              if k not in own)))
        if target is not None and workload is not None:
            out[config] = (target, workload)
    return out


def run_stage(campaign: Campaign, out: Path, lab: Lab,
              progress: Progress | None = None) -> None:
    """Run (or resume) one stage into `out`, as `fslab run` runs a campaign, analysed."""
    from fslab.run.adaptive import Goal
    from fslab.run.campaign import CampaignRun

    resume = (out / "format.json").exists()
    stage = CampaignRun.start(campaign, out, lab, resume=resume, confirmed_devices=frozenset(),
                              force_device=False)
    outcome = stage.execute(progress, False, before=stage.pre_run_steps())
    stage.finish(outcome, Goal())


def groups_of(out: Path, space: Space, question: Question,
              metric: str | None = None) -> dict[Config, dict[int, float]]:
    """{configuration: {round: value}} of a stage's results: the question's op and
    `metric` (default its objective), each run's value, read by the levels each run
    recorded (core/cells.py: a cell's fields), never by its name."""
    from fslab.analysis.cells.observations import per_run
    from fslab.analysis.factors.levels import cell_levels, with_levels
    from fslab.results.store import ResultsDir

    metrics = ResultsDir.open(out).load_metrics()
    if metrics.empty:
        return {}
    runs = with_levels(per_run(metrics), cell_levels(metrics))
    rows = runs[(runs["job"].astype(str) == question.job)
                & (runs["op"].astype(str) == question.op)
                & (runs["metric"].astype(str) == (metric or question.metric))]
    return _by_config(rows, space)


def _by_config(rows: pd.DataFrame, space: Space) -> dict[Config, dict[int, float]]:
    out: dict[Config, dict[int, float]] = {}
    for row in rows.to_dict("records"):
        config = _config_of(row, space)
        if config is not None:
            out.setdefault(config, {})[int(row["iteration"])] = float(row["value"])
    return out


def _config_of(row: dict[str, object], space: Space) -> Config | None:
    """The configuration a row's levels name (a factor it lacks: its reference)."""
    try:
        return tuple(f.levels.index(str(row.get(f.name) if row.get(f.name) is not None
                                        and row.get(f.name) == row.get(f.name)
                                        else f.reference)) for f in space.factors)
    except ValueError:
        return None


def unmeasured_of(out: Path, space: Space) -> dict[Config, str]:
    """{configuration: why} of a stage's configurations whose every run so far failed,
    so that nothing was measured of them: "refused: …" where the file system would not
    be made (a mount option combination the kernel will not take, an mkfs option the
    size cannot hold: no other round could change that), "failed: …" (the first run's
    reason) otherwise. A race cannot compare them, and does not pay for them again."""
    from fslab.results.store import ResultsDir

    runs = ResultsDir.open(out).load_runs()
    if runs.empty:
        return {}
    failed: dict[Config, str] = {}
    measured: set[Config] = set()
    for row in runs.to_dict("records"):
        config = _config_of(row, space)
        if config is None:
            continue
        if row["status"] == "ok":
            measured.add(config)
            continue
        reason = str(row["reason"])
        refusal = REFUSED_BY_TOOL.match(reason)
        failed.setdefault(config, f"refused: {briefly(refusal.group(1))}" if refusal
                          else f"failed: {reason}")
    return {c: why for c, why in failed.items() if c not in measured}


def question_of(out: Path, target: str, job: str, objective: str) -> Question:
    """The question a stage's results answer: the job's primary question (or the
    `objective` metric) and its direction, as the stage's own analysis found it."""
    from fslab.analysis.cells.observations import per_run
    from fslab.analysis.factors.levels import cell_levels, with_levels
    from fslab.analysis.factors.sweeps import job_questions
    from fslab.analysis.pipeline import campaign_settings, declared_primaries
    from fslab.core.metrics import METRIC_UNITS
    from fslab.results.store import ResultsDir

    results = ResultsDir.open(out)
    metrics = results.load_metrics()
    runs = with_levels(per_run(metrics), cell_levels(metrics))
    asked = job_questions(runs, declared_primaries(list(results.run_records())),
                          (objective,) if objective else tuple(
                              campaign_settings(results).get("primary", ())))
    if job not in asked:
        raise UserError(f"{job} on {target}: the stage measured no {objective or 'primary'} "
                        "metric to tune for")
    op, metric = asked[job]
    return Question(target, job, op, metric, METRIC_UNITS[metric][1])
