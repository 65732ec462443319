"""A tune's answer in words and in what a person types next: the sentence, one line per
option (change or keep, its contribution on fresh data), the set the race could not tell
from the best, the machine time each stage took, the mkfs line, the mount -o line, the
zfs set lines, the fio options, and stats/tuned.toml (the campaign with the
recommendation beside the reference, to run again)."""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING

from fslab.analysis.sittings.looks import PLANNED
from fslab.analysis.sittings.words import HOLDS_NEXT
from fslab.core.cell_keys import level_label
from fslab.core.units import format_bound, format_duration
from fslab.targets.profiles import PROFILES
from fslab.targets.zfs_pool import MiB, build_of
from fslab.tune import words
from fslab.tune.carry import THIS_SITTINGS, WHOLE, Carried
from fslab.tune.measure import Unmeasured
from fslab.tune.race import DROPPED, OVER_BOUND
from fslab.tune.screen import WITHIN
from fslab.tune.space import Config, Configuration, Space
from fslab.tune.tuner import Tuned
from fslab.tune.unsafe import unsafe_of

if TYPE_CHECKING:
    from fslab.analysis.sittings.spread import SittingEstimate
    from fslab.plan.schema import Campaign
    from fslab.targets import TargetSpec

SET_SHOWN = 6  # members of the set listed by name; the rest counted


def sentence(one: Tuned) -> str:
    """'randwrite on ext4: -I 128 is 1.06× the reference (95 % CI 1.03–1.09×: at least
    1.03× better), measured as it stands', 'no option earned its place …', …"""
    space, confirmation = one.space, one.confirmation
    head = f"{one.question.job} on {one.question.target}"
    recommended = confirmation.recommended
    better = one.question.better
    if confirmation.challenger == space.reference:
        found = "the race could not tell any configuration from the reference" \
            if one.race.entries else "the screen supported no change worth confirming"
        return f"{head}: {found}; the reference stays"
    if recommended == space.reference:
        bundle = confirmation.bundle
        said = (f" ({space.describe(confirmation.challenger)}: {bundle.ratio:.3g}× the "
                f"reference, 95 % CI {words.interval(bundle, better)}: "
                f"{words.shown(bundle, better, one.margin)})") if bundle is not None else ""
        return f"{head}: no option earned its place on fresh data; the reference stays{said}"
    answer = confirmation.recommended_answer
    assert answer is not None
    said = words.headline(space.describe(recommended), answer, better, one.margin)
    chose = (", on the rounds that chose it (it may read high: `fslab tune --again DIR` "
             "measures it in a sitting that did not choose it)"
             if confirmation.chosen_on_headline else "")
    return (f"{head}: {said}, measured as it stands{chose}"
            f"{unsafe_note(space, recommended)}{_whole_next(one)}")


def _whole_next(one: Tuned) -> str:
    """'; next sitting 1.02–1.5×' of the whole configuration, where a history says it."""
    carry = one.carried.get(WHOLE)
    if carry is None or math.isnan(carry.next_low):
        return ""
    _, low, high = words.directed(carry.ratio, carry.next_low, carry.next_high,
                                  one.question.better)
    return f"; next sitting {format_bound(low)}–{format_bound(high)}× (this host's history)"


def best_line(one: Tuned) -> list[str]:
    """The recommendation against the race's best, measured beside it (item 4)."""
    confirmation = one.confirmation
    answer = confirmation.against_best
    best = confirmation.best
    if answer is None or best is None or best == confirmation.recommended:
        if best is not None and best == confirmation.recommended:
            return ["it is the race's best"]
        return []
    said = (f"{one.space.describe(best)}: {words.advantage(answer, one.question.better)[0]:.3g}×"
            f" of it, 95 % CI {words.interval(answer, one.question.better)}")
    if confirmation.within_best(one.margin):
        return [f"within ±{one.margin:.0%} of the race's best ({said})"]
    return [f"not shown within ±{one.margin:.0%} of the race's best ({said})"]


