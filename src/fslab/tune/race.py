"""The race: the candidates in interleaved rounds, each round one more fresh file system
for every survivor, and after each round from `first_look` on a look that drops what
the evidence puts below the best (tune/decide.py: α/2^k at look k, shared by the
candidates). It ends when one survives, when the survivors are the same within the
margin (the one with the fewest changes from the reference wins), or when the budget
would not pay for another round.

Every decision is a function of the values on disk: a race killed at any point and
resumed replays its looks from its results and goes on where it stopped, to the answer
an uninterrupted race gives.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

from fslab.tune.decide import Groups, Look, bound_breakers, race_look
from fslab.tune.space import Config, Space

ONE = "one survivor"
SAME = "the survivors are the same within the margin"
SPENT = "the budget would not pay for another round"
RAN_OUT = "no look could separate them within the rounds allowed"


@dataclass
class Race:
    """A race as it stands: its candidates, each one's round it was dropped at and why,
    its looks, the winner and why it ended."""

    candidates: list[Config]
    dropped: dict[Config, tuple[int, str]] = field(default_factory=dict)
    looks: list[Look] = field(default_factory=list)
    rounds: int = 0
    winner: Config | None = None
    ended: str = ""

    def alive(self) -> list[Config]:
        return [c for c in self.candidates if c not in self.dropped]


def run_race(space: Space, candidates: list[Config], better: str, margin: float,
             first_look: int, measure: Callable[[list[Config], int], Groups],
             bounds: Callable[[list[Config], float], dict[Config, str]],
             can_afford: Callable[[int], bool], max_rounds: int = 100,
             unmeasured: Callable[[], dict[Config, str]] = dict) -> Race:
    """Race `candidates`: `measure(alive, rounds)` makes sure every alive one has values
    for rounds 1..rounds and returns every value so far; `bounds(alive, alpha)` names the
    ones a latency bound drops; `can_afford(runs)` says whether the budget pays for that
    many more runs; `unmeasured()` names the ones whose every run failed (the file system
    refused them, or fio failed): dropped at once, at look 0, with the reason."""
    race = Race(list(candidates))
    while True:
        alive = race.alive()
        if len(alive) == 1:
            return _end(race, space, alive, ONE, {}, better)
        if race.rounds >= max_rounds or not can_afford(len(alive)):
            groups = measure(alive, race.rounds) if race.rounds else {}
            return _end(race, space, alive, SPENT if race.rounds < max_rounds else RAN_OUT,
                        groups, better)
        race.rounds += 1
        groups = measure(alive, race.rounds)
        for config, why in unmeasured().items():
            if config in alive and not groups.get(config):
                race.dropped[config] = (0, why)
        alive = race.alive()
        if race.rounds < first_look or len(alive) < 2:
            continue
        current = {c: {i: v for i, v in groups.get(c, {}).items() if i <= race.rounds}
                   for c in alive}
        if sum(1 for values in current.values() if values) < 2:
            continue  # a look compares what was measured: not yet two
        current = {c: values for c, values in current.items() if values}
        number = len(race.looks) + 1
        look = race_look(number, current, better, margin,
                         bounds(alive, _look_alpha(number)))
        race.looks.append(look)
        for config, why in look.dropped.items():
            race.dropped[config] = (number, why)
        if look.all_same:
            return _end(race, space, race.alive(), SAME, current, better)


def _look_alpha(number: int) -> float:
    from fslab.analysis.pairs.sequential import look_alpha

    return look_alpha(number)


def _end(race: Race, space: Space, alive: list[Config], why: str, groups: Groups,
         better: str) -> Race:
    """The winner: the one survivor; among survivors the same within the margin, the one
    with the fewest changes from the reference (then the best measured); when the budget
    ended it, the best measured."""
    race.ended = why
    if len(alive) == 1:
        race.winner = alive[0]
        return race
    alive = [c for c in alive if groups.get(c)] or alive  # a winner was measured
    means = {c: _geomean(groups.get(c, {})) for c in alive}
    better_first = race.looks[-1].best if race.looks else None
    if why == SAME:
        race.winner = min(alive, key=lambda c: (space.changes(c), c != better_first))
    else:
        sign = 1.0 if better == "higher" else -1.0
        race.winner = better_first if better_first in alive else max(
            alive, key=lambda c: sign * means[c] if means[c] == means[c] else -math.inf)
    return race


def _geomean(values: dict[int, float]) -> float:
    logs = [math.log(v) for v in values.values() if v > 0]
    return math.exp(sum(logs) / len(logs)) if logs else math.nan


def bounds_checker(space: Space, bounded: Callable[[str], Groups]
                   ) -> Callable[[list[Config], float], dict[Config, str]]:
    """`bounds(alive, alpha)` for run_race: the alive configurations each bound of the
    space drops (their interval of the bounded metric lies beyond it)."""
    def check(alive: list[Config], alpha: float) -> dict[Config, str]:
        out: dict[Config, str] = {}
        for bound in space.bounds:
            groups = {c: v for c, v in bounded(bound.metric).items() if c in alive}
            out.update(bound_breakers(groups, bound, alpha))
        return out

    return check
