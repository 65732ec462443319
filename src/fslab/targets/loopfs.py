"""Kernel file systems on a loop image made in the lab (or, when confirmed, a real device)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from fslab import system
from fslab.errors import UserError
from fslab.lab import Session
from fslab.targets.base import DROP_CACHES, FIEMAP, FORMATS, NEEDS_ROOT, Mounted, TargetSpec
from fslab.targets.blockdev import check_block_device


@dataclass(frozen=True)
class FsProfile:
    """How to make one kernel file system: its mkfs and the defaults fslab adds."""

    fs: str
    mkfs: str
    default_mkfs_options: tuple[str, ...]
    min_size: int


PROFILES = {
    # Lazy inode-table and journal init off: otherwise ext4lazyinit writes in the
    # background for minutes after mkfs and skews the first runs.
    "ext4": FsProfile(
        "ext4", "mkfs.ext4", ("-F", "-q", "-E", "lazy_itable_init=0,lazy_journal_init=0"),
        16 * 1024**2,
    ),
    "xfs": FsProfile("xfs", "mkfs.xfs", ("-f", "-q"), 300 * 1024**2),
    "btrfs": FsProfile("btrfs", "mkfs.btrfs", ("-f", "-q"), 114 * 1024**2),
}


class LoopFsTarget:
    """A kernel file system made fresh by mkfs on a sparse image (or a confirmed device)."""

    kind: ClassVar[str] = "loopfs"
    capabilities: ClassVar[frozenset[str]] = frozenset({NEEDS_ROOT, FORMATS, FIEMAP, DROP_CACHES})

    def __init__(self, spec: TargetSpec, *, confirmed_devices: frozenset[str] = frozenset(),
                 force_device: bool = False) -> None:
        self.spec = spec
        self.profile = PROFILES[spec.fs]
        self.confirmed_devices = confirmed_devices
        self.force_device = force_device

    @property
    def needs_root(self) -> bool:
        return True

    def mkfs_command(self, device: str) -> list[str]:
        return [self.profile.mkfs, *self.profile.default_mkfs_options,
                *self.spec.mkfs_options, device]

    def mount_command(self, device: str, mountpoint: Path) -> list[str]:
        options = ["-o", self.spec.mount_options] if self.spec.mount_options else []
        return ["mount", "-t", self.spec.fs, *options, device, str(mountpoint)]

    def check(self) -> None:
        if not system.is_root():
            raise UserError(
                f"target {self.spec.name} ({self.spec.fs}) needs root to run mkfs, losetup "
                "and mount: run fslab as root, or benchmark an existing directory with dir:PATH"
            )
        for tool in (self.profile.mkfs, "losetup", "mount", "umount"):
            system.require_tool(tool)
        if not self.spec.device and self.spec.size < self.profile.min_size:
            raise UserError(
                f"target {self.spec.name}: image size {self.spec.size // 1024**2} MiB is below "
                f"{self.spec.fs}'s minimum of {self.profile.min_size // 1024**2} MiB"
            )
        if self.spec.device:
            check_block_device(
                self.spec.device,
                confirmed=self.spec.device in self.confirmed_devices,
                force_signature=self.force_device,
            )

    def describe(self) -> dict[str, Any]:
        device = self.spec.device or "<loop device>"
        return {
            "target": self.spec.name,
            "fs": self.spec.fs,
            "fs_impl": f"kernel {system.kernel_release()}",
            "backing": self.spec.device or "loop image in the lab directory",
            "image_size": self.spec.size if not self.spec.device else None,
            "mkfs_command": self.mkfs_command(device),
            "mkfs_version": system.tool_version(self.profile.mkfs),
            "mount_options_requested": self.spec.mount_options or "defaults",
        }

    def provision(self, session: Session) -> Mounted:
        mountpoint = session.path_for("mnt", self.spec.name)
        mounted = Mounted(path=mountpoint, description=self.describe())
        try:
            device = self._attach(session, mounted)
            system.run(self.mkfs_command(device), timeout=600)
            mounted.resources.append(session.record("dir", mountpoint))
            mountpoint.mkdir(parents=True, exist_ok=True)
            mounted.resources.append(session.record("mount", mountpoint))
            system.run(self.mount_command(device, mountpoint))
        except BaseException:
            self.teardown(session, mounted)
            raise
        mounted.description.update(
            device=device,
            mount_options=system.mount_options(mountpoint),
            loop=_loop_settings(device),
        )
        return mounted

    def teardown(self, session: Session, mounted: Mounted) -> None:
        for resource in reversed(mounted.resources):
            session.release(resource)
        mounted.resources.clear()

    def _attach(self, session: Session, mounted: Mounted) -> str:
        """Return the block device to format: a confirmed device, or a fresh loop image."""
        if self.spec.device:
            return self.spec.device
        image = session.path_for("images", f"{self.spec.name}.img")
        image.parent.mkdir(parents=True, exist_ok=True)
        mounted.resources.append(session.record("file", image))
        with image.open("wb") as handle:
            handle.truncate(self.spec.size)  # sparse: blocks are allocated as written
        mounted.resources.append(session.record("loop", image))
        return system.run(["losetup", "--find", "--show", str(image)]).stdout.strip()


def _loop_settings(device: str) -> dict[str, Any]:
    """Read a loop device's direct-I/O and block-size settings from sysfs."""
    name = Path(device).name
    queue = Path(f"/sys/block/{name}/queue")
    loop = Path(f"/sys/block/{name}/loop")
    if not loop.is_dir():
        return {}

    def read(path: Path) -> str:
        try:
            return path.read_text().strip()
        except OSError:
            return ""

    return {
        "device": device,
        "backing_file": read(loop / "backing_file"),
        "direct_io": read(loop / "dio") == "1",
        "logical_block_size": read(queue / "logical_block_size"),
        "scheduler": read(queue / "scheduler"),
    }
