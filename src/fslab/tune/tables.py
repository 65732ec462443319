"""A tune's answer as tables (rendering: no statistics is computed here that a stage did
not compute): stats/tune.csv (every configuration of every stage), stats/tune_set.csv
(the set the race could not tell from the best), stats/tune_options.csv (one row per
factor: change or keep, its contribution on fresh data), and what tune.html draws."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from fslab.analysis.cells.stats import geomean
from fslab.analysis.pairs.decisions import decide_pair
from fslab.core.cell_keys import level_label
from fslab.core.pair import AGAINST_BEST, AGAINST_REFERENCE, EQUIVALENT, Pair
from fslab.tune import words
from fslab.tune.carry import Carried
from fslab.tune.confirm import Confirmation
from fslab.tune.credit import CHANGE, KEEP
from fslab.tune.race import SAME
from fslab.tune.screen import WITHIN
from fslab.tune.space import Config, Space
from fslab.tune.tuner import Tuned
from fslab.tune.unsafe import unsafe_of

STAGE_COLUMNS = ["stage", "iterations", "ratio", "ratio_ci_low", "ratio_ci_high",
                 "dropped_at", "reason", "status", "decision", "target", "workload", "op",
                 "metric", "geomean", "changes", "unsafe", "proposed_by", "entered",
                 "in_set", "machine_s"]
SET_COLUMNS = ["target", "workload", "ratio", "ratio_ci_low", "ratio_ci_high", "decision",
               "changes", "rounds", "winner", "proposed_by", "equivalent_to_set"]
NOT_CONFIRMED = "not in the configuration confirmed"
# What carries to the next sitting (tune/carry.py): the sittings that measured the share,
# those after the one that chose it (pooled), their pooled share and interval, where the
# next sitting's share should fall, the verdict (holds next time, may not hold next time,
# this sitting only, this sitting's answer), the pooled decision, the sitting that decided
# it, what the spread rests on, and the more sittings that would carry it; then each
# sitting's own share, in order (';'-separated: the first is the one that chose).
CARRY_COLUMNS = ["sittings", "later", "pooled_contribution", "pooled_ci_low",
                 "pooled_ci_high", "next_low", "next_high", "next_verdict",
                 "pooled_decision", "decided_at", "spread_source", "sittings_needed"]
EACH_SITTING = "each_sitting"
OPTION_COLUMNS = ["target", "workload", "factor", "level", "verdict", "contribution",
                  "contribution_ci_low", "contribution_ci_high", "alternatives",
                  "not_separated", "alternative_to", "shown", "reference", "source",
                  "machine_s", "kept_because", *CARRY_COLUMNS, EACH_SITTING]


def carry_row(carry: Carried) -> dict[str, object]:
    """A share's carry columns (CARRY_COLUMNS, in order)."""
    pooled = carry.later > 0
    return {"sittings": carry.sittings, "later": carry.later,
            "pooled_contribution": carry.ratio if pooled else math.nan,
            "pooled_ci_low": carry.low, "pooled_ci_high": carry.high,
            "next_low": carry.next_low, "next_high": carry.next_high,
            "next_verdict": carry.verdict, "pooled_decision": carry.decision,
            "decided_at": carry.decided_at, "spread_source": carry.source,
            "sittings_needed": carry.needed}


def tune_table(tuned: list[Tuned]) -> pd.DataFrame:
    """stats/tune.csv: per question, stage and configuration measured: its levels (a
    column per factor), rounds, ratio to the reference on that stage's data with its
    interval (the confirmation's from its ablation model; the others each pair's own
    paired 95 % interval, estimates), the round of the look that dropped it and why, its
    status and the rule's decision against the reference."""
    rows: list[dict[str, object]] = []
    for one in tuned:
        space = one.space
        rows += [{**space.levels(config), **row} for config, row in _rows(one, space)]
    names = list(dict.fromkeys(n for one in tuned for n in one.space.names))
    return pd.DataFrame(rows, columns=[*names, *STAGE_COLUMNS])


