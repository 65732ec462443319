"""Target registry: one line per kind; the registry checks each plug-in when it loads."""

from __future__ import annotations

from collections.abc import Callable

from fslab.errors import UserError
from fslab.targets.base import Mounted, Target, TargetSpec
from fslab.targets.directory import DirectoryTarget
from fslab.targets.loopfs import PROFILES, LoopFsTarget
from fslab.targets.null import NullTarget

__all__ = ["FS_KINDS", "Mounted", "Target", "TargetSpec", "make_target"]

_REQUIRED = ("check", "describe", "provision", "teardown", "needs_root", "capabilities")


def _check_plugin(cls: type) -> type:
    missing = [name for name in _REQUIRED if not hasattr(cls, name)]
    if missing:
        raise TypeError(f"target plug-in {cls.__name__} lacks {', '.join(missing)}")
    return cls


# fs name in the campaign -> how to build a target of it.
_FACTORIES: dict[str, Callable[..., Target]] = {
    **{fs: _check_plugin(LoopFsTarget) for fs in PROFILES},
    "dir": _check_plugin(DirectoryTarget),
    "null": _check_plugin(NullTarget),
}
FS_KINDS = tuple(_FACTORIES)


def make_target(
    spec: TargetSpec,
    *,
    confirmed_devices: frozenset[str] = frozenset(),
    force_device: bool = False,
) -> Target:
    """Build the target for a spec, or raise a one-line UserError for an unknown kind."""
    factory = _FACTORIES.get(spec.fs)
    if factory is None:
        known = ", ".join(k for k in FS_KINDS if k != "null")
        raise UserError(f"unknown file system {spec.fs!r} in target {spec.name!r}: known: {known}")
    if factory is LoopFsTarget:
        return LoopFsTarget(spec, confirmed_devices=confirmed_devices, force_device=force_device)
    return factory(spec)
