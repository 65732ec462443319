"""Every question of a campaign tuned: each declared target with each job of its
workloads, the budget shared evenly, each question's stages measured as campaigns
(tune/measure.py: CampaignMeasure) under the tune's directory (one question: the
directory itself; several: one folder each)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from fslab.core.cell_keys import path_name
from fslab.plan.order import make_plan, measuring_seconds
from fslab.tune.budget import Budget
from fslab.tune.measure import CONFIRM, RACE, SCREEN, CampaignMeasure, questions_of
from fslab.tune.space import Space
from fslab.tune.tuner import Tuned, tune_question

if TYPE_CHECKING:
    from collections.abc import Callable

    from fslab.core.environment_record import SittingSpread
    from fslab.host.lab import Lab
    from fslab.plan.schema import Campaign
    from fslab.run.runner import Progress

SETUP_S = 3.0  # a fresh file system per run: mkfs, mount, lay out, drop caches (measured)


def question_dir(out: Path, questions: list[tuple[str, str]], target: str, job: str) -> Path:
    """Where a question's stages go: the tune's directory for one question, a folder
    each for several."""
    return out if len(questions) == 1 else out / path_name(f"{target}-{job}")


def tune_campaign(base: Campaign, space: Space, budget: Budget, margin: float, out: Path,
                  lab: Lab, progress: Progress | None = None,
                  levels: Callable[[str, str], SittingSpread | None] | None = None
                  ) -> list[Tuned]:
    """Tune every question of `base` within `budget` (module doc); `levels(fs, job)`: the
    host's between-sitting spread of a bounded metric's level (tune/latency.py)."""
    questions = questions_of(base)
    found = []
    fs_of = {t.name: t.fs for t in base.targets}
    for target, job in questions:
        where = question_dir(out, questions, target, job)
        measure = CampaignMeasure(base, space, target, job, where, lab, progress)
        spread = levels(fs_of[target], job) if levels is not None and space.bounds else None
        tuned = tune_question(measure, space, budget.share(len(questions)), margin, spread)
        for stage in (SCREEN, RACE, CONFIRM):
            measure.analyse(stage)
        found.append(tuned)
    return found


def per_run_seconds(base: Campaign) -> float:
    """What one run costs, before any was measured: fio's own time and a fresh file
    system's setup (the simulator: almost nothing)."""
    runs = make_plan(base).runs
    seconds, _, unknown = measuring_seconds(runs[:1]) if runs else (0.0, 0, 0)
    if all(t.fs == "null" for t in base.targets):
        return 0.05
    return seconds + SETUP_S + (10.0 if unknown else 0.0)
