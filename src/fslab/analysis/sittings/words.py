"""The pooled answers in words, as the verdicts say theirs (analysis/verdicts.answer): per
primary question, "on average: ext4 1.21× faster than xfs (99 % CI 1.14–1.28×); next
sitting 1.05–1.40×: holds next time", the family it was adjusted over, the spread it
rests on, and the machine time each decision cost."""

from __future__ import annotations

import math
from collections.abc import Sequence

from fslab.analysis.sittings.pooled import NO_SPREAD, TWO
from fslab.analysis.sittings.question import PooledQuestion
from fslab.analysis.sittings.repeat import PRIOR_DF, PRIOR_TAU, as_percent
from fslab.analysis.sittings.spread import HISTORY, NOT_BORROWED, STATED
from fslab.analysis.verdicts import advantage_words, answer, facing
from fslab.core.metrics import title
from fslab.core.pair import UNRESOLVED
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
    """The pooled verdicts' text (pooled_verdicts.txt): the family, its level and the
    looks, what the spread between sittings rests on, then per workload its primary
    questions, then what was decided in how much machine time."""
    primary = [q for q in pooled if q.primary]
    if not primary:
        return ["No primary question was measured by two or more sittings: nothing pooled."]
    by = primary[0].by
    one, many = UNIT_WORDS.get(by, (by, by + "s"))
    ks = sorted({q.k for q in primary})
    lines = [f"Pooled {'/'.join(map(str, ks))} {many}{f' of {campaign}' if campaign else ''}: "
             f"{len(primary)} question{'s' * (len(primary) != 1)}, {_levels(primary)}. "
             f"'On average': the mean over {many}; 'next time': where the next {one}'s "
             "estimate should fall."]
    if any(q.spread_source == STATED for q in primary):
        lines.append(f"No earlier sittings of one host beside these to learn its spread "
                     f"from (a catalogue, --catalogue C, keeps them; sittings of several "
                     f"hosts borrow none): the spread between "
                     f"{many} combines these {many}' own with the stated prior, a sitting's "
                     f"ratio moving ±{as_percent(PRIOR_TAU):.0f} % (1 SD) on "
                     f"{PRIOR_DF:.0f} degrees of freedom (docs/statistics.md).")
    if any(q.spread_questions > 1 for q in primary):
        lines.append(f"A {one} moves every target, so the primary questions' {many} are "
                     f"read together for that spread (one per independent contrast: a "
                     f"job's targets − 1); a question whose {many} disagree beyond it is "
                     f"read on its own.")
    if any(q.spread_source == NOT_BORROWED for q in primary):
        lines.append(f"Where these {many} disagree more than this host's history allows, "
                     "its spread is not borrowed (each such question says so).")
    for workload in dict.fromkeys(q.workload for q in primary):
        lines.append(f"== {workload} ==")
        lines += ["  " + pooled_sentence(q, one) for q in primary if q.workload == workload]
    lines.append(decided_line(primary))
    return lines


def _levels(primary: Sequence[PooledQuestion]) -> str:
    """'Bonferroni-adjusted over 3 and spent over 6 planned sittings: each interval is a
    98.7 % interval at this look'."""
    family = max(q.family for q in primary)
    level = 100 * (1 - min(q.level if q.level == q.level else q.alpha for q in primary))
    adjusted = f"Bonferroni-adjusted over {family}" if family > 1 else ""
    planned = max(q.planned for q in primary)
    if not planned:
        return (f"{adjusted}: each interval is a {level:.4g} % interval" if adjusted else
                f"each interval is a {level:.4g} % interval")
    k = max(q.k for q in primary)
    spent = (f"{adjusted} and " if adjusted else "") + (
        f"spent over {planned} planned sittings (Hwang–Shih–DeCani, so that deciding "
        f"again after each keeps the error rate)")
    if k > planned:
        return (f"{spent}: the {planned} planned sittings are spent, nothing more is "
                f"decided; each interval is a {level:.4g} % interval, as at sitting "
                f"{planned}")
    return f"{spent}: each interval is a {level:.4g} % interval at sitting {k}"


