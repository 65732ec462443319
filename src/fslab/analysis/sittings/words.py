"""The pooled answers in words, as the verdicts say theirs (analysis/verdicts.answer): per
primary question, "on average: ext4 1.21× faster than xfs (99 % CI 1.14–1.28×); next
sitting 1.05–1.40×: holds next time", the family it was adjusted over, the spread it
rests on, and the machine time each decision cost."""

from __future__ import annotations

import math
from collections.abc import Sequence

from fslab.analysis.pairs.pair import UNRESOLVED
from fslab.analysis.sittings.pooled import NO_SPREAD, TWO
from fslab.analysis.sittings.question import PooledQuestion
from fslab.analysis.sittings.repeat import as_percent
from fslab.analysis.verdicts import advantage_words, answer, facing
from fslab.core.metrics import title
from fslab.core.units import format_bound as bound
from fslab.core.units import format_duration

HOLDS_NEXT, MAY_NOT_NEXT = "holds next time", "may not hold next time"
UNIT_WORDS = {"sitting": ("sitting", "sittings"), "host": ("machine", "machines")}


def next_words(decision: str, next_decision: str) -> str:
    """What the next interval says of an answer decided on average: it holds next time
    (the next interval decides the same), or it may not; '' when nothing was decided
    on average (nothing to hold) or there is no next interval."""
    if decision in ("", UNRESOLVED) or not next_decision:
        return ""
    return HOLDS_NEXT if next_decision == decision else MAY_NOT_NEXT


def pooled_lines(pooled: Sequence[PooledQuestion], campaign: str = "") -> list[str]:
    """The pooled verdicts' text (pooled_verdicts.txt): the family and its level, then per
    workload its primary questions, then what was decided in how much machine time."""
    primary = [q for q in pooled if q.primary]
    if not primary:
        return ["No primary question was measured by two or more sittings: nothing pooled."]
    by = primary[0].by
    one, many = UNIT_WORDS.get(by, (by, by + "s"))
    level = 100 * (1 - min(q.alpha for q in primary))
    ks = sorted({q.k for q in primary})
    family = max(q.family for q in primary)
    adjusted = (f"Bonferroni-adjusted over {family}: each interval is a {level:.4g} % interval"
                if family > 1 else f"each interval is a {level:.4g} % interval")
    lines = [f"Pooled {'/'.join(map(str, ks))} {many}{f' of {campaign}' if campaign else ''}: "
             f"{len(primary)} question{'s' * (len(primary) != 1)}, {adjusted}. 'On "
             f"average': the mean over {many}; 'next time': where the next {one}'s "
             "estimate should fall."]
    if any(q.note == TWO for q in primary):
        lines.append(f"Only two {many}: {TWO.split(': ', 1)[1]}.")
    if any(q.tau_sittings for q in primary):
        lines.append(f"Only two {many}: both intervals borrow τ, the spread between "
                     f"sittings, from this host's history of earlier sittings (the two "
                     "pooled left out of it); each question's below.")
    for workload in dict.fromkeys(q.workload for q in primary):
        lines.append(f"== {workload} ==")
        lines += ["  " + pooled_sentence(q, one) for q in primary if q.workload == workload]
    lines.append(decided_line(primary))
    return lines


def pooled_sentence(question: PooledQuestion, unit: str = "sitting") -> str:
    """One pooled question in the verdicts' words."""
    mean = question.mean_pair()
    what = title(question.metric, long=True)
    head = f"{what} ({question.k} {unit}s)"
    if mean.note == NO_SPREAD:
        return (f"{head}: {question.a} / {question.b} {question.ratio:.3g}× in every "
                f"{unit}: {NO_SPREAD}")
    word = advantage_words(question.metric, question.better)
    said = "on average: " + answer(question.a, question.b, mean, word, "CI")
    if math.isfinite(question.next_low):
        _, _, (_, low, high) = facing(question.a, question.b, question.next_pair())
        holds = next_words(question.decision, question.next_decision)
        said += f"; next {unit} {bound(low)}–{bound(high)}×" + (f": {holds}" if holds else "")
    elif question.note and question.note not in (TWO,):
        said += f"; next {unit}: {question.note.split(': ', 1)[-1]}"
    else:
        said += f"; next {unit}: cannot be said from {question.k}"
    return f"{head}, {said} ({spread_words(question, unit)})"


def spread_words(question: PooledQuestion, unit: str = "sitting") -> str:
    """The spread between units the question's intervals rest on: 'a sitting's ratio
    moves ±4.1 % (1 SD) about its mean, I² 60 %', or with two sittings the τ borrowed."""
    own = f"±{as_percent(question.tau):.1f} %"
    if question.tau_sittings:
        return (f"τ borrowed: a {unit}'s ratio moves ±{as_percent(question.tau_borrowed):.1f}"
                f" % (1 SD) on this host, from {question.tau_sittings} earlier sittings; "
                f"these two alone {own}")
    return (f"a {unit}'s ratio moves {own} (1 SD) about their mean, I² "
            f"{100 * question.i2:.0f} %")


def decided_line(primary: Sequence[PooledQuestion]) -> str:
    """'Decided 4 of 5 questions on average, 3 of them holding next time, in 12 min of
    machine time (…)'."""
    average = sum(1 for q in primary if q.decision not in ("", UNRESOLVED))
    holding = sum(1 for q in primary if next_words(q.decision, q.next_decision) == HOLDS_NEXT)
    seconds = [q.machine_s for q in primary if math.isfinite(q.machine_s)]
    spent = ""
    if seconds:
        total = float(sum(seconds))
        spent = f" in {format_duration(total)} of machine time" + (
            f" ({format_duration(total / average)} per question decided on average)"
            if average else "")
    return (f"Decided {average} of {len(primary)} questions on average, {holding} of them "
            f"holding next time{',' if spent else ''}{spent}.")
