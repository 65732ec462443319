"""The race: candidates in interleaved rounds, each round one more fresh file system for
every survivor, a look after every round from `first_look` on, and the budget freed by
eliminations spent on new candidates near the leaders. One loop over plain data (irace's
shape): measure the survivors once more, look, drop, refill.

A look is multiple comparisons with the best (tune/against_best.py): the best among the
configurations not shown to break a --subject-to bound, and each other one compared with
it by a paired t on the rounds both ran (that pair's own variance), dropped when its
one-sided bound says it is behind. The error budget is fixed before the first round —
the configurations that may ever enter (`Rules.entries`: the width and the refills
allowed) and the most rounds (`Rules.max_rounds`, the number of looks) — and spent over
the looks by a Lan–DeMets spending function, so the chance that any look drops the true
best is at most α (5 %), late entries and unequal spreads included. A configuration whose
bounded metric is shown beyond a bound is dropped too, under a budget of its own, and
said apart (status `over_bound`).

The race ends when one configuration is left, when every survivor is shown within the
margin of the best (they are interchangeable), when the budget would not pay for another
round, or at the rounds allowed. Its answer is the set of configurations the last look
could not tell from the best; its winner is the simplest member shown equivalent within
the margin to every other member of the set (the fewest changes from the reference; then
the best centre: tune/against_best.equivalent_to_all, multiple comparisons with the best),
else the best itself — never a member merely not shown behind, nor one shown equivalent
to the observed best alone (a best selected as the largest of noisy centres).

Every decision is a function of the values measured, so a race killed at any point and
resumed replays its looks from what is on disk and goes on where it stopped.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection
from dataclasses import dataclass, field

from fslab.analysis.cells.stats import geomean
from fslab.analysis.pairs.decisions import sign
from fslab.analysis.pairs.model import ALPHA
from fslab.analysis.pairs.selection import BestSet
from fslab.core.metrics import HIGHER
from fslab.core.pair import AGAINST_BEST, BEHIND, EQUIVALENT
from fslab.tune.against_best import (
    POCOCK,
    Spending,
    against_best,
    breaks_bound,
    equivalent_to_all,
)
from fslab.tune.budget import Budget
from fslab.tune.measure import RACE, Measure, Question, StageData
from fslab.tune.space import Bound, Config, Space

ONE = "one configuration left"
SAME = "the survivors are the same within the margin"
SPENT = "the budget would not pay for another round"
LAST = "the rounds allowed are done"
NOT_RACED = "none (the budget's plan)"
MAX_ROUNDS = 100
DROPPED = "dropped"  # a look found the configuration behind the best
OVER_BOUND = "over_bound"  # a look found its bounded metric past a bound


@dataclass
class Entry:
    """One configuration of the race: who proposed it, the round it joined, and the round
    of the look that dropped it (0: nothing of it could be measured), how and why."""

    config: Config
    proposed_by: str
    entered: int = 1
    dropped_at: int | None = None
    reason: str = ""
    status: str = ""  # once dropped: DROPPED, OVER_BOUND, else the Unmeasured status


@dataclass
class Look:
    """One look: after which round, what it found, what it dropped for a bound."""

    round: int
    found: BestSet[Config]
    broken: dict[Config, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Rules:
    """How a race decides; its error budget fixed before the first round."""

    margin: float
    width: int  # configurations raced at once
    max_rounds: int  # the most rounds (and looks) the race may take
    entries: int = 0  # configurations that may ever enter it (0: twice the width)
    first_look: int = 3
    alpha: float = ALPHA
    kind: str = POCOCK

    @property
    def spending(self) -> Spending:
        return Spending(self.entries or 2 * self.width, self.first_look,
                        max(self.max_rounds, self.first_look), self.alpha, self.kind)


@dataclass
class Race:
    """A race as it stands."""

    entries: dict[Config, Entry]
    measured: StageData
    looks: list[Look] = field(default_factory=list)
    rounds: int = 0
    ended: str = ""
    final: BestSet[Config] | None = None
    winner: Config | None = None
    equivalent: list[Config] = field(default_factory=list)  # members shown equivalent
    # within the margin to every other member of the set (the winner is the simplest)

    def alive(self) -> list[Config]:
        return [c for c, e in self.entries.items() if e.dropped_at is None]

    def judged(self, first_look: int) -> list[Config]:
        """The survivors measured in `first_look` rounds or more."""
        return [c for c in self.alive() if len(self.measured.values.get(c, {})) >= first_look]

    def members(self) -> list[Config]:
        """The set: survivors the last look could not tell from the best."""
        if self.final is None:
            return []
        return [c for c in self.final.within_reach() if c in self.entries
                and self.entries[c].dropped_at is None]

    @property
    def best(self) -> Config | None:
        """The best centre at the last look."""
        return self.final.best if self.final is not None else None


Propose = Callable[[Race], list[Config]]


def race(measure: Measure, space: Space, candidates: list[tuple[Config, str]], rules: Rules,
         budget: Budget, reserve: int, propose: Propose | None = None) -> Race:
    """Race `candidates` ((configuration, who proposed it), best first) within `budget`,
    leaving `reserve` runs (the confirmation's); `propose(race)` names new candidates
    near the leaders when eliminations free room (module doc)."""
    first = candidates[:rules.width]
    queue = list(candidates[rules.width:])
    state = Race({c: Entry(c, who) for c, who in first}, StageData(_unknown()))
    if not first:
        state.ended = NOT_RACED
        return state
    while True:
        alive = state.alive()
        if state.rounds and len(alive) <= 1:
            return _end(state, space, rules, ONE)
        if budget.left() - reserve < len(alive):
            return _end(state, space, rules, SPENT)
        if state.rounds >= rules.max_rounds:
            return _end(state, space, rules, LAST)
        state.rounds += 1
        state.measured = measure(RACE, range(state.rounds, state.rounds + 1), alive)
        budget.spend(len(alive))
        for config in alive:
            why = state.measured.unmeasured.get(config)
            if why and not state.measured.values.get(config):
                _drop(state, config, 0, str(why), why.status)
        if state.rounds >= rules.first_look and _look(state, space, rules):
            return _end(state, space, rules, SAME)
        _refill(state, rules, budget, reserve, queue, propose)


def _look(state: Race, space: Space, rules: Rules) -> bool:
    """One look (module doc): drops what is behind the best or breaks a bound; whether
    every survivor is now shown the same as the best within the margin."""
    judged = state.judged(rules.first_look)
    if len(judged) < 2:
        return False
    broken = bound_breakers(state.measured, space.bounds, judged, rules.spending)
    for config, why in broken.items():
        _drop(state, config, state.rounds, why, OVER_BOUND)
    found = look_at(state.measured, judged, rules, eligible(state.measured, space.bounds,
                                                          judged, broken))
    state.looks.append(Look(state.rounds, found, broken))
    for config, answer in found.against.items():
        if answer.word(AGAINST_BEST) == BEHIND and config not in broken:
            _drop(state, config, state.rounds,
                  f"behind the best after round {state.rounds} ({answer.ratio:.3g}×, "
                  f"bound {answer.ratio_ci_high if _higher(state) else answer.ratio_ci_low:.3g}×)")
    left = [c for c in state.alive() if c != found.best]
    return bool(left) and found.best is not None and all(
        c in found.against and found.against[c].decision == EQUIVALENT for c in left)


def look_at(measured: StageData, configs: list[Config], rules: Rules,
            eligible: list[Config]) -> BestSet[Config]:
    """The best of `configs` (among `eligible`) and each one's answer against it, each
    on the rounds it shares with the best (tune/against_best.py)."""
    values = {c: measured.values[c] for c in configs if measured.values.get(c)}
    return against_best(values, measured.question.better, rules.margin, rules.spending,
                        eligible)


def eligible(measured: StageData, bounds: tuple[Bound, ...], configs: list[Config],
             broken: Collection[Config]) -> list[Config]:
    """The configurations the best is chosen among: not shown past a bound, and each
    bounded metric's geometric mean so far inside it (a choice, not a claim: the
    confirmation checks the next file system's value)."""
    out = []
    for config in configs:
        if config in broken:
            continue
        centres = [geomean(measured.bounded.get(b.metric, {}).get(config, {}).values())
                   for b in bounds]
        if all(math.isnan(c) or not bound.broken_by(c, c) for c, bound in zip(centres, bounds,
                                                                          strict=True)):
            out.append(config)
    return out or [c for c in configs if c not in broken]


def bound_breakers(measured: StageData, bounds: tuple[Bound, ...], configs: list[Config],
                   spending: Spending) -> dict[Config, str]:
    """The configurations whose bounded metric is shown beyond a bound: its one-sided
    bound (each configuration's own log interval, at the level of its rounds) lies past
    it."""
    out: dict[Config, str] = {}
    for bound in bounds:
        for config in configs:
            values = list(measured.bounded.get(bound.metric, {}).get(config, {}).values())
            if breaks_bound(values, spending.bound_level(len(values)), bound.value,
                            bound.at_most):
                out.setdefault(config, f"shown past {bound.text} after {len(values)} "
                                       "rounds")
    return out


def _refill(state: Race, rules: Rules, budget: Budget, reserve: int,
            queue: list[tuple[Config, str]], propose: Propose | None) -> None:
    """Fill the room eliminations freed while the family has room (Rules.entries) and
    the budget and the rounds allowed leave a newcomer the rounds it needs to be judged:
    first the candidates waiting, then `propose`'s."""
    room = min(rules.width - len(state.alive()), rules.spending.entries - len(state.entries))
    if (room <= 0 or (budget.left() - reserve) // rules.width < rules.first_look
            or state.rounds + rules.first_look > rules.max_rounds):
        return
    new: list[tuple[Config, str]] = []
    while queue and len(new) < room:
        config, who = queue.pop(0)
        if config not in state.entries:
            new.append((config, who))
    if len(new) < room and propose is not None:
        for config in propose(state):
            if len(new) >= room:
                break
            if config not in state.entries and all(config != c for c, _ in new):
                new.append((config, _near(state, config)))
    for config, who in new:
        state.entries[config] = Entry(config, who, entered=state.rounds + 1)


def _near(state: Race, config: Config) -> str:
    leaders = [c for c in (state.looks[-1].found.within_reach() if state.looks else [])
               if sum(a != b for a, b in zip(c, config, strict=True)) == 1]
    return f"refill: one option from leader {leaders[0]}" if leaders else "refill"


def _drop(state: Race, config: Config, number: int, why: str,
          status: str = DROPPED) -> None:
    entry = state.entries[config]
    if entry.dropped_at is None:
        entry.dropped_at, entry.reason, entry.status = number, why, status


def _higher(state: Race) -> bool:
    return sign(state.measured.question.better) > 0


def _end(state: Race, space: Space, rules: Rules, why: str) -> Race:
    """The set and the winner (module doc)."""
    state.ended = why
    judged = state.judged(rules.first_look) or [c for c in state.alive()
                                                if state.measured.values.get(c)]
    if not judged:
        return state
    if state.looks and state.looks[-1].round == state.rounds:
        state.final = state.looks[-1].found
    else:
        broken = bound_breakers(state.measured, space.bounds, judged, rules.spending)
        state.final = look_at(state.measured, judged, rules,
                              eligible(state.measured, space.bounds, judged, broken))
    best = state.final.best
    if best is None or state.entries[best].dropped_at is not None:
        return state
    centres = state.final.centres
    score = sign(state.measured.question.better)
    members = state.members()
    values = state.measured.values
    state.equivalent = [c for c in members if c != best
                        and state.final.against[c].decision == EQUIVALENT
                        and equivalent_to_all(values, c, members,
                                              state.measured.question.better, rules.margin,
                                              rules.spending)]
    shown = [best, *state.equivalent]
    state.winner = min(shown, key=lambda c: (space.changes(c), -score * math.log(
        centres[c]) if centres.get(c, 0) > 0 else math.inf, c))
    return state


def _unknown() -> Question:
    return Question("", "", "", "", HIGHER)
