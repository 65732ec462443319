"""A tune of one question (a target and a job), stage after stage: the screen when the
whole space does not fit the budget, the race, the confirmation. Each stage is a function
of what `Measure` returns (tune/measure.py) and returns a value; this module only plans
the budget between them and hands each stage what the one before found.

The budget's shares: the confirmation keeps CONFIRM_SHARE of the runs (at least what its
least ablation takes); a screen takes at most SCREEN_SHARE; the race the rest, as wide as
gives each candidate FIRST_LOOK rounds and RACE_LOOKS more. A budget too small for that
plan shrinks it (`plan_stages`), each step said: a race narrower and shorter, then none
(the screen's cautious reading goes to the confirmation), one screen round instead of
two, a screen of resolution III; below the smallest of those (FLOOR_TEXT) it is refused.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass, field

from fslab.analysis.pairs.decisions import sign
from fslab.analysis.sittings.repeat import PRIOR_TAU, as_percent
from fslab.core.environment_record import SittingSpread
from fslab.core.errors import UserError
from fslab.tune.budget import Budget
from fslab.tune.carry import Carried
from fslab.tune.confirm import (
    SITTING_NOTE,
    Confirmation,
    confirm,
    least_runs,
    sitting_rounds,
)
from fslab.tune.design import MAX_RACE, neighbours, race_candidates, screen_design
from fslab.tune.measure import Measure, Question
from fslab.tune.race import MAX_ROUNDS, Race, Rules, race
from fslab.tune.screen import Screen, screen
from fslab.tune.space import Config, Space
from fslab.tune.twins import near_twins

SCREEN_ROUNDS = 2  # each design row twice: the noise has degrees of freedom
FIRST_LOOK = 3  # rounds before the race's first look
RACE_ROUNDS = 8  # rounds the race's width leaves each candidate (a paired t has 7 df)
RACE_LEAST = 3  # a race narrower than this many configurations is given up: a small
# budget buys more in the confirmation than in a race whose paired tests cannot drop
CONFIRM_WANTED = 10  # rounds of a two-change ablation a small budget's plan keeps, while
# a cheaper screen can pay for them
CONFIRM_SHARE = 0.60  # of the runs, kept for the confirmation (its paired tests need rounds)
SCREEN_SHARE = 0.35  # of the runs a screen may take
WHOLE_ROUNDS = 5  # the whole space is raced without a screen when it fits this many rounds
LEADERS = 2  # a refill looks around this many of the race's leaders
LONGER = 2  # a race may run to this many times its planned rounds (drops free budget)
TWINS = ("no race: the screen's best, {best}, has a near twin ({twins}: a level the screen "
         "could not tell from its own); the race's runs went to the confirmation, to show "
         "them equivalent")
# The smallest plan: a resolution-III screen once, no race, and the confirmation's least.
FLOOR_TEXT = ("a resolution-III screen measured once and a confirmation of three rounds "
              "of the reference, the challenger and each of two changes taken back")


@dataclass
class Tuned:
    """One question's tune: each stage's value, and what the plan gave up."""

    question: Question
    space: Space
    screen: Screen | None
    race: Race
    confirmation: Confirmation
    margin: float
    plan: StagePlan | None = None
    # each change's share and the whole configuration (tune/carry.WHOLE) as a promise
    # about the next sitting (tune/carry.py); empty until the tune's history was read
    carried: dict[int, Carried] = field(default_factory=dict)
    history: bool = False  # whether a host's history of option effects was read


def reserve_of(total: int, space: Space) -> int:
    """The runs kept for the confirmation: a share, and at least its least ablation of
    two changes."""
    return max(least_runs(space, min(2, len(space.factors))), int(CONFIRM_SHARE * total))


def simplest_first(space: Space) -> Callable[[Config], tuple[float, ...]]:
    """Without a screen: the fewer changes from the reference, the sooner."""
    def rank(config: Config) -> tuple[float, ...]:
        return (float(space.changes(config)),)

    return rank


def rankings(screened: Screen, space: Space) -> tuple[Callable[[Config], tuple[float, ...]],
                                                      Callable[[Config], tuple[float, ...]]]:
    """Two readings of the screen, best first, a configuration the screen's model puts
    past a --subject-to bound after every other. Cautious: by the effect its intervals
    (95 % together) support (each level's end nearer 1), then by fewer changes (an option
    the screen could not tell from none after the same configuration without it). Bold:
    by the levels each of whose own 95 % interval excludes 1 — where two options help
    only together, each shows half the joint effect, often too little for the family's
    intervals, and the bold reading still ranks the pair first — then by fewer changes,
    then by every estimate."""
    direction = sign(screened.measured.question.better)

    def cautious(config: Config) -> tuple[float, ...]:
        return (screened.breaks(space, config), -direction * screened.supported.get(
            config, 0.0), space.changes(config), -direction * screened.predicted.get(config, 0.0))

    def bold(config: Config) -> tuple[float, ...]:
        return (screened.breaks(space, config),
                -direction * screened.suggested.get(config, 0.0), space.changes(config),
                -direction * screened.predicted.get(config, 0.0))

    return cautious, bold


def unraced(screened: Screen, space: Space, margin: float) -> Config:
    """Without a race, the configuration to confirm: the cautious reading's best, or the
    bold reading's where the screen's model puts it beyond the margin of the cautious
    one's (two options that help only together, each half the joint effect) — a
    confirmation of fewer changes resolves more with the same runs; where neither
    reading's intervals could tell anything from the reference (a screen of few degrees
    of freedom), the best estimate, for the confirmation to judge on fresh data."""
    cautious, bold = rankings(screened, space)
    every = [c for c in space.every() if c not in screened.measured.unmeasured]
    careful, daring = min(every, key=cautious), min(every, key=bold)
    direction = sign(screened.measured.question.better)
    gain = direction * (screened.predicted.get(daring, 0.0) - screened.predicted.get(
        careful, 0.0))
    chosen = daring if gain > math.log(1 + margin) else careful
    if chosen == space.reference:  # no interval could tell: the estimates, to be judged
        plain = min(every, key=lambda c: (screened.breaks(space, c), -direction *
                                          screened.predicted.get(c, 0.0), space.changes(c)))
        chosen = plain if direction * screened.predicted.get(plain, 0.0) > 0 else chosen
    return chosen


@dataclass(frozen=True)
class StagePlan:
    """How a budget of `total` runs is shared before anything ran, and what a small
    budget gave up of the full plan."""

    total: int
    reserve: int  # the confirmation's runs at least
    screen_rows: list[Config]  # empty: no screen (the whole space is raced)
    screen_rounds: int = SCREEN_ROUNDS
    raced: bool = True  # False: the screen's cautious reading goes to the confirmation
    given_up: tuple[str, ...] = field(default=())

    @property
    def screen_runs(self) -> int:
        return len(self.screen_rows) * self.screen_rounds

    @property
    def race_runs(self) -> int:
        return max(0, self.total - self.screen_runs - self.reserve) if self.raced else 0

    def race_width(self, candidates: int) -> int:
        """Configurations raced at once: each gets RACE_ROUNDS rounds."""
        return max(2, min(candidates, MAX_RACE, self.race_runs // RACE_ROUNDS))


def plan_stages(space: Space, total: int) -> StagePlan:
    """The screen's design (when the whole space does not fit WHOLE_ROUNDS rounds), the
    confirmation's reserve, and the race between; a budget too small shrinks the plan
    step by step (module doc) and one below the floor is one clear line."""
    reserve = reserve_of(total, space)
    if space.size * WHOLE_ROUNDS + reserve <= total:
        return StagePlan(total, reserve, [])
    levels = [len(f.levels) for f in space.factors]
    no_race = "no race (the screen's cautious reading goes to the confirmation)"
    steps = [(SCREEN_ROUNDS, 4, True, ()),
             (SCREEN_ROUNDS, 4, False, (no_race,)),
             (1, 4, False, (no_race, "one screen round instead of two")),
             (1, 3, False, (no_race, "one screen round instead of two", "a screen of "
                            "resolution III (main effects aliased with two-option "
                            "interactions)"))]
    wanted = CONFIRM_WANTED * 4
    previous: list[Config] = []
    for number, (rounds, resolution, raced, given_up) in enumerate(steps):
        rows = screen_design(levels, int(SCREEN_SHARE * total) if not given_up else
                             total - reserve, rounds, resolution)
        if resolution < 4 and rows == previous:  # the same design: nothing given up
            given_up = given_up[:-1]
        previous = rows
        room = total - len(rows) * rounds - reserve
        if raced and room >= RACE_LEAST * RACE_ROUNDS:
            return StagePlan(total, reserve, rows, rounds, raced, given_up)
        last = number == len(steps) - 1
        if not raced and room >= 0 and (last or room + reserve >= wanted):
            return StagePlan(total, reserve, rows, rounds, raced, given_up)
    rows = screen_design(levels, 0, 1, 3)
    needed = len(rows) + least_runs(space, min(2, len(space.factors)))
    raise UserError(f"the budget pays for {total} runs; the smallest plan for "
                    f"{len(space.factors)} factors ({FLOOR_TEXT}) needs {needed}: give "
                    f"--max-runs {needed} or more (or a longer --budget)")


def tune_question(measure: Measure, space: Space, budget: Budget, margin: float,
                  level_spread: SittingSpread | None = None) -> Tuned:
    """Screen (when needed), race, confirm (module doc); `level_spread`: the host's
    between-sitting spread of a bounded metric's level (tune/latency.py)."""
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
        screened = screen(measure, space, stages.screen_rows, stages.screen_rounds, margin)
        budget.spend(stages.screen_runs)
        kept = screened.kept()
        rank, bold = rankings(screened, space)
        unmeasured = set(screened.measured.unmeasured)
        candidates = [(c, "reference" if not any(c) else "the screen's model")
                      for c in race_candidates(levels, kept, [rank, bold],
                                               maximum=max(MAX_RACE, 2 * len(levels)))
                      if c not in unmeasured]
    twins = near_twins(screened, unraced(screened, space, margin), margin) \
        if screened is not None and stages.raced else []
    if twins:  # the race would choose between levels the screen cannot tell apart: its
        # runs go to showing them equivalent (tune/twins.py)
        stages = dataclasses.replace(stages, raced=False)
    width = stages.race_width(len(candidates)) if stages.raced else 0
    planned = max(FIRST_LOOK, (budget.left() - reserve) // max(1, width))
    rules = Rules(margin, max(2, width), min(MAX_ROUNDS, LONGER * planned),
                  2 * max(2, width), FIRST_LOOK)
    excluded = set(screened.measured.unmeasured) if screened else set()

    def propose(state: Race) -> list[Config]:
        found = state.looks[-1].found if state.looks else None
        if found is None:
            return []
        direction = sign(state.measured.question.better)
        leaders = sorted(found.within_reach(), key=lambda c: -direction * math.log(
            found.centres[c]) if found.centres.get(c, 0) > 0 else math.inf)[:LEADERS]
        return [c for c in neighbours(leaders, levels, kept, rank) if c not in excluded]

    raced = race(measure, space, candidates if stages.raced else [], rules, budget,
                 reserve, propose)
    if stages.raced:
        challenger = raced.winner if raced.winner is not None else space.reference
        if challenger == space.reference and raced.best is not None:
            challenger = raced.best  # the reference is as good: does its best beat it?
    else:
        challenger = unraced(screened, space, margin) if screened else space.reference
    # issue 51: rounds past those at which a contribution's interval would be narrower
    # than sittings differ by buy nothing that holds next time (confirm.sitting_rounds,
    # from the race's rounds, or the screen's without a race)
    seen = raced.measured.values if raced.entries else (
        screened.measured.values if screened else {})
    enough, narrowest = sitting_rounds(seen, space.changes(challenger) + 1)
    confirmed = confirm(measure, space, challenger, raced.best, raced.members(),
                        budget.left(), margin, most_rounds=enough,
                        near=tuple(near_twins(screened, challenger, margin)),
                        level_spread=level_spread)
    if twins:
        confirmed.notes.append(TWINS.format(best=space.describe(challenger), twins="; ".join(
            space.describe(c) for c in twins)))
    if confirmed.capped:  # spend it in another sitting instead
        confirmed.notes.append(SITTING_NOTE.format(rounds=enough, width=narrowest,
                                                   spread=as_percent(PRIOR_TAU)))
    budget.spend(sum(len(s.configs) * len(s.rounds) for s in confirmed.stages))
    measured = confirmed.measured or (raced.measured if raced.entries else None) or (
        screened.measured if screened else raced.measured)
    question = measured.question
    return Tuned(question, space, screened, raced, confirmed, margin, stages)