def pooled_sentence(question: PooledQuestion, unit: str = "sitting") -> str:
    """One pooled question in the verdicts' words."""
    mean = question.mean_pair()
    what = title(question.metric, long=True)
    head = f"{what} ({question.k} {unit}s)"
    if mean.note == NO_SPREAD:
        return (f"{head}: {question.a} / {question.b} {question.ratio:.3g}× in every "
                f"{unit}: {NO_SPREAD}")
    word = advantage_words(question.metric, question.better)
    said = "on average: " + _mean_words(question, word)
    if math.isfinite(question.next_low):
        _, _, (_, low, high) = facing(question.a, question.b, question.next_pair())
        holds = next_words(question.decision, question.next_decision)
        m = question.next_iterations
        of = f" ({m:.0f} iterations)" if m == m else ""
        said += (f"; next {unit}{of} {bound(low)}–{bound(high)}×"
                 + (f": {holds}" if holds else ""))
    elif question.note and question.note not in (TWO,):
        said += f"; next {unit}: {question.note.split(': ', 1)[-1]}"
    else:
        said += f"; next {unit}: cannot be said from {question.k}"
    return f"{head}, {said} ({spread_words(question, unit)})"


def _mean_words(question: PooledQuestion, word: str) -> str:
    """The answer on average, with the sitting whose look decided it; a decision the
    current interval no longer shows on its own is said with the interval that decided
    it, then the current one."""
    if not question.decided_at:
        return answer(question.a, question.b, question.mean_pair(), word, "CI")
    at = f"decided at sitting {question.decided_at}"
    if question.shown_now:
        return answer(question.a, question.b, question.mean_pair(), word, "CI",
                      decided_tail=f", {at}")
    _, _, (ratio, low, high) = facing(question.a, question.b, question.mean_pair())
    return (answer(question.a, question.b, question.deciding_pair(), word,
                   f"CI at sitting {question.decided_at}", decided_tail=", where it was "
                   "decided") + f"; with all {question.k}: {ratio:.3g}× (CI {bound(low)}–"
            f"{bound(high)}×)")


def spread_words(question: PooledQuestion, unit: str = "sitting") -> str:
    """The spread between units both intervals rest on and where it comes from: 'between
    sittings ±2.1 % (1 SD, at most ±6.0 %): these 3 with this host's 12 earlier
    sittings (±3.0 %)'. Sittings that vary no more than their noise get the bound alone
    (never '±0.0 %')."""
    if not question.spread_source:  # hosts: their own spread alone
        return (f"a {unit}'s ratio moves ±{as_percent(question.tau):.1f} % (1 SD) about "
                f"their mean, I² {100 * question.i2:.0f} %")
    most = f"at most ±{as_percent(question.spread_tau_high):.1f} %"
    around = (f"between {unit}s {most} (95 % bound; these {question.k} vary no more than "
              "their own noise)" if not question.tau > 0 else
              f"between {unit}s ±{as_percent(question.spread_tau):.1f} % (1 SD, {most})")
    these = f"these {question.k}"
    if question.spread_questions > 1:
        these += (f" over the {question.spread_questions} questions' "
                  f"{question.spread_contrasts:.0f} contrasts")
    if question.spread_source == HISTORY:
        return (f"{around}: {these} with this host's {question.tau_sittings} "
                f"earlier sittings (±{as_percent(question.tau_borrowed):.1f} %)")
    if question.spread_source == NOT_BORROWED:
        return (f"{around}: {these} disagree more than this host's history "
                f"allows (±{as_percent(question.history_tau):.1f} %; Cochran's Q "
                f"{question.q:.1f} on {question.k - 1} df, p {question.q_p:.2g}), so it "
                f"was not borrowed: the stated prior instead")
    return f"{around}: {these} with the stated prior"


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
