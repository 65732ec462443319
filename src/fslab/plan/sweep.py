"""Sweeps: options and load levels as factors of one design.

A factor is a name and its levels, from `--sweep NAME=V1,V2` (repeatable), a campaign's
`[sweep]` table, or a list a `[[target]]` table gives for one of its own options. Its name
says what it sets:

    mount_options, mkfs_options   a kernel file system's (added to the target's own)
    mount_options.KEY, ...        one mount (mkfs) option each, KEY the user's label
    zfs.PROPERTY                  a zfs dataset property (zfs set), or zfs.ashift
    scale                         the simulator target's true ratio (fs = "null")
    age                           an aging level, aged after mkfs (workloads/aging_levels.py)
    (the factors of targets are declared in plan/target_factors.py)
    anything else                 an option of the workloads that take it: a fio job
                                  option (iodepth, numjobs, bs, ioengine, rw, direct …)
                                  for fio presets, the simulator's own (iops, tag) …

The plan is the product of the levels. Target factors make variants of a target (each its
own fresh file system per iteration, as targets are); workload factors make variants of a
job, measured in the same interleaved rounds as the targets. Each cell is named by its
levels ("ext4 mount_options=noatime", "randread iodepth=16") everywhere it is printed; the
levels are columns of the metrics and runs tables (a factor's own name). A factor with one
level sets that option for the campaign and names nothing. A factor that cannot have an
effect is refused before anything is formatted (check_sweep).
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fslab.core.age_factor import AGE
from fslab.core.cell_keys import Level, cell_name, path_name, shown
from fslab.core.errors import UserError
from fslab.core.metrics import COLUMNS
from fslab.plan.levels import ZFS_PREFIX, level_text
from fslab.plan.target_factors import is_target_factor, takers, takes_target_factor, with_level
from fslab.plan.workload_entries import build_entry
from fslab.targets import TargetSpec
from fslab.targets.zfs import DATASET_PROPERTIES
from fslab.workloads.aging_levels import check_levels, with_twins
from fslab.workloads.fio import FioWorkload
from fslab.workloads.suites import get_suite

if TYPE_CHECKING:
    from fslab.plan.schema import Campaign, WorkloadEntry
    from fslab.workloads.base import Workload

# What may not name a factor: the metrics table's own columns (a factor is a column too).
RESERVED = frozenset(COLUMNS) | {"status", "reason", "levels"}


@dataclass(frozen=True)
class Factor:
    """One swept option: its name, its levels in the order given (the first is the
    reference of every effect), and the target whose own list it is ('' = everyone's)."""

    name: str
    levels: tuple[str, ...]
    target: str = ""

    @property
    def on_targets(self) -> bool:
        return is_target_factor(self.name)

    @property
    def reference(self) -> str:
        return self.levels[0]


@dataclass(frozen=True)
class WorkloadVariant:
    """A workload as the plan runs it: its job, and the levels that make it a variant of
    it (its name is rendered from both: core/cell_keys.cell_name)."""

    workload: Workload
    job: str
    levels: tuple[Level, ...] = ()


def campaign_factors(sweep: dict[str, list[Any]],
                     local: dict[str, dict[str, list[Any]]]) -> list[Factor]:
    """Every factor of a campaign, checked: the [sweep] table's, then each target's own."""
    factors = [_factor(name, levels, "") for name, levels in sweep.items()]
    for target, lists in local.items():
        factors += [_factor(name, levels, target) for name, levels in lists.items()]
    return factors


def _factor(name: str, values: list[Any], target: str) -> Factor:
    where = f"target {target}: " if target else "--sweep "
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)?", name) \
            or name in RESERVED:
        raise UserError(f"{where}{name!r} cannot name a factor (a fio job option, "
                        "mount_options, mkfs_options, mount_options.KEY, mkfs_options.KEY, "
                        "zfs.PROPERTY or a preset's option)")
    if not isinstance(values, list) or not values:
        raise UserError(f"{where}{name}: give a list of levels, e.g. [1, 8, 32]")
    levels = tuple(level_text(v) for v in values)
    for level in levels:  # a target's level names no job: any character goes there
        if "/" in level and not is_target_factor(name):
            raise UserError(f"{where}{name}: level {level!r} has a '/', which separates a "
                            "job from its fio section in results")
    repeated = sorted({level for level in levels if levels.count(level) > 1})
    if repeated:
        raise UserError(f"{where}{name}: level {shown(repeated[0])} is given twice (each "
                        "level once)")
    return Factor(name, levels, target)


def swept(factors: list[Factor]) -> list[Factor]:
    """The factors with two levels or more (one level sets an option and names nothing)."""
    return [f for f in factors if len(f.levels) > 1]


# Targets ------------------------------------------------------------------------------


