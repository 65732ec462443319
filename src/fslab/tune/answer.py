"""What a user takes away from a tune: stats/tune.csv (one row per configuration and
stage it was measured in), stats/tuned.toml (the campaign with the winner as a target,
to run again), the sentence that answers the question, and the commands that set the
winner up: the mkfs line, the mount -o line, the zfs set lines, the fio options."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fslab.analysis.pairs.decisions import decided
from fslab.analysis.pairs.model import compare
from fslab.core.cells import level_label
from fslab.core.units import format_bound, turned
from fslab.tune.decide import Groups
from fslab.tune.race import SAME
from fslab.tune.space import Config, Space
from fslab.tune.stages import CONFIRM, RACE, SCREEN, groups_of, unmeasured_of
from fslab.tune.unsafe import unsafe_of

if TYPE_CHECKING:
    import pandas as pd

    from fslab.plan.model import Campaign
    from fslab.tune.driver import Answer

STAGE_COLUMNS = ["stage", "iterations", "ratio", "ratio_ci_low", "ratio_ci_high",
                 "dropped_at", "reason", "status", "decision", "target", "workload", "op",
                 "metric", "geomean", "changes", "unsafe"]


def tune_table(answers: list[Answer]) -> pd.DataFrame:
    """stats/tune.csv: per question, per stage, per configuration measured: its levels
    (a column per factor, named as the factor), rounds, ratio to the reference with its
    interval (the stage's own data, paired by round; 95 %, the confirmation's the
    question's answer, the others estimates), the look it was dropped at and why, its
    status and the campaign's rule's decision against the reference."""
    import pandas as pd

    rows: list[dict[str, Any]] = []
    for answer in answers:
        space, question = answer.space, answer.question
        for stage, path in answer.stages.items():
            groups = groups_of(path, space, question)
            unmeasured = unmeasured_of(path, space)
            for config in sorted({*groups, *unmeasured}, key=lambda c: (space.changes(c), c)):
                row = _row(answer, stage, config, groups)
                if config in unmeasured:  # status: refused (by the file system) or failed
                    why = unmeasured[config]
                    row.update(status=why.split(":", 1)[0], reason=why)
                rows.append({**space.levels(config), **row})
    names = list(dict.fromkeys(n for a in answers for n in a.space.names))
    return pd.DataFrame(rows, columns=[*names, *STAGE_COLUMNS])


def _row(answer: Answer, stage: str, config: Config, groups: Groups) -> dict[str, Any]:
    space, question = answer.space, answer.question
    reference = space.reference
    ratio, low, high, decision = _against(groups, config, reference, question.better,
                                          answer)
    dropped_at, reason = answer.race.dropped.get(config, (None, "")) if stage == RACE \
        else (None, "")
    status = _status(answer, stage, config, dropped_at)
    if stage == CONFIRM:
        decision = answer.confirmed.decision if config == answer.challenger and \
            config != reference else ("" if config == reference else decision)
        if config == answer.challenger and config != reference:
            ratio, low, high = answer.confirmed.ratio, answer.confirmed.low, \
                answer.confirmed.high
    if stage == SCREEN:
        reason = "a row of the screen's design"
    elif stage == RACE and not reason:
        reason = answer.race.ended if config == answer.race.winner else ""
    unsafe = [f"{level_label(f.name, f.levels[i])}" for f, i in zip(space.factors, config,
                                                                     strict=True)
              if i and unsafe_of(f.name, f.levels[i], f.reference, ["null"])]
    values = groups.get(config, {})
    logs = [math.log(v) for v in values.values() if v > 0]
    return {"stage": stage, "iterations": len(values), "ratio": ratio, "ratio_ci_low": low,
            "ratio_ci_high": high, "dropped_at": dropped_at, "reason": reason,
            "status": status, "decision": decision, "target": question.target,
            "workload": question.job, "op": question.op, "metric": question.metric,
            "geomean": math.exp(sum(logs) / len(logs)) if logs else math.nan,
            "changes": space.changes(config), "unsafe": ", ".join(unsafe)}


def _status(answer: Answer, stage: str, config: Config, dropped_at: int | None) -> str:
    reference = answer.space.reference
    if stage == CONFIRM:
        if config == answer.winner:
            return "winner"
        return "reference" if config == reference else "candidate"
    if stage == RACE:
        if dropped_at is not None:
            return "dropped"
        if config == answer.race.winner:
            return "winner"
        if config == reference:
            return "reference"
        # alive at the end: proven the same only when that ended the race
        return "same" if answer.race.ended == SAME else "survived"
    if config == reference:
        return "reference"
    fixed = {s.index for s in answer.screened if not s.kept}
    return "fixed" if any(config[i] for i in fixed) else "screened"


def _against(groups: Groups, config: Config, reference: Config, better: str,
             answer: Answer) -> tuple[float, float, float, str]:
    """config/reference on one stage's data, paired by round, its own 95 % interval,
    and the rule's decision (an estimate outside the confirmation)."""
    if config == reference or reference not in groups or config not in groups:
        return (1.0, math.nan, math.nan, "") if config == reference else \
            (math.nan, math.nan, math.nan, "")
    found = compare({"a": groups[reference], "b": groups[config]}, True, family=1)
    if isinstance(found, str):
        return math.nan, math.nan, math.nan, "unresolved"
    (pair,) = found.pairs
    ratio, low, high = turned(pair.ratio, pair.ratio_ci_low, pair.ratio_ci_high)
    answer_word = decided(pair.estimable, pair.significant, ratio, low, high, better,
                          _margin(answer))
    return ratio, low, high, {"equivalent": "same"}.get(answer_word, answer_word)


def _margin(answer: Answer) -> float:
    return answer.margin


def sentence(answer: Answer, margin: float) -> str:
    """The answer in words: 'randwrite on ext4: noatime, commit=60 is 1.31× faster than
    the reference (95 % CI 1.18–1.46×)', 'no configuration beats the reference by more
    than ±5 %', or 'not resolved (needs N iterations)'."""
    space, question, confirmed = answer.space, answer.question, answer.confirmed
    head = f"{question.job} on {question.target}"
    challenger = space.describe(answer.challenger)
    interval = (f"95 % CI {format_bound(confirmed.low)}–{format_bound(confirmed.high)}×"
                if confirmed.low == confirmed.low else "no interval")
    unsafe = unsafe_note(space, answer.winner)
    if answer.challenger == space.reference:
        return f"{head}: nothing but the reference was measured to confirm"
    if confirmed.decision == "faster":
        return (f"{head}: {challenger} is {confirmed.ratio:.3g}× better than the reference "
                f"({interval}){unsafe}")
    if confirmed.decision == "same":
        return (f"{head}: no configuration beats the reference by more than ±{margin:.0%} "
                f"(the strongest, {challenger}: {confirmed.ratio:.3g}×, {interval})")
    if confirmed.decision == "slower":
        return (f"{head}: the reference stays: the race's best, {challenger}, is "
                f"{confirmed.ratio:.3g}× the reference on fresh data ({interval})")
    needs = confirmed.needs
    more = (f"needs {needs:.0f} iterations" if math.isfinite(needs) else
            "more than 100 iterations would not resolve it at this spread")
    return (f"{head}: not resolved ({more}): {challenger} {confirmed.ratio:.3g}× the "
            f"reference ({interval}); the reference stays")


def unsafe_note(space: Space, config: Config) -> str:
    """'; UNSAFE: nobarrier risks acknowledged data …' where the winner uses one."""
    found = [(f.levels[i], entry) for f, i in zip(space.factors, config, strict=True)
             if i and (entry := unsafe_of(f.name, f.levels[i], f.reference, ["null"]))]
    return "".join(f"; UNSAFE: {level} ({entry.why}; {entry.source})"
                   for level, entry in found)


def commands(campaign: Campaign, space: Space, answer: Answer) -> list[str]:
    """What a person types to set the winner up: the mkfs line, the mount -o line (and
    fstab's options), the zfs set lines, the fio options."""
    from fslab.plan.target_factors import is_target_factor, with_level

    spec = next(t for t in campaign.targets if t.name == answer.question.target)
    levels = space.levels(answer.winner)
    tuned = spec
    for name, level in levels.items():
        if is_target_factor(name) and level:
            tuned = with_level(tuned, name, level)
    out = []
    mkfs = _mkfs_tool(tuned.fs)
    if mkfs and (tuned.mkfs_options or any(n.startswith("mkfs_options") for n in levels)):
        out.append(f"{mkfs} {' '.join(tuned.mkfs_options)} DEVICE".replace("  ", " "))
    if tuned.mount_options:
        out.append(f"mount -o {tuned.mount_options} DEVICE MOUNTPOINT   "
                   f"(fstab options: {tuned.mount_options})")
    out += [f"zfs set {name[len('zfs.'):]}={level} POOL/DATASET"
            for name, level in levels.items() if name.startswith("zfs.")]
    fio = [f"{name}={level}" for name, level in levels.items() if not is_target_factor(name)]
    if fio:
        out.append("fio options: " + " ".join(fio))
    return out or ["the reference: nothing to change"]


def _mkfs_tool(fs: str) -> str:
    from fslab.targets.profiles import PROFILES

    profile = PROFILES.get(fs)
    return profile.mkfs if profile is not None else ("mkfs (the simulator)" if fs == "null"
                                                     else "")


def tuned_campaign(campaign: Campaign, answers: list[Answer]) -> dict[str, Any]:
    """stats/tuned.toml: the campaign with each question's winner as a target (its mount
    and mkfs options and zfs properties set) beside the reference it beat, and the
    winners' job options: `fslab run stats/tuned.toml` measures the answer again."""
    import dataclasses

    from fslab.plan.target_factors import is_target_factor, with_level

    targets, options = [], {}
    for answer in answers:
        base = next(t for t in campaign.targets if t.name == answer.question.target)
        suffix = "" if len(answers) == 1 else f"-{answer.question.job}"
        configs = [(answer.winner, f"{base.name}-tuned{suffix}")]
        if answer.winner != answer.space.reference:
            configs.insert(0, (answer.space.reference, f"{base.name}-reference{suffix}"))
        for config, name in configs:
            spec = base
            for factor, level in answer.space.levels(config).items():
                if is_target_factor(factor):
                    if level:
                        spec = with_level(spec, factor, level)
                elif config == answer.winner:
                    options[factor] = level
            targets.append(dataclasses.replace(spec, name=name, levels=(), variant_of=""))
    workloads = [w.model_copy(update={"options": {**w.options, **options}})
                 for w in campaign.workloads]
    tuned = dataclasses.replace(campaign, name=f"{campaign.name}-tuned", targets=targets,
                                workloads=workloads, sweep={}, target_sweeps={}, cells=[],
                                factor_scopes={}, looks=[], look_cells=[], out=None)
    written = tuned.to_dict()
    written.pop("tune", None)  # the answer, not the question: a campaign to run
    return written


def write(out: Path, campaign: Campaign, answers: list[Answer], margin: float) -> list[str]:
    """Write stats/tune.csv and stats/tuned.toml under `out`; the lines to print."""
    import tomli_w

    from fslab.results.store import write_atomic

    stats = out / "stats"
    stats.mkdir(parents=True, exist_ok=True)
    write_atomic(stats / "tune.csv", tune_table(answers).to_csv(index=False))
    write_atomic(stats / "tuned.toml", tomli_w.dumps(tuned_campaign(campaign, answers)))
    lines = []
    for answer in answers:
        lines.append(sentence(answer, margin))
        lines += [f"  {text}" for text in (s.text for s in answer.screened)]
        lines.append(f"  race: {len(answer.candidates)} configurations, "
                     f"{answer.race.rounds} rounds; {answer.race.ended}")
        unmeasured = {c: why for path in answer.stages.values()
                      for c, why in unmeasured_of(path, answer.space).items()}
        lines += [f"  {answer.space.describe(c)}: not measured ({why})"
                  for c, why in sorted(unmeasured.items())]
        lines += [f"  {line}" for line in commands(campaign, answer.space, answer)]
    return lines


def page_tables(answers: list[Answer]) -> dict[str, pd.DataFrame]:
    """What the tune's page draws (report/tune_page.py), as tables: the screen's effects,
    each race configuration's interval after every round (dropped ones marked), and the
    confirmation of the winner against the reference."""
    import pandas as pd

    from fslab.analysis.cells.stats import log_ci

    effects, race, confirmations = [], [], []
    for answer in answers:
        space, question = answer.space, answer.question
        head = f"{question.job} on {question.target}"
        for screened in answer.screened:
            factor = space.factors[screened.index]
            for level, (ratio, low, high) in sorted(screened.effects.items()):
                effects.append({"question": head, "factor": factor.name,
                                "level": level_label(factor.name, factor.levels[level]),
                                "reference": level_label(factor.name, factor.reference),
                                "ratio": ratio, "low": low, "high": high,
                                "kept": screened.kept})
        if RACE in answer.stages:
            groups = groups_of(answer.stages[RACE], space, question)
            for config, values in groups.items():
                dropped = answer.race.dropped.get(config, (None, ""))[0]
                for last in range(1, max(values) + 1):
                    seen = [v for i, v in values.items() if i <= last]
                    interval = log_ci(seen)
                    race.append({"question": head, "configuration": space.describe(config),
                                 "round": last, "geomean": interval.center,
                                 "low": interval.ci_low, "high": interval.ci_high,
                                 "dropped_at": dropped,
                                 "winner": config == answer.race.winner})
        confirmed = answer.confirmed
        confirmations.append({"question": head,
                              "challenger": space.describe(answer.challenger),
                              "ratio": confirmed.ratio, "low": confirmed.low,
                              "high": confirmed.high, "decision": confirmed.decision,
                              "winner": space.describe(answer.winner),
                              "metric": question.metric})
    return {"effects": pd.DataFrame(effects), "race": pd.DataFrame(race),
            "confirm": pd.DataFrame(confirmations)}
