"""Two-way mirrors over two loop images: btrfs raid1, and md RAID-1 with ext4 or xfs.

md needs the kernel md driver (/proc/mdstat) and mdadm; where the kernel has no md,
`fslab targets` and the campaign check say so in one line. (zfs mirrors live in zfs.py.)
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from fslab.core.errors import UserError
from fslab.core.run_parts import TargetDescription
from fslab.host import system
from fslab.host.lab import Session
from fslab.targets.base import NEEDS_ROOT, BaseTarget, Mounted
from fslab.targets.common import (
    attach_loop,
    loop_settings,
    make_image,
    make_mountpoint,
    mount,
)
from fslab.targets.device_options import loop_direct_io
from fslab.targets.profiles import PROFILES, added_description

MiB = 1024**2


class MirrorTarget(BaseTarget):
    """Common part: two images on two loop devices, then a layout-specific build."""

    capabilities: ClassVar[frozenset[str]] = frozenset({NEEDS_ROOT})
    allowed_options: ClassVar[frozenset[str]] = frozenset({"direct_io"})
    fs_name: ClassVar[str] = ""
    layout: ClassVar[str] = ""

    def check(self) -> None:
        super().check()
        if self.spec.size < PROFILES[self.fs_name].min_size:
            raise UserError(f"target {self.spec.name}: images must be at least "
                            f"{PROFILES[self.fs_name].min_size // MiB} MiB each")

    def describe(self) -> TargetDescription:
        return TargetDescription(
            target=self.spec.name, fs=self.fs_name, fs_impl=f"kernel {system.kernel_release()}",
            image_size=self.spec.size,
            details={"layout": self.layout,
                     "mount_options_requested": self.spec.mount_options or "defaults",
                     **added_description(self.added_mount_options())})

    def added_mount_options(self) -> list[str]:
        return PROFILES[self.fs_name].added_on_images(self.spec.mount_options)

    def provision(self, session: Session) -> Mounted:
        mounted = Mounted(path=None, description=self.describe())
        try:
            devices = [
                attach_loop(session, mounted,
                            make_image(session, mounted, f"{self.spec.name}-{i}", self.spec.size),
                            loop_direct_io(self.spec.options))
                for i in range(2)
            ]
            device = self.build(session, mounted, devices)
            mounted.path = make_mountpoint(session, mounted, self.spec.name)
            wanted = [self.spec.mount_options] if self.spec.mount_options else []
            wanted += self.added_mount_options()
            options = ["-o", ",".join(wanted)] if wanted else []
            mount(session, mounted, ["mount", "-t", self.fs_name, *options, device,
                                     str(mounted.path)], mounted.path)
        except BaseException:
            self.teardown(session, mounted)
            raise
        mounted.description = mounted.description.with_(
            devices=devices, mount_options=system.mount_options(mounted.path),
            loop=[loop_settings(d) for d in devices])
        return mounted

    def build(self, session: Session, mounted: Mounted, devices: list[str]) -> str:
        """Make the mirror and its file system; return the device to mount."""
        raise NotImplementedError


class BtrfsRaid1Target(MirrorTarget):
    """btrfs with data and metadata both raid1 over two devices."""

    kind: ClassVar[str] = "btrfs-raid1"
    tools: ClassVar[tuple[str, ...]] = ("mkfs.btrfs", "losetup")
    fs_name: ClassVar[str] = "btrfs"
    layout: ClassVar[str] = "btrfs raid1 (data and metadata) over two loop devices"

    def build(self, session: Session, mounted: Mounted, devices: list[str]) -> str:
        system.run(["mkfs.btrfs", "-f", "-q", "-d", "raid1", "-m", "raid1",
                    *self.spec.mkfs_options, *devices], timeout=600)
        system.run(["btrfs", "device", "scan", *devices], check=False)
        return devices[0]


class MdRaid1Target(MirrorTarget):
    """md RAID-1 over two loop devices, ext4 or xfs on top."""

    kind: ClassVar[str] = "md-raid1"
    tools: ClassVar[tuple[str, ...]] = ("mdadm", "losetup")
    layout: ClassVar[str] = "md RAID-1 over two loop devices"

    def __init__(self, spec: Any, **kwargs: Any) -> None:
        super().__init__(spec, **kwargs)
        self.fs_name = spec.fs.rsplit("-", 1)[1]  # type: ignore[misc]

    def availability(self) -> str:
        if not Path("/proc/mdstat").exists():
            return "the running kernel has no md RAID driver (/proc/mdstat missing)"
        return super().availability()

    def build(self, session: Session, mounted: Mounted, devices: list[str]) -> str:
        array = f"/dev/md/fslab-{session.dir.name}-{self.spec.name}"[:60]
        mounted.resources.append(session.record("mdarray", array, members=devices))
        system.run(["mdadm", "--create", array, "--run", "--level=1", "--raid-devices=2",
                    "--metadata=1.2", "--assume-clean", *devices], timeout=120)
        profile = PROFILES[self.fs_name]
        system.run([profile.mkfs, *profile.default_mkfs_options, *self.spec.mkfs_options,
                    array], timeout=600)
        return array
