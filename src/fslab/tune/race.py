"""The race: candidates in interleaved rounds, each round one more fresh file system for
every survivor, a look after every round from `first_look` on, and the budget freed by
eliminations spent on new candidates near the leaders. One loop over plain data (irace's
shape): measure the survivors once more, look, drop, refill.

A look is multiple comparisons with the best (analysis.pairs.selection, BLOCKS): one
additive model of configuration and round on the logs, its residual variance pooled, the
best among the configurations that keep every --subject-to bound, and each other one
dropped when its one-sided bound says it is behind that best. The looks share the error
rate: each bound is at the level that makes Pocock's constant boundary over the planned
looks and Bonferroni over the race's width spend α together (sequential.pocock_level):
the chance that a look drops a configuration as good as the best is at most α (5 %); a
configuration within the margin of the best may be dropped more often, but never while
the data cannot tell it from the best's neighbourhood (`benchmarks/tune_race` measures
both). A configuration whose bounded metric is shown beyond a bound (its one-sided bound
at the same level) is dropped too.

The race ends when one configuration is left, when every survivor is shown within the
margin of the best (they are interchangeable), when the budget would not pay for another
round, or at the rounds allowed. Its answer is the set of configurations the data cannot
tell from the best — the survivors judged on `first_look` rounds or more — and its
winner is the set's simplest member (the fewest changes from the reference; then the
best centre), not the top noisy score.

Every decision is a function of the values measured, so a race killed at any point and
resumed replays its looks from what is on disk and goes on where it stopped.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from fslab.analysis.cells.stats import log_ci
from fslab.analysis.pairs.decisions import sign
from fslab.analysis.pairs.model import ALPHA
from fslab.analysis.pairs.pair import AGAINST_BEST, BEHIND, EQUIVALENT, Pair
from fslab.analysis.pairs.selection import BLOCKS, BestSet, best_and_within_reach
from fslab.analysis.pairs.sequential import pocock_level
from fslab.core.metrics import HIGHER
from fslab.tune.budget import Budget
from fslab.tune.measure import RACE, Measure, Question, StageData
from fslab.tune.space import Bound, Config, Space

ONE = "one configuration left"
SAME = "the survivors are the same within the margin"
SPENT = "the budget would not pay for another round"
LAST = "the rounds allowed are done"
MAX_ROUNDS = 100
DROPPED = "dropped"  # a look found the configuration behind the best, or over a bound


@dataclass
class Entry:
    """One configuration of the race: who proposed it, the round it joined, and the round
    of the look that dropped it (0: nothing of it could be measured), how and why."""

    config: Config
    proposed_by: str
    entered: int = 1
    dropped_at: int | None = None
    reason: str = ""
    status: str = ""  # once dropped: DROPPED by a look, else the Unmeasured status


@dataclass
class Look:
    """One look: after which round, the level of each one-sided bound, what it found."""

    round: int
    level: float
    found: BestSet[Config]
    broken: dict[Config, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Rules:
    """How a race decides."""

    margin: float
    width: int  # configurations raced at once
    planned_rounds: int  # the rounds its looks are planned over (Pocock's boundary)
    first_look: int = 3
    alpha: float = ALPHA
    max_rounds: int = MAX_ROUNDS

    def level(self, looks: int) -> float:
        """Each bound's one-sided level at a race of `looks` looks (module doc)."""
        planned = max(1, self.planned_rounds - self.first_look + 1, looks)
        return pocock_level(planned, self.alpha / max(1, self.width - 1), self.first_look)


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

    def alive(self) -> list[Config]:
        return [c for c, e in self.entries.items() if e.dropped_at is None]

    def judged(self, first_look: int) -> list[Config]:
        """The survivors measured in `first_look` rounds or more."""
        return [c for c in self.alive() if len(self.measured.values.get(c, {})) >= first_look]

    def members(self) -> list[Config]:
        """The set: survivors the last look could not tell from the best."""
        if self.final is None:
            return []
        return [c for c in self.final.within_reach() if c in self.entries]


Propose = Callable[[Race], list[Config]]


