"""A tune from start to end: per question (a target and a job of the campaign), the
screen when the whole space does not fit the budget, the race, the confirmation; every
stage a results directory under the tune's own, so a killed tune resumes from what is on
disk and ends with the answer an uninterrupted one gives."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from fslab.core.cells import level_label
from fslab.core.errors import UserError
from fslab.plan.levels import path_name
from fslab.tune import decide
from fslab.tune.design import MAX_RACE, predicted_logs, race_candidates, screen_design
from fslab.tune.race import Race, bounds_checker, run_race
from fslab.tune.space import Config, Space
from fslab.tune.stages import (
    CONFIRM,
    RACE,
    SCREEN,
    Question,
    groups_of,
    question_of,
    questions_of,
    run_stage,
    stage_campaign,
    unmeasured_of,
)

if TYPE_CHECKING:
    import pandas as pd

    from fslab.host.lab import Lab
    from fslab.plan.model import Campaign
    from fslab.run.runner import Progress

SCREEN_ITERATIONS = 2  # each design row twice: the noise has degrees of freedom
FIRST_LOOK = 3  # rounds before the race's first look (a paired t on 2 df)
CONFIRM_LEAST = 5  # the confirmation's rounds at least (DEFAULT_ITERATIONS)
# Of the runs, the confirmation's reserve: the winner and the reference in as many fresh
# rounds as resolve a margin-sized gain at 10 % CV (5 rounds each missed one in six).
CONFIRM_SHARE = 0.25
SCREEN_SHARE = 0.4  # of the runs a screen may take
RACE_LOOKS = 2  # rounds past the first look the race's candidates can all be given
# The whole space is raced without a screen when every configuration fits this many rounds.
WHOLE_ITERATIONS = 5
SETUP_S = 3.0  # a fresh file system per run: mkfs, mount, lay out, drop caches (measured)


@dataclass(frozen=True)
class Settings:
    """How much a tune may measure and what 'the same' means."""

    margin: float
    max_runs: int | None = None
    budget_s: float | None = None


@dataclass
class Budget:
    """Runs (--max-runs) or wall seconds (--budget). Runs are counted as the stages plan
    them (the screen's design, the race's rounds so far), never from what is on disk: a
    resumed tune replays the decisions of an uninterrupted one exactly."""

    settings: Settings
    per_run_s: float
    spent_runs: int = 0
    started: float = field(default_factory=time.monotonic)

    def measured(self) -> None:
        """What a run costs here, from the runs so far (a wall-time budget's runs left
        then follow the machine, not the estimate made before any ran)."""
        if self.spent_runs:
            self.per_run_s = max(self.per_run_s,
                                 (time.monotonic() - self.started) / self.spent_runs)

    def runs_left(self) -> int:
        by_runs = (self.settings.max_runs - self.spent_runs
                   if self.settings.max_runs is not None else math.inf)
        by_time = ((self.settings.budget_s - (time.monotonic() - self.started))
                   / max(self.per_run_s, 1e-3) if self.settings.budget_s is not None
                   else math.inf)
        left = min(by_runs, by_time)
        return int(left) if math.isfinite(left) else 10**9


@dataclass
class Answer:
    """One question's tune: what the screen kept, the race, the confirmation."""

    question: Question
    space: Space
    directory: Path
    screened: list[decide.Screened]
    candidates: list[Config]
    race: Race
    challenger: Config
    confirmed: decide.Confirmed
    winner: Config  # the reference unless the confirmation found the challenger faster
    stages: dict[str, Path]
    margin: float


def tune(base: Campaign, space: Space, settings: Settings, out: Path, lab: Lab,
         progress: Progress | None = None) -> list[Answer]:
    """Tune every question of the campaign (module doc), the budget shared evenly."""
    questions = questions_of(base)
    answers = []
    for target, job in questions:
        share = Settings(settings.margin,
                         None if settings.max_runs is None
                         else settings.max_runs // len(questions),
                         None if settings.budget_s is None
                         else settings.budget_s / len(questions))
        where = out if len(questions) == 1 else out / path_name(f"{target}-{job}")
        answers.append(tune_one(base, space, share, target, job, where, lab, progress))
    return answers


def per_run_seconds(base: Campaign) -> float:
    """What one run costs, before any was measured: fio's own time and a fresh file
    system's setup (the simulator: almost nothing)."""
    from fslab.plan.order import make_plan, measuring_seconds

    runs = make_plan(base).runs
    seconds, _, unknown = measuring_seconds(runs[:1]) if runs else (0.0, 0, 0)
    if all(t.fs == "null" for t in base.targets):
        return 0.05
    return seconds + SETUP_S + (10.0 if unknown else 0.0)


def confirm_reserve(total_runs: int) -> int:
    """The runs kept for the confirmation (both configurations, every round)."""
    return max(2 * CONFIRM_LEAST, int(CONFIRM_SHARE * total_runs))


