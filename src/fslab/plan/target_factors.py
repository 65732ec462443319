"""The factors of targets, declared in one place: each one's name (or prefix), which
targets take it, and what one of its levels does to a target. A new factor of the
targets is one entry of TARGET_FACTORS.

    mount_options             added to the target's own mount options
    mount_options.KEY         one mount option (KEY is the user's label: atime, commit …)
    mkfs_options              added to the target's own mkfs options
    mkfs_options.KEY          one mkfs option ('-I 256')
    age                       an aging level (workloads/aging_levels.py): the file system is
                              aged after mkfs, before the runs on it (run/aging_places.py)
    fstrim                    trimmed (true: fstrim at an aging's probes and before each
                              run, the aging thesis's section 7.7) or never (false)
    scale                     the simulator's true ratio (fs = "null")
    zfs.PROPERTY              a zfs dataset property (zfs set), or zfs.ashift
    layout, devices           a zfs pool's layout (single, mirror, raidz1) and its images
    log_size, cache_size      a zfs pool's log (ZIL) and cache (L2ARC) devices ("0": none)
    arc_max                   the ARC's maximum (zfs-fuse's --max-arc-size; zfs_arc_max on
                              kernel OpenZFS): targets/zfs_pool.py

Kernel file systems on images take mount and mkfs options (an image restored from aging
is not made by mkfs); the simulator takes them too, and reads its `effects` table by
them (workloads/null.py), so a tuner can be checked against known truth.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fslab.core.age_factor import AGE
from fslab.core.errors import UserError
from fslab.core.lookups import LOOPFS
from fslab.plan.levels import ZFS_PREFIX
from fslab.targets import TargetSpec, registry_entry
from fslab.targets.base import AGE_LEVEL
from fslab.targets.zfs_pool import POOL_FIELDS


@dataclass(frozen=True)
class TargetFactor:
    """One factor of targets: its name (a prefix when it ends in '.'), who takes it (for
    the one-line refusal), whether a target takes it, and what a level does."""

    name: str
    takers: str
    takes: Callable[[TargetSpec], bool]
    apply: Callable[[TargetSpec, str, str], TargetSpec]  # (target, factor, level)

    def matches(self, name: str) -> bool:
        return name.startswith(self.name) and name != self.name if self.name.endswith(".") \
            else name == self.name


def _kernel(spec: TargetSpec) -> bool:
    return registry_entry(spec.fs)[0] == LOOPFS


def _mount_takes(spec: TargetSpec) -> bool:
    return spec.fs == "null" or _kernel(spec)


def _mkfs_takes(spec: TargetSpec) -> bool:
    made = not any(key in spec.options for key in ("image", "age"))
    return spec.fs == "null" or (_kernel(spec) and made)


def _age_takes(spec: TargetSpec) -> bool:
    made = not any(key in spec.options for key in ("image", "age", "fresh_copy_of"))
    return spec.fs == "null" or (_kernel(spec) and made and not spec.device)


def _zfs_takes(spec: TargetSpec) -> bool:
    return spec.fs in ("zfs", "zfs-mirror")


def _age(spec: TargetSpec, name: str, level: str) -> TargetSpec:
    return dataclasses.replace(spec, options={**spec.options, AGE_LEVEL: level})


FSTRIM_ON, FSTRIM_OFF = ("1", "true", "yes", "on"), ("0", "false", "no", "off")


def _fstrim(spec: TargetSpec, name: str, level: str) -> TargetSpec:
    if level.lower() not in FSTRIM_ON + FSTRIM_OFF:
        raise UserError(f"--sweep fstrim: level {level!r} is neither true nor false")
    return dataclasses.replace(spec, options={**spec.options,
                                              "fstrim": level.lower() in FSTRIM_ON})


def _mount(spec: TargetSpec, name: str, level: str) -> TargetSpec:
    joined = ",".join(filter(None, [spec.mount_options, level]))
    return dataclasses.replace(spec, mount_options=joined)


def _mkfs(spec: TargetSpec, name: str, level: str) -> TargetSpec:
    return dataclasses.replace(spec, mkfs_options=(*spec.mkfs_options, *level.split()))


def _option(spec: TargetSpec, name: str, level: str) -> TargetSpec:
    key = name[len(ZFS_PREFIX):] if name.startswith(ZFS_PREFIX) else name
    value: Any = float(level) if key == "scale" else level
    return dataclasses.replace(spec, options={**spec.options, key: value})


KERNEL_OR_SIMULATOR = "kernel file systems on images or devices, and the simulator"
TARGET_FACTORS = (
    TargetFactor("mount_options", KERNEL_OR_SIMULATOR, _mount_takes, _mount),
    TargetFactor("mount_options.", KERNEL_OR_SIMULATOR, _mount_takes, _mount),
    TargetFactor("mkfs_options", KERNEL_OR_SIMULATOR, _mkfs_takes, _mkfs),
    TargetFactor("mkfs_options.", KERNEL_OR_SIMULATOR, _mkfs_takes, _mkfs),
    TargetFactor("scale", "the simulator's targets, fs = \"null\"",
                 lambda spec: spec.fs == "null", _option),
    TargetFactor(ZFS_PREFIX, "zfs targets", _zfs_takes, _option),
    *(TargetFactor(name, "zfs targets (fs = \"zfs\")", _zfs_takes, _option)
      for name in POOL_FIELDS),
    TargetFactor(AGE, "kernel file systems made by mkfs on images (not from an aged "
                 "image), and the simulator", _age_takes, _age),
    TargetFactor("fstrim", KERNEL_OR_SIMULATOR, _mount_takes, _fstrim),
)


def target_factor(name: str) -> TargetFactor | None:
    """The declaration a factor name falls under (None: a factor of the workloads)."""
    return next((factor for factor in TARGET_FACTORS if factor.matches(name)), None)


def is_target_factor(name: str) -> bool:
    return target_factor(name) is not None


def takes_target_factor(name: str, spec: TargetSpec) -> bool:
    """Whether a target factor can change this target."""
    found = target_factor(name)
    return found is not None and found.takes(spec)


def with_level(spec: TargetSpec, name: str, level: str) -> TargetSpec:
    """The target with one factor's level applied."""
    found = target_factor(name)
    if found is None:
        raise ValueError(f"{name} is not a factor of targets")
    return found.apply(spec, name, level)


def takers(name: str) -> str:
    found = target_factor(name)
    return found.takers if found else "no target"
