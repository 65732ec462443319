"""Target registry: one line per campaign name; each plug-in is checked when it loads."""

from __future__ import annotations

from typing import Any

from fslab.errors import UserError
from fslab.targets.base import Mounted, Target, TargetSpec
from fslab.targets.directory import DirectoryTarget
from fslab.targets.fusefs import FuseFsTarget
from fslab.targets.loopfs import LoopFsTarget
from fslab.targets.mirror import BtrfsRaid1Target, MdRaid1Target
from fslab.targets.null import NullTarget
from fslab.targets.raw import RawTarget
from fslab.targets.tmpfs import TmpfsTarget
from fslab.targets.zfs import ZfsTarget

__all__ = ["FS_KINDS", "IMAGE_LESS", "Mounted", "Target", "TargetSpec", "make_target"]

_REQUIRED = ("check", "describe", "provision", "teardown", "needs_root", "capabilities",
             "availability")


def _check_plugin(cls: type) -> type:
    missing = [name for name in _REQUIRED if not hasattr(cls, name)]
    if missing:
        raise TypeError(f"target plug-in {cls.__name__} lacks {', '.join(missing)}")
    return cls


# campaign name -> (plug-in class, one-line description for `fslab targets`).
REGISTRY: dict[str, tuple[type, str]] = {
    "ext2": (LoopFsTarget, "ext2 (kernel) on a loop image"),
    "ext3": (LoopFsTarget, "ext3 (kernel) on a loop image"),
    "ext4": (LoopFsTarget, "ext4 (kernel) on a loop image, lazy init off"),
    "xfs": (LoopFsTarget, "xfs (kernel) on a loop image"),
    "btrfs": (LoopFsTarget, "btrfs (kernel) on a loop image"),
    "zfs": (ZfsTarget, "zfs pool on an image: kernel OpenZFS, else zfs-fuse"),
    "ntfs": (FuseFsTarget, "NTFS via ntfs-3g (FUSE) on an image"),
    "exfat": (FuseFsTarget, "exFAT via exfat-fuse (FUSE) on a loop device"),
    "fat32": (FuseFsTarget, "FAT32 via fusefat rw+ (FUSE, experimental) on an image"),
    "tmpfs": (TmpfsTarget, "tmpfs: a memory-speed baseline"),
    "raw": (RawTarget, "the loop device itself, no file system: the ceiling"),
    "zfs-mirror": (ZfsTarget, "zfs mirror over two images"),
    "btrfs-raid1": (BtrfsRaid1Target, "btrfs raid1 (data+metadata) over two loop devices"),
    "md-raid1-ext4": (MdRaid1Target, "md RAID-1 over two loop devices, ext4 on top"),
    "md-raid1-xfs": (MdRaid1Target, "md RAID-1 over two loop devices, xfs on top"),
    "dir": (DirectoryTarget, "dir:PATH: an existing directory, no mkfs, no root"),
    "null": (NullTarget, "the null target (tests the harness itself)"),
}
for _cls, _ in REGISTRY.values():
    _check_plugin(_cls)
FS_KINDS = tuple(REGISTRY)
IMAGE_LESS = frozenset({"dir", "null"})  # kinds with no image size


def make_target(
    spec: TargetSpec,
    *,
    confirmed_devices: frozenset[str] = frozenset(),
    force_device: bool = False,
) -> Target:
    """Build the target for a spec, or raise a one-line UserError for an unknown kind."""
    entry = REGISTRY.get(spec.fs)
    if entry is None:
        known = ", ".join(k for k in FS_KINDS if k != "null")
        raise UserError(f"unknown file system {spec.fs!r} in target {spec.name!r}: known: {known}")
    if spec.device and entry[0] is not LoopFsTarget:
        raise UserError(f"target {spec.name}: device = ... works with ext2/3/4, xfs and btrfs")
    cls: Any = entry[0]
    return cls(spec, confirmed_devices=confirmed_devices, force_device=force_device)


def availability_table() -> list[tuple[str, str, str]]:
    """(name, description, why not available here or '') for every target kind."""
    rows = []
    for name, (cls, text) in REGISTRY.items():
        if name == "null":
            continue
        probe = cls(TargetSpec(name=name, fs=name, size=1024**3, path="/"))
        rows.append((name, text, probe.availability()))
    return rows