def tune_one(base: Campaign, space: Space, settings: Settings, target: str, job: str,
             out: Path, lab: Lab, progress: Progress | None) -> Answer:
    """One question's three stages (module doc)."""
    budget = Budget(settings, per_run_seconds(base))
    stages = {name: out / name for name in (SCREEN, RACE, CONFIRM)}
    levels = [len(f.levels) for f in space.factors]
    total = budget.runs_left() + budget.spent_runs
    reserve = confirm_reserve(total)
    screened: list[decide.Screened] = []
    question: Question | None = None
    if space.size * WHOLE_ITERATIONS + reserve <= total:
        candidates = space.every()
    else:
        design = screen_design(levels, int(SCREEN_SHARE * total), SCREEN_ITERATIONS)
        needed = len(design) * SCREEN_ITERATIONS + reserve + 2 * FIRST_LOOK
        if needed > total:
            raise UserError(f"the budget pays for {total} runs; the screen of {len(space.factors)}"
                            f" factors needs {len(design)} configurations × "
                            f"{SCREEN_ITERATIONS} rounds, and the race and confirmation "
                            f"{needed - len(design) * SCREEN_ITERATIONS} more: give "
                            f"--max-runs {needed} or more (or a longer --budget)")
        run_stage(stage_campaign(base, space, target, job, SCREEN, design, SCREEN_ITERATIONS),
                  stages[SCREEN], lab, progress)
        budget.spent_runs = len(design) * SCREEN_ITERATIONS
        budget.measured()
        screen_unmeasured = _unmeasured(stages[SCREEN], space)
        question = question_of(stages[SCREEN], target, job, space.objective)
        screened = decide.screened(_effects(stages[SCREEN]), space, settings.margin)
        kept = [s.index for s in screened if s.kept]
        effects = {(s.index, level): math.log(ratio) for s in screened
                   for level, (ratio, _, _) in s.effects.items() if ratio > 0}
        sign = 1 if question.better == "higher" else -1
        predicted = {c: sign * v for c, v in predicted_logs(levels, effects).items()}
        # as many candidates as the race can give FIRST_LOOK rounds and two looks more
        room = total - budget.spent_runs - reserve
        # what the screen could not measure (refused, failed) is not raced
        predicted.update({c: -math.inf for c in screen_unmeasured})
        candidates = [c for c in race_candidates(
            levels, kept, predicted, max(2, min(MAX_RACE, room // (FIRST_LOOK + RACE_LOOKS))))
            if c not in screen_unmeasured]
    found: dict[str, Question] = {} if question is None else {"q": question}
    counted: set[int] = set()

    def measure(alive: list[Config], rounds: int) -> decide.Groups:
        run_stage(stage_campaign(base, space, target, job, RACE, alive, rounds),
                  stages[RACE], lab, progress)
        if rounds and rounds not in counted:  # this round's runs, once
            counted.add(rounds)
            budget.spent_runs += len(alive)
            budget.measured()
        if "q" not in found:
            found["q"] = question_of(stages[RACE], target, job, space.objective)
        return groups_of(stages[RACE], space, found["q"])

    def bounded(metric: str) -> decide.Groups:
        return groups_of(stages[RACE], space, found["q"], metric)

    race = run_race(space, candidates, _better(found, space),
                    settings.margin, FIRST_LOOK, measure, bounds_checker(space, bounded),
                    lambda runs: budget.runs_left() >= runs + reserve,
                    unmeasured=lambda: _unmeasured(stages[RACE], space))
    question = found.get("q") or question_of(stages[RACE], target, job, space.objective)
    race_groups = groups_of(stages[RACE], space, question)
    assert race.winner is not None
    reference = space.reference
    challenger = race.winner if race.winner != reference else _runner_up(race, race_groups,
                                                                         question.better)
    # every run left: the challenger won a selection, so its race ratio is biased up and
    # a power calculation from it plans too few rounds (the benchmark missed 1 in 8)
    rounds = max(CONFIRM_LEAST, budget.runs_left() // 2)
    pair = [reference, challenger] if challenger != reference else [reference]
    run_stage(stage_campaign(base, space, target, job, CONFIRM, pair, rounds),
              stages[CONFIRM], lab, progress)
    confirmation = groups_of(stages[CONFIRM], space, question)
    confirmed = decide.confirm(confirmation.get(challenger, {}),
                               confirmation.get(reference, {}), question.better,
                               settings.margin)
    winner = challenger if confirmed.decision == "faster" else reference
    return Answer(question, space, out, screened, candidates, race, challenger, confirmed,
                  winner, {k: v for k, v in stages.items() if v.exists()}, settings.margin)


def _unmeasured(stage: Path, space: Space) -> dict[Config, str]:
    """The stage's configurations of which nothing could be measured; the reference
    among them ends the tune in one line (there is nothing to compare with)."""
    unmeasured = unmeasured_of(stage, space)
    if space.reference in unmeasured:
        levels = ", ".join(level_label(f.name, f.reference) for f in space.factors)
        raise UserError(f"the reference ({levels}) could not be measured: "
                        f"{unmeasured[space.reference]}")
    return unmeasured


def _better(found: dict[str, Question], space: Space) -> str:
    """The objective's direction (known before the race when the screen ran; else that
    of the campaign's primary metric of the job, higher for throughput)."""
    if "q" in found:
        return found["q"].better
    from fslab.core.metrics import METRIC_UNITS

    return METRIC_UNITS[space.objective][1] if space.objective else "higher"


def _runner_up(race: Race, groups: decide.Groups, better: str) -> Config:
    """The strongest challenger of the reference: the best measured other configuration
    of the race (dropped ones too: the confirmation is on fresh data)."""
    others = {c: m for c, v in groups.items() if any(c) and (m := _log_mean(v)) == m}
    if not others:
        return tuple(0 for _ in race.candidates[0])
    pick = max if better == "higher" else min
    return pick(others, key=lambda c: others[c])


def _log_mean(values: dict[int, float]) -> float:
    logs = [math.log(v) for v in values.values() if v > 0]
    return sum(logs) / len(logs) if logs else math.nan


def _effects(directory: Path) -> pd.DataFrame:
    import pandas as pd

    path = directory / "stats" / "effects.csv"
    return pd.read_csv(path) if path.exists() else pd.DataFrame(
        columns=["factor", "level", "ratio", "ratio_ci_low", "ratio_ci_high"])