def lines(one: Tuned, campaign: Campaign) -> list[str]:
    """Everything printed of one question, the sentence first."""
    space = one.space
    out = [sentence(one)]
    out += [f"  {line}" for line in best_line(one)]
    judged = {c.factor: c for c in one.confirmation.contributions}
    better = one.question.better
    if judged:
        out.append("  each option's share (the configuration with it against without it):")
    for index, factor in enumerate(space.factors):
        keep = level_label(factor.name, factor.reference)
        if index in judged:
            out.append("  " + words.option_line(space, judged[index],
                                                one.confirmation.verdict(index), better,
                                                one.margin, one.carried.get(index)))
        elif one.screen is not None and one.screen.factors[index].verdict == WITHIN:
            out.append(f"  {factor.name}: no effect within ±{one.margin:.0%} at any level "
                       f"in the screen; keep {keep} ({words.no_effect(one.margin)})")
        else:
            out.append(f"  {factor.name}: not in the configuration confirmed"
                       f"{_screened(one, index)}; keep {keep} ({words.NOT_CONFIRMED})")
    out += [f"  {note}" for note in one.confirmation.notes]
    spent = one.confirmation.twin_rounds
    if spent:
        out.append(f"  near twins measured beside the recommendation in {len(spent)} more "
                   f"rounds ({spent.start}–{spent.stop - 1}) to show them alternatives")
    out += [f"  {line}" for line in carry_note(one)]
    out += [f"  {line}" for line in latency_lines(one)]
    out += ["  " + line for line in set_lines(one)]
    out.append("  " + race_line(one))
    if one.plan is not None and one.plan.given_up:
        out.append("  the budget's plan gave up " + "; ".join(one.plan.given_up))
    out += [f"  {space.describe(c)}: not measured ({why})"
            for c, why in sorted(_unmeasured(one).items())]
    out.append("  " + time_line(one))
    out += [f"  {line}" for line in commands(campaign, one)]
    return out


def carry_note(one: Tuned) -> list[str]:
    """What the answer says of the next sitting, once: without a history of option
    effects, that it is this sitting's and how to get one that carries."""
    if one.confirmation.recommended == one.space.reference or one.history:
        return []
    if not any(c.verdict == THIS_SITTINGS for c in one.carried.values()):
        return []
    return [f"{THIS_SITTINGS}: nothing on this host says how far an option's effect moves "
            f"between sittings (no tune of it sat twice in a catalogue); `{words.AGAIN} "
            "--catalogue C` measures the recommendation in another sitting and says what "
            "holds next time, and a tune given --catalogue C after that says it in one "
            "sitting"]


def carry_lines(head: str, space: Space, recommended: Config, found: dict[int, Carried],
                each: list[dict[int, SittingEstimate]], better: str) -> list[str]:
    """`fslab tune --again`: the whole configuration and each option's share over the
    sittings, decided on those after the one that chose (tune/carry.py), the first
    sitting's own figure beside it."""
    if not found:
        return [f"{head}: no sitting measured the recommendation beside its contrasts"]
    any_one = next(iter(found.values()))
    out = [f"{head}: {space.describe(recommended)} over {any_one.sittings} sittings, "
           f"decided on the {any_one.later} after the one that chose it (α spent over "
           f"{PLANNED} planned sittings; the spread between sittings: "
           f"{SOURCES.get(any_one.source, any_one.source)})"]
    alone = sum(1 for v in recommended if v) == 1  # its one share is the whole gain
    for key in [WHOLE, *sorted(k for k in found if k != WHOLE)]:
        if key not in found or (alone and key == WHOLE and len(found) > 1):
            continue
        factor = space.factors[max(key, 0)]
        name = ("the whole configuration (against the reference)" if key == WHOLE else
                f"{factor.name} {level_label(factor.name, factor.levels[recommended[key]])}"
                + (" (its share, the whole configuration's gain)" if alone else
                   " (its share)"))
        said = _over_sittings(found[key], [s.get(key) for s in each], better)
        out.append(f"  {name}: {said}")
    return out


SOURCES = {"history": "this host's history of option effects",
           "stated prior": "the stated prior τ0 = 0.05 on 2 df (no history of option effects "
                           "on this host)",
           "stated prior: history not borrowed": "the stated prior: these sittings disagree "
                                                 "with this host's history, so it was not "
                                                 "borrowed"}


def _over_sittings(carry: Carried, each: list[SittingEstimate | None], better: str) -> str:
    """'1.14× on average over 2 sittings (CI 1.08–1.2×), faster; next sitting
    1.0–1.34×: holds next time; each sitting: 1.23× (chose it), 1.12×, 1.16×'."""
    ratio, low, high = words.directed(carry.ratio, carry.low, carry.high, better)
    _, next_low, next_high = words.directed(carry.ratio, carry.next_low, carry.next_high,
                                            better)
    said = (f"{ratio:.3g}× on average over {carry.later} sitting"
            f"{'s' * (carry.later != 1)} (CI {format_bound(low)}–{format_bound(high)}×), "
            f"{carry.decision}; next sitting {format_bound(next_low)}–"
            f"{format_bound(next_high)}×: {carry.verdict}")
    if carry.verdict != HOLDS_NEXT:
        said += f" — {words.sittings_words(carry)}"
    if carry.decided_at:
        said += f"; decided at sitting {carry.decided_at}"
    return f"{said}; each sitting: {sitting_shares(each, better)}"


