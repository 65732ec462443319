"""Reading a confirmation's stages: which changes earned their place, the configuration
that is recommended (always one the stage measured), the levels shown as good as the
recommended one, and the options either of which suffices. Pure functions of what a stage
measured; tune/confirm.py measures.

Every question of a stage is a pair on that stage's rounds (analysis.pairs.decisions.
decide_pair: a paired t on the rounds both ran, so each rests on its own variance) with a
two-sided interval at α over the stage's family (`Stage.family`: every question the stage
may answer, counted before it is measured), read by the one rule.

The ablation (stage 1): the reference R, the challenger C, C with each change i taken
back (C − i), the race's best B, and C with a changed factor at another level the race
could not tell from it. Each change's contribution is C against C − i; it earns
**change** when that interval says it helps (excludes 1 on the better side), else
**keep**. With one or two changes every subset of them is measured, so the walk from C
takes back the changes not shown, one at a time, the weakest first, and ends at a
measured configuration each of whose changes is shown within it: two options either of
which suffices (each alone as good as both) end with one of them — the larger estimate —
and the other named as its alternative only when the two alone are shown equivalent
within the margin. With three or more changes and two or more not shown, C without them
was not measured: the second stage measures it as it stands, and each change taken back
added to it alone, so that options either of which suffices are found there (`forward`).

A level is an **alternative** of a change only when the recommendation with it instead is
shown equivalent to the recommendation within the margin (the rule's equivalence: the
interval inside ±margin), a question of its own with rounds spent for it (tune/twins.py);
a near twin not shown equivalent is **not separated**, with the rounds it would need.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from itertools import combinations

from fslab.analysis.pairs.decisions import decide_pair, sign
from fslab.analysis.pairs.model import ALPHA
from fslab.analysis.pairs.pair import EQUIVALENT, FASTER, Pair
from fslab.tune.measure import StageData
from fslab.tune.space import Config, Space

CHANGE, KEEP = "change", "keep"


def without(config: Config, factor: int) -> Config:
    """`config` with `factor` at its reference."""
    return with_level(config, factor, 0)


def with_level(config: Config, factor: int, level: int) -> Config:
    return tuple(level if i == factor else v for i, v in enumerate(config))


def changed(config: Config) -> list[int]:
    return [i for i, v in enumerate(config) if v]


@dataclass(frozen=True)
class Stage:
    """One measured stage of the confirmation: its configurations, rounds and family."""

    configs: tuple[Config, ...]
    rounds: range
    family: int
    margin: float
    better: str
    alpha: float = ALPHA

    def ask(self, measured: StageData, a: Config, b: Config) -> Pair:
        """a against b on this stage's rounds (module doc)."""
        first = {r: v for r, v in measured.values.get(a, {}).items() if r in self.rounds}
        second = {r: v for r, v in measured.values.get(b, {}).items() if r in self.rounds}
        return decide_pair(first, second, self.better, self.margin, alpha=self.alpha,
                           family=max(1, self.family))

    def helps(self, measured: StageData, a: Config, b: Config) -> tuple[bool, Pair]:
        """Whether a is shown better than b, and the answer."""
        answer = self.ask(measured, a, b)
        return answer.decision == FASTER, answer


@dataclass(frozen=True)
class Contribution:
    """One option the challenger changed, as the confirmation found it."""

    factor: int
    level: int  # the challenger's level of the factor
    answer: Pair  # with the option against without it (`context` says where)
    verdict: str  # CHANGE or KEEP
    context: Config = ()  # the configuration the option was taken back from
    alternatives: tuple[int, ...] = ()  # other levels shown equivalent to it
    not_separated: tuple[int, ...] = ()  # its near twins not shown equivalent (twins.py)
    needs: tuple[float, ...] = ()  # the rounds each of those would need to be told
    instead_of: tuple[int, int] | None = None  # (factor, level) it may replace: either suffices
    instead_answer: Pair | None = None  # this option alone against that one alone


@dataclass
class Reading:
    """What a stage found: each changed option, the configuration recommended, and the
    options to add back one at a time in a second stage (the ablation's `forward`)."""

    contributions: dict[int, Contribution]
    recommended: Config
    forward: tuple[int, ...] = ()


def ablation_configs(space: Space, challenger: Config, best: Config | None,
                     others: list[Config]) -> list[Config]:
    """The ablation's configurations (module doc), each once."""
    out = [space.reference, challenger, *(without(challenger, i) for i in changed(challenger))]
    out += [c for c in [best, *others] if c is not None]
    return list(dict.fromkeys(out))


def ablation_family(changes: int, rival: bool, best: bool) -> int:
    """The questions an ablation of `changes` changes may answer: each contribution, the
    challenger against the reference and against the race's best where that is another
    configuration (`rival`); with two changes, each alone against the reference and the
    race's best (`best`: the race had one), and the two alone against each other (every
    subset is measured: stage 1 may be the whole confirmation). A twin level measured
    beside them is a question of its own (tune/twins.py)."""
    family = changes + 1 + rival
    if changes == 2:
        family += 3 + 2 * best
    return family