def _rows(one: Tuned, space: Space) -> list[tuple[Config, dict[str, object]]]:
    out = []
    base = {"target": one.question.target, "workload": one.question.job,
            "op": one.question.op, "metric": one.question.metric}
    if one.screen is not None:
        fixed = {f.index for f in one.screen.factors if f.verdict == WITHIN}
        measured = one.screen.measured
        for config in _ordered(space, {*measured.values, *measured.unmeasured}):
            status = "reference" if config == space.reference else (
                "fixed" if any(config[i] for i in fixed) else "screened")
            out.append((config, {**base, **_measured(one, space, "screen", config, measured),
                                 "status": status, "reason": "a row of the screen's design",
                                 "proposed_by": "the screen's design", "entered": 1}))
    race = one.race
    members = set(race.members())
    for config, entry in race.entries.items():
        row = {**base, **_measured(one, space, "race", config, race.measured),
               "dropped_at": entry.dropped_at, "reason": entry.reason,
               "proposed_by": entry.proposed_by, "entered": entry.entered,
               "in_set": config in members}
        row["status"] = _race_status(one, space, config, members)
        if entry.dropped_at is None and config == race.winner:
            row["reason"] = ("the simplest configuration shown equivalent to the best, "
                             f"or the best itself; {race.ended}")
        out.append((config, row))
    confirmation = one.confirmation
    if confirmation.measured is not None:
        for config in confirmation.configs:
            row = {**base, **_measured(one, space, "confirm", config, confirmation.measured),
                   "proposed_by": "the ablation", "entered": 1}
            row.update(_confirm_row(confirmation, space, config))
            out.append((config, row))
    if confirmation.recommended not in confirmation.configs:
        out.append((confirmation.recommended, {
            **base, "stage": "confirm", "iterations": 0, "status": "winner",
            "changes": space.changes(confirmation.recommended),
            "unsafe": _unsafe(space, confirmation.recommended),
            "reason": "the reference stays: nothing earned a change"}))
    return out


def _measured(one: Tuned, space: Space, stage: str, config: Config,
              measured: Any) -> dict[str, object]:
    values = measured.values.get(config, {})
    found: dict[str, object] = {"stage": stage, "iterations": len(values),
                             "geomean": geomean(values.values()),
                             "changes": space.changes(config),
                             "unsafe": _unsafe(space, config),
                             "machine_s": measured.seconds.get(config, math.nan)}
    why = measured.unmeasured.get(config)
    if why and not values:
        found.update(status=why.status, reason=str(why))
        return found
    reference = measured.values.get(space.reference)
    if config == space.reference:
        found.update(ratio=1.0)
    elif reference and values:
        answer = decide_pair(values, reference, one.question.better, one.margin)
        found.update(ratio=answer.ratio, ratio_ci_low=answer.ratio_ci_low,
                     ratio_ci_high=answer.ratio_ci_high,
                     decision=answer.word(AGAINST_REFERENCE))
    return found


def _race_status(one: Tuned, space: Space, config: Config, members: set[Config]) -> str:
    entry = one.race.entries[config]
    if entry.dropped_at is not None:
        return entry.status
    if config == one.race.winner:
        return "winner"
    if config == space.reference:
        return "reference"
    if config in members and one.race.final is not None and config in one.race.final.against:
        same = one.race.final.against[config].decision == EQUIVALENT
        return "same" if same or one.race.ended == SAME else "survived"
    return "survived"


def _confirm_row(confirmation: Confirmation, space: Space, config: Config) -> dict[str, object]:
    if config == confirmation.recommended:
        status = "winner"
    elif config == space.reference:
        status = "reference"
    elif config == confirmation.challenger:
        status = "challenger"
    elif config == confirmation.best:
        status = "best"
    elif config in confirmation.stages[0].configs:
        status = "ablation"
    elif any(config in stage.configs for stage in confirmation.stages):
        status = "added back"
    else:
        status = "twin"  # measured beside the recommendation to show it an alternative
    row: dict[str, object] = {"status": status}
    answer = None
    if config == confirmation.challenger:
        answer = confirmation.bundle
    elif config == confirmation.recommended:
        answer = confirmation.recommended_answer
    if answer is not None:
        row.update(ratio=answer.ratio, ratio_ci_low=answer.ratio_ci_low,
                   ratio_ci_high=answer.ratio_ci_high,
                   decision=answer.word(AGAINST_REFERENCE))
    if config == space.reference:
        row["decision"] = ""
    return row


