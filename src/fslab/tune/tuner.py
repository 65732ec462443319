"""A tune of one question (a target and a job), stage after stage: the screen when the
whole space does not fit the budget, the race, the confirmation. Each stage is a function
of what `Measure` returns (tune/measure.py) and returns a value; this module only plans
the budget between them and hands each stage what the one before found.

The budget's shares: the confirmation keeps CONFIRM_SHARE of the runs (at least its
ablation's rounds); a screen takes at most SCREEN_SHARE; the race the rest, as wide as
gives each candidate FIRST_LOOK rounds and RACE_LOOKS more.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from fslab.analysis.pairs.decisions import sign
from fslab.core.errors import UserError
from fslab.tune.budget import Budget
from fslab.tune.confirm import (
    LEAST_ROUNDS,
    SITTING_NOTE,
    SITTING_SPREAD,
    Confirmation,
    ablation,
    confirm,
    sitting_rounds,
)
from fslab.tune.design import MAX_RACE, neighbours, race_candidates, screen_design
from fslab.tune.measure import Measure, Question
from fslab.tune.race import Race, Rules, race
from fslab.tune.screen import Screen, screen
from fslab.tune.space import Config, Space

SCREEN_ROUNDS = 2  # each design row twice: the noise has degrees of freedom
FIRST_LOOK = 3  # rounds before the race's first look
RACE_LOOKS = 2  # looks past the first the race's width leaves room for
CONFIRM_SHARE = 0.40  # of the runs, kept for the confirmation
CONFIRM_LEAST = 5  # the confirmation's rounds at least, where the budget allows
SCREEN_SHARE = 0.35  # of the runs a screen may take
WHOLE_ROUNDS = 5  # the whole space is raced without a screen when it fits this many rounds
LEADERS = 2  # a refill looks around this many of the race's leaders


@dataclass
class Tuned:
    """One question's tune: each stage's value."""

    question: Question
    space: Space
    screen: Screen | None
    race: Race
    confirmation: Confirmation
    margin: float


def reserve_of(total: int) -> int:
    """The runs kept for the confirmation: a share, and at least two configurations'
    CONFIRM_LEAST rounds."""
    return max(2 * CONFIRM_LEAST, int(CONFIRM_SHARE * total))


def simplest_first(space: Space) -> Callable[[Config], tuple[float, ...]]:
    """Without a screen: the fewer changes from the reference, the sooner."""
    def rank(config: Config) -> tuple[float, ...]:
        return (float(space.changes(config)),)

    return rank


def rankings(screened: Screen, space: Space) -> tuple[Callable[[Config], tuple[float, ...]],
                                                      Callable[[Config], tuple[float, ...]]]:
    """Two readings of the screen, best first, a configuration the screen's model puts
    past a --subject-to bound after every other. Cautious: by the effect its intervals
    support (each level's end nearer 1), then by fewer changes (an option the screen
    could not tell from none after the same configuration without it). Bold: by its
    estimates — where two options help only together, each shows half the joint effect,
    too little to be supported alone, and the bold reading still ranks the pair first."""
    direction = sign(screened.measured.question.better)

    def cautious(config: Config) -> tuple[float, ...]:
        return (screened.breaks(space, config), -direction * screened.supported.get(
            config, 0.0), space.changes(config), -direction * screened.predicted.get(config, 0.0))

    def bold(config: Config) -> tuple[float, ...]:
        return (screened.breaks(space, config),
                -direction * screened.predicted.get(config, 0.0), space.changes(config))

    return cautious, bold


@dataclass(frozen=True)
class StagePlan:
    """How a budget of `total` runs is shared before anything ran."""

    total: int
    reserve: int  # the confirmation's runs
    screen_rows: list[Config]  # empty: no screen (the whole space is raced)

    @property
    def screen_runs(self) -> int:
        return len(self.screen_rows) * SCREEN_ROUNDS

    def race_width(self, candidates: int) -> int:
        """Configurations raced at once: each gets FIRST_LOOK rounds and RACE_LOOKS more."""
        room = self.total - self.screen_runs - self.reserve
        return max(2, min(candidates, MAX_RACE, room // (FIRST_LOOK + RACE_LOOKS)))


def plan_stages(space: Space, total: int) -> StagePlan:
    """The screen's design (when the whole space does not fit WHOLE_ROUNDS rounds) and
    the confirmation's reserve; a budget too small for them is one clear line."""
    reserve = reserve_of(total)
    if space.size * WHOLE_ROUNDS + reserve <= total:
        return StagePlan(total, reserve, [])
    levels = [len(f.levels) for f in space.factors]
    rows = screen_design(levels, int(SCREEN_SHARE * total), SCREEN_ROUNDS)
    needed = len(rows) * SCREEN_ROUNDS + reserve + 2 * FIRST_LOOK
    if needed > total:
        raise UserError(f"the budget pays for {total} runs; the screen of "
                        f"{len(space.factors)} factors needs {len(rows)} configurations × "
                        f"{SCREEN_ROUNDS} rounds, and the race and confirmation "
                        f"{needed - len(rows) * SCREEN_ROUNDS} more: give --max-runs "
                        f"{needed} or more (or a longer --budget)")
    return StagePlan(total, reserve, rows)