def sitting_shares(each: list[SittingEstimate | None], better: str) -> str:
    """'1.23× (chose it), 1.12×, not measured': each sitting's own estimate, in order."""
    shown = []
    for number, one in enumerate(each, start=1):
        own = words.directed(math.exp(one.estimate), math.nan, math.nan, better)[0] \
            if one is not None else math.nan
        said = "not measured" if one is None else f"{own:.3g}×"
        shown.append(f"{said} (chose it)" if number == 1 else said)
    return ", ".join(shown)


def latency_lines(one: Tuned) -> list[str]:
    """Each bound against the recommendation's next fresh file system, and the
    reference's own standing (tune/latency.py)."""
    standing = one.confirmation.standing
    out = [f"the recommendation: {s.text()}" for s in standing.get("recommended", [])
           if one.confirmation.recommended != one.space.reference]
    out += [f"the reference: {s.text()}" for s in standing.get("reference", [])]
    return out


def _screened(one: Tuned, index: int) -> str:
    """' (the screen: data=journal 0.648×, CI 0.575–0.73×)': what the screen saw of a
    factor the winner left at its reference ('' without a screen)."""
    if one.screen is None or not one.screen.factors[index].effects:
        return ""
    factor = one.space.factors[index]
    shown = "; ".join(f"{level_label(factor.name, factor.levels[level])} {r:.3g}×, CI "
                      f"{lo:.3g}–{hi:.3g}×" for level, (r, lo, hi) in
                      sorted(one.screen.factors[index].effects.items()))
    return f" (the screen: {shown})"


def set_lines(one: Tuned) -> list[str]:
    """The set in one line: its members by their changes, the winner first, each ratio
    labelled as to the race's best (selected as the best of noisy centres: the others
    read low beside it); then how the winner was shown (tune/race.py)."""
    final, space = one.race.final, one.space
    members = one.race.members()
    if final is None or not members:
        return []
    shown = []
    for config in sorted(members, key=lambda c: (c != one.race.winner, space.changes(c), c)):
        answer = final.against.get(config)
        ratio = "the race's best" if config == final.best else (
            f"{answer.ratio:.3g}× (CI {answer.ratio_ci_low:.3g}–{answer.ratio_ci_high:.3g}×)"
            if answer else "")
        shown.append(f"{space.describe(config)} {ratio}".strip())
    more = f"; {len(shown) - SET_SHOWN} more in tune_set.csv" if len(shown) > SET_SHOWN else ""
    out = [f"set ({len(members)} the race could not tell from its best, the winner first; "
           "ratios to the race's best, selected as the best of the race's centres, so the "
           "others read low beside it): " + "; ".join(shown[:SET_SHOWN]) + more]
    winner = one.race.winner
    if winner is not None and len(members) > 1:
        out.append(f"the winner, {space.describe(winner)}, is shown within ±{one.margin:.0%} "
                   "of every member of the set (multiple comparisons with the best)"
                   if winner in one.race.equivalent else
                   f"the winner is the race's best: no simpler member was shown within "
                   f"±{one.margin:.0%} of every member of the set")
    challenger = one.confirmation.challenger
    if one.race.winner == space.reference and challenger != space.reference:
        out.append(f"the set holds the reference: its best, {space.describe(challenger)}, "
                   "went to the confirmation")
    return out


def race_line(one: Tuned) -> str:
    """'race: 12 configurations (3 proposed near the leaders; 4 dropped behind the best,
    1 for breaking a bound), 8 rounds; …' — the two kinds of drop apart (their error
    budgets are apart: tune/against_best.py)."""
    if not one.race.entries:
        return f"race: {one.race.ended}"
    entries = one.race.entries.values()
    refilled = sum(1 for e in entries if e.proposed_by.startswith("refill"))
    behind = sum(1 for e in entries if e.dropped_at and e.status == DROPPED)
    over = sum(1 for e in entries if e.dropped_at and e.status == OVER_BOUND)
    bound = f", {over} for breaking a bound" if one.space.bounds else ""
    return (f"race: {len(one.race.entries)} configurations ({refilled} proposed near the "
            f"leaders; {behind} dropped behind the best{bound}), {one.race.rounds} rounds; "
            f"{one.race.ended}")


def time_line(one: Tuned) -> str:
    """Machine seconds of each stage's runs (what the answer cost)."""
    parts = []
    stages = [("screen", one.screen.measured if one.screen else None),
              ("race", one.race.measured), ("confirm", one.confirmation.measured)]
    for name, measured in stages:
        if measured is not None and measured.seconds:
            parts.append(f"{name} {format_duration(sum(measured.seconds.values()))}")
    return "machine time: " + (", ".join(parts) if parts else "not recorded")