def set_table(tuned: list[Tuned]) -> pd.DataFrame:
    """stats/tune_set.csv: the configurations the race could not tell from the best,
    each with its ratio to the race's best (selected: the others read low beside it) and
    its interval (the last look's), its changes from the reference, whether it is shown
    equivalent to every other member (`equivalent_to_set`); the winner is the simplest
    such member, else the best."""
    rows = []
    for one in tuned:
        space = one.space
        final = one.race.final
        if final is None:
            continue
        for config in _ordered(space, set(one.race.members())):
            answer = final.against.get(config)
            rows.append({**space.levels(config), "target": one.question.target,
                         "workload": one.question.job,
                         "ratio": 1.0 if config == final.best else _of(answer, "ratio"),
                         "ratio_ci_low": _of(answer, "ratio_ci_low"),
                         "ratio_ci_high": _of(answer, "ratio_ci_high"),
                         "decision": "best" if config == final.best else (
                             answer.word(AGAINST_BEST) if answer else ""),
                         "changes": space.changes(config),
                         "rounds": len(one.race.measured.values.get(config, {})),
                         "winner": config == one.race.winner,
                         "proposed_by": one.race.entries[config].proposed_by,
                         "equivalent_to_set": config in one.race.equivalent})
    names = list(dict.fromkeys(n for one in tuned for n in one.space.names))
    return pd.DataFrame(rows, columns=[*names, *SET_COLUMNS])


def options_table(tuned: list[Tuned]) -> pd.DataFrame:
    """stats/tune_options.csv: per question, one row per factor — the recommended level
    (the reference's for keep), the verdict, its contribution on fresh data with the
    confirmation's simultaneous interval, and the other levels as good."""
    rows = []
    for one in tuned:
        space = one.space
        confirmation = one.confirmation
        seconds = sum(confirmation.measured.seconds.values()) \
            if confirmation.measured is not None else math.nan
        judged = {c.factor: c for c in confirmation.contributions}
        for index, factor in enumerate(space.factors):
            row: dict[str, object] = {"target": one.question.target, "workload": one.question.job,
                                   "factor": factor.name, "reference": factor.reference,
                                   "machine_s": seconds}
            if index in judged:
                found = judged[index]
                verdict = confirmation.verdict(index)
                instead = "" if found.instead_of is None else \
                    f"{space.factors[found.instead_of[0]].name}=" \
                    f"{space.factors[found.instead_of[0]].levels[found.instead_of[1]]}"
                row.update(
                    level=factor.levels[found.level] if verdict == CHANGE
                    else factor.reference, verdict=verdict,
                    contribution=found.answer.ratio, contribution_ci_low=found.answer.ratio_ci_low,
                    contribution_ci_high=found.answer.ratio_ci_high, source="confirm",
                    alternatives=";".join(factor.levels[i] for i in found.alternatives),
                    not_separated=";".join(factor.levels[i] for i in found.not_separated),
                    alternative_to=instead,
                    shown=words.shown(found.answer, one.question.better, one.margin),
                    kept_because=words.kept_because(found.answer, verdict, one.margin))
                if index in one.carried and verdict == CHANGE:
                    row.update(carry_row(one.carried[index]))
                    row[EACH_SITTING] = f"{one.carried[index].ratio:.4g}"
            else:
                row.update(level=factor.reference, verdict=KEEP, alternatives="",
                           not_separated="", alternative_to="", **_not_changed(one, index))
            rows.append(row)
    return pd.DataFrame(rows, columns=OPTION_COLUMNS)


