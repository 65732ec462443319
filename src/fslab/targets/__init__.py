"""Target registry: one line per campaign name; each plug-in is checked when it loads."""

from __future__ import annotations

import functools
import importlib
from typing import Any

from fslab.core.errors import UserError
from fslab.core.lookups import FUSEFS, LOOPFS, TARGET_KINDS
from fslab.host import system
from fslab.targets.base import Mounted, Target, TargetSpec
from fslab.targets.profiles import BUILT_IN, FUSE, FUSE_BUILT_IN, KERNEL, PROFILES, FsProfile

__all__ = ["FS_KINDS", "IMAGE_LESS", "Mounted", "Target", "TargetSpec", "device_kinds",
           "known_kinds", "make_target", "register_profile"]

_REQUIRED = ("check", "describe", "provision", "teardown", "shares", "needs_root",
             "capabilities", "availability")

DRIVERS = {KERNEL: LOOPFS, FUSE: FUSEFS}  # a profile's driver -> the plug-in that runs it
# campaign name -> (plug-in "module:Class", one-line description for `fslab targets`).
# Names only (core/lookups.py: TARGET_KINDS): a plug-in is imported (and checked) when a
# target of its kind is made, so listing the kinds (the importer guessing file systems
# from paths) imports none. File systems on images, kernel and FUSE, come from their
# profiles (targets/profiles.py).
REGISTRY: dict[str, tuple[str, str]] = {
    **{p.fs: (DRIVERS[p.driver], p.description) for p in (*BUILT_IN, *FUSE_BUILT_IN)},
    **TARGET_KINDS,
}
FS_KINDS = tuple(REGISTRY)  # the built-in kinds; known_kinds() adds registered profiles


def known_kinds() -> tuple[str, ...]:
    """Every target kind a campaign may name, registered profiles included."""
    return tuple(REGISTRY)


def registry_entry(fs: str) -> tuple[str, str]:
    """(plug-in, description) of a target kind, or the one-line error every caller gives
    for a kind fslab does not know (the one place it is checked)."""
    entry = REGISTRY.get(fs)
    if entry is None:
        known = ", ".join(k for k in known_kinds() if k != "null")
        raise UserError(f"unknown file system {fs!r}: known: {known} (or dir:PATH)")
    return entry


def register_profile(profile: FsProfile) -> None:
    """Make a file system on images (kernel or FUSE) known everywhere: targets, images,
    the importer."""
    if profile.driver not in DRIVERS:
        raise ValueError(f"profile {profile.fs}: driver must be one of {', '.join(DRIVERS)}")
    PROFILES[profile.fs] = profile
    REGISTRY[profile.fs] = (DRIVERS[profile.driver], profile.description)
    for tool in filter(None, (profile.mkfs, profile.mount_program)):
        system.TOOL_PACKAGES.setdefault(tool, profile.package)
    system.VERSION_FLAGS.setdefault(profile.mkfs, list(profile.version_flag))


for _profile in (*BUILT_IN, *FUSE_BUILT_IN):
    register_profile(_profile)
IMAGE_LESS = frozenset({"dir", "null"})  # kinds with no image size


@functools.cache
def plugin(kind: str) -> type:
    """The plug-in class of a target kind, imported and checked on first use."""
    module, _, name = REGISTRY[kind][0].partition(":")
    cls = getattr(importlib.import_module(module), name)
    missing = [attribute for attribute in _REQUIRED if not hasattr(cls, attribute)]
    if missing:
        raise TypeError(f"target plug-in {cls.__name__} lacks {', '.join(missing)}")
    return cls


def make_target(
    spec: TargetSpec,
    *,
    confirmed_devices: frozenset[str] = frozenset(),
    force_device: bool = False,
) -> Target:
    """Build the target for a spec, or raise a one-line UserError for an unknown kind."""
    entry = registry_entry(spec.fs)
    if spec.device and entry[0] != LOOPFS:
        raise UserError(f"target {spec.name}: device = ... works with "
                        f"{', '.join(device_kinds())}")
    cls: Any = plugin(spec.fs)
    return cls(spec, confirmed_devices=confirmed_devices, force_device=force_device)


def device_kinds() -> tuple[str, ...]:
    """The kinds that may be made on a real block device (`device = ...`): the kernel
    file systems mkfs makes, registered profiles included."""
    return tuple(k for k, (plug_in, _) in REGISTRY.items() if plug_in == LOOPFS)


def availability_table() -> list[tuple[str, str, str]]:
    """(name, description, why not available here or '') for every target kind."""
    rows = []
    for name, (_, text) in REGISTRY.items():
        if name == "null":
            continue
        probe = plugin(name)(TargetSpec(name=name, fs=name, size=1024**3, path="/"))
        rows.append((name, text, probe.availability()))
    return rows