def tune_question(measure: Measure, space: Space, budget: Budget, margin: float) -> Tuned:
    """Screen (when needed), race, confirm (module doc)."""
    stages = plan_stages(space, budget.total())
    reserve = stages.reserve
    levels = [len(f.levels) for f in space.factors]
    screened: Screen | None = None
    if not stages.screen_rows:
        candidates = [(c, "every configuration") for c in sorted(
            space.every(), key=lambda c: (space.changes(c), c))]
        kept = list(range(len(levels)))
        rank = simplest_first(space)
    else:
        screened = screen(measure, space, stages.screen_rows, SCREEN_ROUNDS, margin)
        budget.spend(stages.screen_runs)
        kept = screened.kept()
        rank, bold = rankings(screened, space)
        unmeasured = set(screened.measured.unmeasured)
        candidates = [(c, "reference" if not any(c) else "the screen's model")
                      for c in race_candidates(levels, kept, [rank, bold],
                                               maximum=max(MAX_RACE, 2 * len(levels)))
                      if c not in unmeasured]
    width = stages.race_width(len(candidates))
    rules = Rules(margin, width, max(FIRST_LOOK, (budget.left() - reserve) // width),
                  FIRST_LOOK)
    excluded = set(screened.measured.unmeasured) if screened else set()

    def propose(state: Race) -> list[Config]:
        found = state.looks[-1].found if state.looks else None
        if found is None:
            return []
        direction = sign(state.measured.question.better)
        leaders = sorted(found.within_reach(), key=lambda c: -direction * math.log(
            found.centres[c]) if found.centres.get(c, 0) > 0 else math.inf)[:LEADERS]
        return [c for c in neighbours(leaders, levels, kept, rank) if c not in excluded]

    raced = race(measure, space, candidates, rules, budget, reserve, propose)
    challenger = raced.winner if raced.winner is not None else space.reference
    if challenger == space.reference and raced.final is not None:
        best = raced.final.best  # the set holds the reference: try its best on fresh data
        challenger = best if best is not None else challenger
    rounds = max(LEAST_ROUNDS, budget.left() // len(ablation(space, challenger)))
    enough, narrowest = sitting_rounds(raced.measured.values, space.changes(challenger) + 1)
    confirmed = confirm(measure, space, challenger, raced.members(), min(rounds, enough),
                        margin)
    if enough < rounds and confirmed.measured is not None:  # issue 51: spend it elsewhere
        confirmed.notes.append(SITTING_NOTE.format(rounds=enough, width=narrowest,
                                                   spread=100 * SITTING_SPREAD))
    budget.spend(len(confirmed.configs) * confirmed.rounds)
    question = (confirmed.measured or raced.measured).question
    return Tuned(question, space, screened, raced, confirmed, margin)