def read_ablation(stage: Stage, measured: StageData, space: Space, challenger: Config,
                  bundle: Pair) -> Reading:
    """Each change's contribution and the recommendation (module doc); `bundle`: the
    challenger against the reference."""
    reference = space.reference
    direction = sign(stage.better)
    found = {i: stage.helps(measured, challenger, without(challenger, i))
             for i in changed(challenger)}
    contributions = {i: Contribution(i, challenger[i], answer, CHANGE if shown else KEEP,
                                     challenger)
                     for i, (shown, answer) in found.items()}
    kept = [i for i, (shown, _) in found.items() if not shown]
    reading = Reading(contributions, challenger)
    if kept and len(found) <= 2:
        _walk(stage, measured, reference, challenger, reading, direction)
    elif kept:
        reading.recommended = tuple(0 if i in kept else v for i, v in enumerate(challenger))
        unexplained = direction * (_log(bundle.ratio) - sum(
            _log(answer.ratio) for _, answer in found.values()))
        if len(kept) >= 2 and unexplained > math.log(1 + stage.margin):
            # more than the changes one at a time explain: the strongest taken back may
            # be needed without the others (either of them suffices)
            reading.forward = (max(kept, key=lambda i: direction * _log(found[i][1].ratio)),)
        for i in kept:
            reading.contributions[i] = _verdict(reading.contributions[i], KEEP)
    return reading


def _log(ratio: float) -> float:
    """log of a ratio; 0 (no effect) where there is none to take (NaN, 0)."""
    return math.log(ratio) if ratio > 0 else 0.0


def _walk(stage: Stage, measured: StageData, reference: Config, challenger: Config,
          reading: Reading, direction: float) -> None:
    """One or two changes, every subset measured: take back the changes not shown, the
    weakest first, until each left is shown within what is left (module doc)."""
    current = challenger
    while current != reference:
        answers = {i: stage.helps(measured, current, without(current, i))
                   for i in changed(current)}
        weak = [i for i, (shown, _) in answers.items() if not shown]
        for i, (shown, answer) in answers.items():
            reading.contributions[i] = Contribution(i, challenger[i], answer,
                                                    CHANGE if shown else KEEP, current)
        if not weak:
            break
        if len(weak) == 2:  # neither is needed beside the other: is either needed alone?
            alone = {i: stage.helps(measured, with_level(reference, i, challenger[i]),
                                    reference) for i in weak}
            either = [i for i in weak if alone[i][0]]
            if either:
                keep = max(either, key=lambda i: direction * _log(alone[i][1].ratio))
                other = next(i for i in weak if i != keep)
                current = without(current, other)
                reading.contributions[keep] = Contribution(keep, challenger[keep],
                                                           alone[keep][1], CHANGE, current)
                reading.contributions[other] = _instead(
                    stage, measured, reference, challenger, other, keep,
                    reading.contributions[other])
                break
        weakest = min(weak, key=lambda i: direction * _log(answers[i][1].ratio))
        current = without(current, weakest)
    reading.recommended = current
    for i in changed(challenger):
        if not current[i]:
            reading.contributions[i] = _verdict(reading.contributions[i], KEEP)


def _instead(stage: Stage, measured: StageData, reference: Config, challenger: Config,
             other: int, keep: int, found: Contribution) -> Contribution:
    """`other` alone against `keep` alone: named as its alternative when equivalent."""
    answer = stage.ask(measured, with_level(reference, other, challenger[other]),
                       with_level(reference, keep, challenger[keep]))
    if answer.decision != EQUIVALENT:
        return Contribution(found.factor, found.level, found.answer, KEEP, found.context,
                            instead_answer=answer)
    return Contribution(found.factor, found.level, found.answer, KEEP, found.context,
                        instead_of=(keep, challenger[keep]), instead_answer=answer)


def _verdict(found: Contribution, verdict: str) -> Contribution:
    return replace(found, verdict=verdict)


def forward_family(forward: int, candidates: int, best: bool) -> int:
    """The questions a second stage may answer: each option added back, each two of
    them against each other, and each possible recommendation (`candidates` besides
    those with an option added) against the reference and the race's best."""
    recommendations = candidates + forward
    return forward + len(list(combinations(range(forward), 2))) + recommendations * (
        2 if best else 1)


def read_forward(stage: Stage, measured: StageData, challenger: Config, start: Config,
                 forward: tuple[int, ...], reading: Reading) -> Config:
    """Each option of `forward` added back to `start` alone: the one shown to help most
    joins it, and another shown to help as much is named as its alternative; the
    configuration recommended (module doc)."""
    direction = sign(stage.better)
    found = {i: stage.helps(measured, with_level(start, i, challenger[i]), start)
             for i in forward}
    for i, (_, answer) in found.items():
        reading.contributions[i] = Contribution(i, challenger[i], answer, KEEP, start)
    shown = [i for i in forward if found[i][0]]
    if not shown:
        return start
    keep = max(shown, key=lambda i: direction * _log(found[i][1].ratio))
    chosen = with_level(start, keep, challenger[keep])
    reading.contributions[keep] = Contribution(keep, challenger[keep], found[keep][1],
                                               CHANGE, start)
    for other in shown:
        if other == keep:
            continue
        answer = stage.ask(measured, with_level(start, other, challenger[other]), chosen)
        previous = reading.contributions[other]
        reading.contributions[other] = Contribution(
            other, previous.level, previous.answer, KEEP, start,
            instead_of=(keep, challenger[keep]) if answer.decision == EQUIVALENT else None,
            instead_answer=answer)
    return chosen