def race(measure: Measure, space: Space, candidates: list[tuple[Config, str]], rules: Rules,
         budget: Budget, reserve: int, propose: Propose | None = None) -> Race:
    """Race `candidates` ((configuration, who proposed it), best first) within `budget`,
    leaving `reserve` runs (the confirmation's); `propose(race)` names new candidates
    near the leaders when eliminations free room (module doc)."""
    first = candidates[:rules.width]
    queue = list(candidates[rules.width:])
    state = Race({c: Entry(c, who) for c, who in first}, StageData(_unknown()))
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
    level = rules.level(len(state.looks) + 1)
    broken = bound_breakers(state.measured, space.bounds, judged, level)
    for config, why in broken.items():
        _drop(state, config, state.rounds, why)
    found = look_at(state.measured, judged, rules.margin, level,
                    [c for c in judged if c not in broken])
    state.looks.append(Look(state.rounds, level, found, broken))
    for config, answer in found.against.items():
        if answer.word(AGAINST_BEST) == BEHIND and config not in broken:
            _drop(state, config, state.rounds,
                  f"behind the best after round {state.rounds} ({answer.ratio:.3g}×, "
                  f"bound {_bound(answer, _higher(state)):.3g}×)")
    left = [c for c in state.alive() if c != found.best]
    return bool(left) and found.best is not None and all(
        c in found.against and found.against[c].decision == EQUIVALENT for c in left)


def _bound(answer: Pair, higher: bool) -> float:
    """The bound of an answer's interval on the side that puts it behind the best."""
    return answer.ratio_ci_high if higher else answer.ratio_ci_low


def look_at(measured: StageData, configs: list[Config], margin: float, level: float,
            eligible: list[Config]) -> BestSet[Config]:
    """The best of `configs` (among `eligible`) and each one's answer against it, each
    bound one-sided at `level`."""
    values = {c: measured.values[c] for c in configs if measured.values.get(c)}
    return best_and_within_reach(values, measured.question.better, margin,
                                 level * max(1, len(values) - 1), model=BLOCKS,
                                 eligible=eligible)


def bound_breakers(measured: StageData, bounds: tuple[Bound, ...], configs: list[Config],
                   level: float) -> dict[Config, str]:
    """The configurations whose bounded metric is shown beyond a bound: its one-sided
    bound at `level` (each configuration's own log interval) lies past it."""
    out: dict[Config, str] = {}
    for bound in bounds:
        for config in configs:
            values = list(measured.bounded.get(bound.metric, {}).get(config, {}).values())
            interval = log_ci(values, 1 - 2 * level)
            if interval.n >= 2 and bound.broken_by(interval.ci_low, interval.ci_high):
                out.setdefault(config, f"breaks {bound.text} (CI {interval.ci_low:.4g}–"
                                       f"{interval.ci_high:.4g})")
    return out


def _refill(state: Race, rules: Rules, budget: Budget, reserve: int,
            queue: list[tuple[Config, str]], propose: Propose | None) -> None:
    """Fill the room eliminations freed, while the budget leaves a newcomer the rounds it
    needs to be judged: first the candidates waiting, then `propose`'s."""
    room = rules.width - len(state.alive())
    if room <= 0 or (budget.left() - reserve) // rules.width < rules.first_look:
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
    """The set and its simplest member (module doc)."""
    state.ended = why
    judged = state.judged(rules.first_look) or [c for c in state.alive()
                                                if state.measured.values.get(c)]
    if not judged:
        return state
    level = state.looks[-1].level if state.looks else rules.level(1)
    broken = bound_breakers(state.measured, space.bounds, judged, level)
    state.final = look_at(state.measured, judged, rules.margin, level,
                          [c for c in judged if c not in broken])
    members = [c for c in state.members() if c not in broken]
    if members:
        centres = state.final.centres
        score = sign(state.measured.question.better)
        state.winner = min(members, key=lambda c: (space.changes(c), -score * math.log(
            centres[c]) if centres.get(c, 0) > 0 else math.inf, c))
    return state


def _unknown() -> Question:
    return Question("", "", "", "", HIGHER)