def target_variants(campaign: Campaign, variants: list[WorkloadVariant] | None = None
                    ) -> list[TargetSpec]:
    """Every target the plan runs: each declared target once per combination of the
    levels of the factors that change it (named by them), one-level factors applied.
    An `age` factor with `fresh` adds each aged level's fresh twin when one of the
    workload variants (the campaign's, unless given) reads the aged tree
    (workloads/aging_levels.with_twins)."""
    found = variants if variants is not None else workload_variants(campaign)
    reads_tree = any(v.workload.reads_tree for v in found)
    factors = [dataclasses.replace(f, levels=with_twins(f.levels, reads_tree))
               if f.name == AGE else f
               for f in campaign_factors(campaign.sweep, campaign.target_sweeps)]
    out = []
    for spec in campaign.targets:
        own = [f for f in factors if f.on_targets and f.target in ("", spec.name)
               and (f.target or takes_target_factor(f.name, spec))]
        for factor in own:
            if factor.target and not takes_target_factor(factor.name, spec):
                raise UserError(f"target {spec.name}: {factor.name} cannot be swept on "
                                f"{spec.fs}")
        base = spec
        for factor in own:
            if len(factor.levels) == 1:
                base = with_level(base, factor.name, factor.levels[0])
        varied = swept(own)
        for combination in itertools.product(*(f.levels for f in varied)):
            levels = tuple(zip((f.name for f in varied), combination, strict=True))
            variant = base
            for name, level in levels:
                variant = with_level(variant, name, level)
            out.append(dataclasses.replace(variant, name=cell_name(spec.name, levels),
                                           levels=levels, variant_of=spec.name)
                       if levels else variant)
    return out


# Workloads ----------------------------------------------------------------------------


def takes_workload_factor(entry: WorkloadEntry, name: str) -> bool:
    """Whether a workload entry has an option of this name (a job file runs as written)."""
    if not entry.preset:
        return False

    return get_suite(entry.preset).takes(name)


def workload_variants(campaign: Campaign) -> list[WorkloadVariant]:
    """Every workload the plan runs: each job once per combination of the levels of the
    workload factors its entry takes (named by them), one-level factors applied."""
    factors = [f for f in campaign_factors(campaign.sweep, {}) if not f.on_targets]
    out = []
    for entry in campaign.workloads:
        own = [f for f in factors if takes_workload_factor(entry, f.name)]
        fixed = {f.name: f.levels[0] for f in own if len(f.levels) == 1}
        varied = swept(own)
        for combination in itertools.product(*(f.levels for f in varied)):
            levels = tuple(zip((f.name for f in varied), combination, strict=True))
            options = {**entry.options, **fixed, **dict(levels)}
            for workload in build_entry(campaign, entry.model_copy(update={"options": options})):
                out.append(_named(workload, levels))
    return out


def _named(workload: Workload, levels: tuple[Level, ...]) -> WorkloadVariant:
    if not levels:
        return WorkloadVariant(workload, workload.name)

    changes: dict[str, object] = {"name": cell_name(workload.name, levels)}
    if isinstance(workload, FioWorkload):  # fio's section keeps the job's own name
        changes["section_name"] = workload.section_name or workload.name
    return WorkloadVariant(dataclasses.replace(workload, **changes),  # type: ignore[type-var]
                           workload.name, levels)


# Checks -------------------------------------------------------------------------------


def check_sweep(campaign: Campaign) -> None:
    """Refuse, in one line and before anything is formatted, a factor that cannot change
    anything: one no target or workload takes, a zfs property zfs does not have, iodepth
    above 1 where every engine it would run with is synchronous, cells whose names
    collide as file names."""
    factors = campaign_factors(campaign.sweep, campaign.target_sweeps)
    if not factors:
        return

    for factor in factors:
        if factor.name == AGE:
            check_levels(factor.levels, campaign.age_levels)
        if factor.name.startswith(ZFS_PREFIX):
            key = factor.name[len(ZFS_PREFIX):]
            if key not in DATASET_PROPERTIES | {"ashift"}:
                raise UserError(f"--sweep {factor.name}: zfs has no property {key!r} here "
                                f"(known: {', '.join(sorted(DATASET_PROPERTIES))}, ashift)")
        if factor.target:
            continue
        if factor.on_targets:
            if not any(takes_target_factor(factor.name, t) for t in campaign.targets):
                raise UserError(f"--sweep {factor.name}: no target of this campaign takes it "
                                f"({takers(factor.name)})")
        elif not any(takes_workload_factor(e, factor.name) for e in campaign.workloads):
            raise UserError(f"--sweep {factor.name}: no workload of this campaign has an "
                            f"option {factor.name} (fio presets take fio job options; "
                            "`fslab presets` lists each preset's)")
    variants = workload_variants(campaign)
    _check_iodepth(factors, variants)
    _check_names(target_variants(campaign, variants), variants)


def _check_iodepth(factors: list[Factor], variants: list[WorkloadVariant]) -> None:
    """iodepth above 1 does nothing where the engine does one I/O at a time (fio's HOWTO):
    refused unless some swept cell queues (an asynchronous engine, swept or set)."""
    depth = next((f for f in swept(factors) if f.name == "iodepth"), None)
    if depth is None or not any(_number(level) > 1 for level in depth.levels):
        return
    deep = [v.workload for v in variants if isinstance(v.workload, FioWorkload)
            and _number(dict(v.levels).get("iodepth", "1")) > 1]
    why = [w.queues() for w in deep]
    if deep and all(why):
        raise UserError(f"--sweep iodepth: iodepth above 1 has no effect here: {why[0]}; "
                        "set or sweep an asynchronous engine with direct I/O (--sweep "
                        "ioengine=libaio) or sweep numjobs instead")


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return float("nan")


def _check_names(targets: list[TargetSpec], variants: list[WorkloadVariant]) -> None:
    for kind, names in (("targets", [t.name for t in targets]),
                        ("workloads", [v.workload.name for v in variants])):
        paths = [path_name(n) for n in names]
        clash = sorted({n for n, p in zip(names, paths, strict=True) if paths.count(p) > 1})
        if clash:
            raise UserError(f"{kind} {', '.join(clash)}: their levels give the same file "
                            "name; name the levels apart")