def _not_changed(one: Tuned, index: int) -> dict[str, object]:
    """What is known of a factor the challenger left at its reference: the screen's
    effect of its level farthest from 1, or nothing."""
    if one.screen is None:
        return {"source": "race", "contribution": math.nan, "shown": NOT_CONFIRMED,
                "kept_because": words.NOT_CONFIRMED}
    effects = one.screen.factors[index].effects
    if not effects:
        return {"source": "screen", "contribution": math.nan, "shown": NOT_CONFIRMED,
                "kept_because": words.NOT_CONFIRMED}
    ratio, low, high = max(effects.values(), key=lambda e: abs(math.log(e[0])))
    said = words.no_effect(one.margin) if one.screen.factors[index].verdict == WITHIN \
        else NOT_CONFIRMED
    return {"source": "screen", "contribution": ratio, "contribution_ci_low": low,
            "contribution_ci_high": high, "shown": said,
            "kept_because": words.NOT_CONFIRMED if said == NOT_CONFIRMED else said}


def page_tables(tuned: list[Tuned]) -> dict[str, pd.DataFrame]:
    """What tune.html draws: the screen's effects, the race as ratios to the best after
    each look (every configuration, the set marked), each option's contribution."""
    effects, race, options = [], [], []
    for one in tuned:
        space = one.space
        head = f"{one.question.job} on {one.question.target}"
        if one.screen is not None:
            for screened in one.screen.factors:
                factor = space.factors[screened.index]
                for level, (ratio, low, high) in sorted(screened.effects.items()):
                    effects.append({"question": head, "factor": factor.name,
                                    "level": level_label(factor.name, factor.levels[level]),
                                    "ratio": ratio, "low": low, "high": high,
                                    "kept": screened.kept})
        members = set(one.race.members())
        for look in one.race.looks:
            for config in look.found.centres:
                answer = look.found.against.get(config)
                race.append({"question": head, "configuration": space.describe(config),
                             "round": look.round,
                             "ratio": 1.0 if config == look.found.best else _of(answer, "ratio"),
                             "low": _of(answer, "ratio_ci_low"),
                             "high": _of(answer, "ratio_ci_high"),
                             "in_set": config in members,
                             "winner": config == one.race.winner,
                             "dropped_at": one.race.entries[config].dropped_at
                             if config in one.race.entries else None})
        confirmation = one.confirmation
        if confirmation.recommended_answer is not None:
            options.append(_option_point(head, "the whole configuration: " + space.describe(
                confirmation.recommended), confirmation.recommended_answer, "bundle"))
        if confirmation.against_best is not None and confirmation.best is not None:
            options.append(_option_point(head, "recommended / the race's best (" +
                                         space.describe(confirmation.best) + ")",
                                         confirmation.against_best, "best"))
        for found in confirmation.contributions:
            factor = space.factors[found.factor]
            options.append(_option_point(head, level_label(factor.name,
                                                           factor.levels[found.level])
                                         + ": its share", found.answer, found.verdict))
    return {"effects": pd.DataFrame(effects), "race": pd.DataFrame(race),
            "options": pd.DataFrame(options)}


def _option_point(head: str, label: str, answer: Pair, verdict: str) -> dict[str, object]:
    return {"question": head, "option": label, "ratio": answer.ratio, "low": answer.ratio_ci_low,
            "high": answer.ratio_ci_high, "verdict": verdict}


def _of(answer: Pair | None, name: str) -> float:
    return float(getattr(answer, name)) if answer is not None else math.nan


def _ordered(space: Space, configs: set[Config]) -> list[Config]:
    return sorted(configs, key=lambda c: (space.changes(c), c))


def _unsafe(space: Space, config: Config) -> str:
    return ", ".join(level_label(f.name, f.levels[i])
                     for f, i in zip(space.factors, config, strict=True)
                     if i and unsafe_of(f.name, f.levels[i], f.reference, ["null"]))