def _unmeasured(one: Tuned) -> dict[Config, Unmeasured]:
    found: dict[Config, Unmeasured] = {}
    for measured in (one.screen.measured if one.screen else None, one.race.measured,
                     one.confirmation.measured):
        if measured is not None:
            found.update({c: w for c, w in measured.unmeasured.items()
                          if not measured.values.get(c)})
    return found


def unsafe_note(space: Space, config: Config) -> str:
    """'; UNSAFE: nobarrier (…)' where a configuration uses one."""
    found = [(f.levels[i], entry) for f, i in zip(space.factors, config, strict=True)
             if i and (entry := unsafe_of(f.name, f.levels[i], f.reference, ["null"]))]
    return "".join(f"; UNSAFE: {level} ({entry.why}; {entry.source})"
                   for level, entry in found)


def commands(campaign: Campaign, one: Tuned) -> list[str]:
    """What a person types to set the recommendation up: the mkfs line, the mount -o
    line (and fstab's options), the zfs set lines, the fio options."""
    spec = next(t for t in campaign.targets if t.name == one.question.target)
    chosen = Configuration(one.space, one.confirmation.recommended)
    levels, tuned = chosen.levels, chosen.target(spec)
    out = []
    mkfs = _mkfs_tool(tuned.fs)
    if mkfs and (tuned.mkfs_options or any(n.startswith("mkfs_options") for n in levels)):
        out.append(f"{mkfs} {' '.join(tuned.mkfs_options)} DEVICE".replace("  ", " "))
    if tuned.mount_options:
        out.append(f"mount -o {tuned.mount_options} DEVICE MOUNTPOINT   "
                   f"(fstab options: {tuned.mount_options})")
    out += pool_commands(tuned, [name for name, level in levels.items() if level])
    out += [f"zfs set {name[len('zfs.'):]}={level} POOL/DATASET"
            for name, level in levels.items() if name.startswith("zfs.")]
    fio = [f"{name}={level}" for name, level in chosen.job_options().items()]
    if fio:
        out.append("fio options: " + " ".join(fio))
    return out or ["the reference: nothing to change"]


def pool_commands(tuned: TargetSpec, factors: list[str]) -> list[str]:
    """What a person types for a tuned zfs pool's build: the zpool create line when its
    layout, devices, log or cache device was a factor, and the ARC's maximum."""
    out: list[str] = []
    if tuned.fs not in ("zfs", "zfs-mirror"):
        return out
    build = build_of(tuned)
    if {"layout", "devices", "log_size", "cache_size"} & set(factors):
        disks = [f"DISK{i + 1}" for i in range(build.devices)]
        out.append("zpool create POOL " + " ".join(build.vdevs(
            disks, "LOGDEV" if build.log_size else "", "CACHEDEV" if build.cache_size else ""))
            + f"   ({build.shown()})")
    if "arc_max" in factors and build.arc_max:
        out.append(f"zfs-fuse --max-arc-size {build.arc_max // MiB} (or max-arc-size = "
                   f"{build.arc_max // MiB} in /etc/zfs/zfsrc); kernel OpenZFS: echo "
                   f"{build.arc_max} > /sys/module/zfs/parameters/zfs_arc_max")
    return out


def _mkfs_tool(fs: str) -> str:
    profile = PROFILES.get(fs)
    return profile.mkfs if profile is not None else ("mkfs (the simulator)" if fs == "null"
                                                     else "")


def tuned_campaign(campaign: Campaign, tuned: list[Tuned]) -> dict[str, object]:
    """stats/tuned.toml: the campaign with each question's recommendation as a target
    (its mount and mkfs options and zfs properties set) beside the reference, and the
    recommendation's job options: `fslab run stats/tuned.toml` measures the answer again."""
    targets, options = [], {}
    for one in tuned:
        base = next(t for t in campaign.targets if t.name == one.question.target)
        suffix = "" if len(tuned) == 1 else f"-{one.question.job}"
        recommended = one.confirmation.recommended
        configs = [(recommended, f"{base.name}-tuned{suffix}")]
        if recommended != one.space.reference:
            configs.insert(0, (one.space.reference, f"{base.name}-reference{suffix}"))
        for config, name in configs:
            configuration = Configuration(one.space, config)
            if config == recommended:
                options.update(configuration.job_options())
            targets.append(dataclasses.replace(configuration.target(base), name=name,
                                               levels=(), variant_of=""))
    workloads = [w.model_copy(update={"options": {**w.options, **options}})
                 for w in campaign.workloads]
    again = dataclasses.replace(campaign, name=f"{campaign.name}-tuned", targets=targets,
                                workloads=workloads, sweep={}, target_sweeps={}, cells=[],
                                factor_scopes={}, looks=[], look_cells=[], out=None)
    written = again.to_dict()
    written.pop("tune", None)  # the answer, not the question: a campaign to run
    return written
