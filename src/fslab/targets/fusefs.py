"""User-space (FUSE) file systems: ntfs (ntfs-3g), exfat (exfat-fuse), fat32 (fusefat);
their profiles (driver = "fuse") are in targets/profiles.py with the kernel ones.

Their figures are those of a FUSE implementation, not of a kernel driver: every result
carries the program and its version in fs_impl.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from fslab.core import stopwatch
from fslab.core.errors import UserError
from fslab.core.run_parts import TargetDescription
from fslab.host import fuse, system
from fslab.host.fuse import Watch
from fslab.host.lab import Session
from fslab.targets.base import NEEDS_ROOT, SEQUENTIAL_LAYOUT, BaseTarget, Mounted
from fslab.targets.common import (
    attach_loop,
    image_bytes,
    make_image,
    make_mountpoint,
    mount,
    package_version,
)
from fslab.targets.device_options import DEFAULT_LOOP_DIRECT_IO
from fslab.targets.profiles import PROFILES, MiB


class FuseFsTarget(BaseTarget):
    """A FUSE file system on a fresh image (exfat via a loop device, as it needs one)."""

    kind: ClassVar[str] = "fuse"
    capabilities: ClassVar[frozenset[str]] = frozenset({NEEDS_ROOT})

    def __init__(self, spec: Any, **kwargs: Any) -> None:
        super().__init__(spec, **kwargs)
        self.profile = PROFILES[spec.fs]

    @property
    def tools(self) -> tuple[str, ...]:  # type: ignore[override]
        return (self.profile.mkfs, self.profile.mount_program, "umount")

    def kernel_support(self) -> str:
        if not Path("/dev/fuse").exists():
            return "FUSE is unavailable (/dev/fuse missing)"
        return ""

    def check(self) -> None:
        super().check()
        if self.spec.size < self.profile.min_size:
            raise UserError(f"target {self.spec.name}: {self.spec.fs} needs an image of at "
                            f"least {self.profile.min_size // MiB} MiB")

    def lab_bytes(self, files: int) -> int:
        return image_bytes(self.spec.size, files)

    def describe(self) -> TargetDescription:
        info = {
            "target": self.spec.name,
            "fs": self.spec.fs,
            "fs_impl": f"{self.profile.package} {package_version(self.profile.package)} (FUSE)",
            "backing": "loop device over an image" if self.profile.needs_block_device
            else "image file in the lab directory",
            "image_size": self.spec.size,
            "mkfs_command": [*self._mkfs(), "<image>"],
            "mount_options_requested": self.spec.mount_options or "defaults",
        }
        if self.profile.quirk:
            info["quirk"] = self.profile.quirk
        return TargetDescription.from_json(info)

    def mount_command(self, source: str, mountpoint: Path) -> list[str]:
        options = list(filter(None, [*self.profile.fuse_mount_options,
                                     self.spec.mount_options]))
        opt_args = ["-o", ",".join(options)] if options else []
        return [self.profile.mount_program, *opt_args, source, str(mountpoint)]

    def provision(self, session: Session) -> Mounted:
        mounted = Mounted(path=None, description=self.describe(),
                          layout_first=SEQUENTIAL_LAYOUT in self.quirks())
        try:
            source = str(make_image(session, mounted, self.spec.base, self.spec.size))
            if self.profile.needs_block_device:
                source = attach_loop(session, mounted, Path(source), DEFAULT_LOOP_DIRECT_IO)
            with stopwatch.step(stopwatch.MKFS):
                system.run([*self._mkfs(), source], timeout=600)
            control = session.fuse_control()  # in the ledger before the mount it serves
            mounted.path = make_mountpoint(session, mounted, self.spec.base)
            mount(session, mounted, self.mount_command(source, mounted.path), mounted.path,
                  fuse=True)
            mounted.watch = watched(session, mounted, self.spec.name, mounted.path, control)
        except BaseException:
            self.teardown(session, mounted)
            raise
        mounted.description = mounted.description.with_(source=source,
                                   mount_options=system.mount_options(mounted.path))
        return mounted

    def _mkfs(self) -> list[str]:
        return [self.profile.mkfs, *self.profile.default_mkfs_options,
                *self.spec.mkfs_options]

    def quirks(self) -> frozenset[str]:
        return self.profile.capabilities


def watched(session: Session, mounted: Mounted, name: str, mountpoint: Path,
            control: Path) -> Watch | None:
    """The daemon the mount started, in the ledger (its release ends it if it will not
    go), and a watch on the mount that aborts its connection if the daemon hangs
    (host/fuse.py); None when no daemon serves it (it died at once)."""
    daemons = fuse.daemons_of(mountpoint)
    for daemon in daemons:
        mounted.resources.append(session.record(
            "fuse", str(daemon.pid), start_time=daemon.start_time, program=daemon.program,
            mountpoint=str(mountpoint)))
    connection = fuse.connection_of(mountpoint)
    if not daemons or not connection:
        return None
    watch = Watch(name, mountpoint, connection, daemons[0], control)
    watch.start()
    return watch
