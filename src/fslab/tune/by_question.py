"""Every question of a campaign tuned: each declared target with each job of its
workloads, the budget shared evenly, each question's stages measured as campaigns
(tune/measure.py: CampaignMeasure) under the tune's directory (one question: the
directory itself; several: one folder each)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from fslab.plan.levels import path_name
from fslab.tune.budget import Budget
from fslab.tune.measure import CONFIRM, RACE, SCREEN, CampaignMeasure, questions_of
from fslab.tune.space import Space
from fslab.tune.tuner import Tuned, tune_question

if TYPE_CHECKING:
    from fslab.host.lab import Lab
    from fslab.plan.schema import Campaign
    from fslab.run.runner import Progress

SETUP_S = 3.0  # a fresh file system per run: mkfs, mount, lay out, drop caches (measured)


def tune_campaign(base: Campaign, space: Space, budget: Budget, margin: float, out: Path,
                  lab: Lab, progress: Progress | None = None) -> list[Tuned]:
    """Tune every question of `base` within `budget` (module doc)."""
    questions = questions_of(base)
    found = []
    for target, job in questions:
        where = out if len(questions) == 1 else out / path_name(f"{target}-{job}")
        measure = CampaignMeasure(base, space, target, job, where, lab, progress)
        tuned = tune_question(measure, space, budget.share(len(questions)), margin)
        for stage in (SCREEN, RACE, CONFIRM):
            measure.analyse(stage)
        found.append(tuned)
    return found


def per_run_seconds(base: Campaign) -> float:
    """What one run costs, before any was measured: fio's own time and a fresh file
    system's setup (the simulator: almost nothing)."""
    from fslab.plan.order import make_plan, measuring_seconds

    runs = make_plan(base).runs
    seconds, _, unknown = measuring_seconds(runs[:1]) if runs else (0.0, 0, 0)
    if all(t.fs == "null" for t in base.targets):
        return 0.05
    return seconds + SETUP_S + (10.0 if unknown else 0.0)
