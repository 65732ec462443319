"""Kernel file systems (ext2/3/4, xfs, btrfs) on a loop image or, when confirmed, a device."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from fslab.core import stopwatch
from fslab.core.errors import UserError
from fslab.core.run_parts import TargetDescription
from fslab.host import system
from fslab.host.lab import Session
from fslab.targets import precondition
from fslab.targets.base import (
    AGE_LEVEL,
    NEEDS_ROOT,
    BaseTarget,
    Mounted,
    TargetSpec,
)
from fslab.targets.blockdev import check_block_device
from fslab.targets.common import (
    attach_loop,
    image_bytes,
    kernel_has_fs,
    loop_settings,
    make_image,
    make_mountpoint,
    mount,
    path_of,
)
from fslab.targets.device_options import (
    DEVICE_OPTIONS,
    apply_throttle,
    loop_direct_io,
    parse_throttle,
    throttle_support,
)
from fslab.targets.images import kind_of, restore
from fslab.targets.profiles import PROFILES, added_description

MiB = 1024**2


class LoopFsTarget(BaseTarget):
    """A kernel file system made fresh by mkfs on a sparse image (or a confirmed device)."""

    kind: ClassVar[str] = "loopfs"
    capabilities: ClassVar[frozenset[str]] = frozenset({NEEDS_ROOT})
    allowed_options: ClassVar[frozenset[str]] = DEVICE_OPTIONS | {"image", "fresh_copy_of",
                                                                  "age", precondition.OPTION}

    def __init__(self, spec: TargetSpec, *, confirmed_devices: frozenset[str] = frozenset(),
                 force_device: bool = False, **_: Any) -> None:
        super().__init__(spec)
        self.profile = PROFILES[spec.fs]
        self.confirmed_devices = confirmed_devices
        self.force_device = force_device
        self.throttle = parse_throttle(spec.options.get("throttle"), spec.name)
        self.precondition = precondition.wanted(spec.options, spec.name)

    @property
    def tools(self) -> tuple[str, ...]:  # type: ignore[override]
        return (self.profile.mkfs, "losetup", "mount", "umount")

    def kernel_support(self) -> str:
        if not kernel_has_fs(self.profile.kernel_name):
            return f"the running kernel has no {self.profile.kernel_name} driver"
        return throttle_support() if self.throttle else ""

    def mkfs_command(self, device: str) -> list[str]:
        return [self.profile.mkfs, *self.profile.default_mkfs_options,
                *precondition.mkfs_keeps(self.precondition, self.profile.mkfs_nodiscard),
                *self.spec.mkfs_options, device]

    def added_mount_options(self) -> list[str]:
        """Mount options fslab adds to the file system's defaults (profiles.ON_IMAGES)."""
        if self.spec.device:
            return []
        return self.profile.added_on_images(self.spec.mount_options or "")

    def mount_command(self, device: str, mountpoint: Any) -> list[str]:
        wanted = [self.spec.mount_options] if self.spec.mount_options else []
        wanted += self.added_mount_options()
        if self.spec.options.get("image"):
            wanted += self.profile.aged_mount_options
        options = ["-o", ",".join(wanted)] if wanted else []
        return ["mount", "-t", self.profile.kernel_name, *options, device, str(mountpoint)]

    def check(self) -> None:
        super().check()
        if not self.spec.device and self.spec.size < self.profile.min_size:
            raise UserError(
                f"target {self.spec.name}: image size {self.spec.size // MiB} MiB is below "
                f"{self.spec.fs}'s minimum of {self.profile.min_size // MiB} MiB"
            )
        if self.spec.device:
            check_block_device(
                self.spec.device,
                confirmed=self.spec.device in self.confirmed_devices,
                force_signature=self.force_device,
            )

    def lab_bytes(self, files: int) -> int:
        """A fresh image's mkfs and files; an aged one's copy, as allocated in its source;
        a device's nothing."""
        if self.spec.device:
            return 0
        if self.spec.options.get("image"):
            source = Path(self.spec.options["image"])
            allocated = source.stat().st_blocks * 512 if source.exists() else 0
            return allocated + files
        return image_bytes(self.spec.size, files)

    def describe(self) -> TargetDescription:
        device = self.spec.device or "<loop device>"
        options = self.spec.options
        state, image, aged = "", "", {}
        if options.get("image"):
            state, image = "aged", str(options["image"])
        elif options.get("age") is not None:
            state, image = "aged", "(aged by this campaign first)"
            aged["age"] = options["age"]
        elif options.get("fresh_copy_of"):
            state, image = "fresh", str(options["fresh_copy_of"])
        if options.get(AGE_LEVEL):
            aged[AGE_LEVEL] = options[AGE_LEVEL]
        return TargetDescription(
            target=self.spec.name, fs=self.spec.fs, fs_impl=f"kernel {system.kernel_release()}",
            image_size=None if self.spec.device else self.spec.size, state=state, image=image,
            details={**aged,
                     "backing": self.spec.device or "loop image in the lab directory",
                     "mkfs_command": self.mkfs_command(device),
                     "mkfs_version": system.tool_version(self.profile.mkfs),
                     "mount_options_requested": self.spec.mount_options or "defaults",
                     **added_description(self.added_mount_options()),
                     "loop_direct_io": loop_direct_io(options),
                     "throttle": self.throttle or None,
                     precondition.OPTION: self.precondition})

    def provision(self, session: Session) -> Mounted:
        mounted = Mounted(path=None, description=self.describe())
        aged = self.spec.options.get("image")
        image: Path | None = None
        try:
            if self.spec.device:
                device = self.spec.device
            else:
                image = (copy_image(session, mounted, self.spec.base, Path(aged),
                                    self.spec.fs) if aged
                         else make_image(session, mounted, self.spec.base, self.spec.size))
                device = attach_loop(session, mounted, image,
                                     loop_direct_io(self.spec.options))
            state = precondition.apply(session, device, self.precondition, image) \
                if not aged else {"how": "none", "why": "an aged image keeps its state"}
            mounted.description = mounted.description.with_(precondition=state)
            if aged:
                if self.profile.aged_fixup:
                    system.run([*self.profile.aged_fixup, device], check=False)
            else:
                with stopwatch.step(stopwatch.MKFS):
                    system.run(self.mkfs_command(device), timeout=600)
            mounted.path = make_mountpoint(session, mounted, self.spec.base)
            mount(session, mounted, self.mount_command(device, mounted.path), mounted.path)
            if self.spec.options.get("fresh_copy_of"):
                copy_files_from(session, mounted, self.spec,
                                Path(self.spec.options["fresh_copy_of"]))
            if self.throttle:
                apply_throttle(session, mounted, self.spec.name, device, self.throttle)
        except BaseException:
            self.teardown(session, mounted)
            raise
        mounted.description = mounted.description.with_(
            device=device,
            mount_options=system.mount_options(mounted.path),
            loop=loop_settings(device),
        )
        return mounted


def copy_image(session: Session, mounted: Mounted, name: str, source: Path,
               fs: str) -> Path:
    """A private sparse copy of an aged image (sparse, zstd or metadata: see
    fslab.targets.images): every run starts from the same aged state."""
    image = session.new_path("images", f"{path_of(name)}.img")
    image.parent.mkdir(parents=True, exist_ok=True)
    mounted.resources.append(session.record("file", image))
    restore(source, image, fs)
    return image


def copy_files_from(
    session: Session, mounted: Mounted, spec: TargetSpec, source: Path
) -> None:
    """Fill a fresh file system with an aged image's files (copied, hence laid out fresh)."""
    assert mounted.path is not None
    mountpoint = session.new_path("mnt", f"{path_of(spec.base)}-source")
    temporary = Mounted(path=None, description=TargetDescription())
    try:
        if kind_of(source) != "sparse":  # compressed or metadata: restore a copy first
            source = copy_image(session, temporary, f"{spec.base}-source", source, spec.fs)
        device = attach_loop(session, temporary, source)
        system.run(["losetup", "--set-capacity", device], check=False)
        mountpoint.mkdir(parents=True, exist_ok=True)
        temporary.resources.append(session.record("dir", mountpoint))
        options = PROFILES[spec.fs].read_only
        mount(session, temporary, ["mount", "-o", options, device, str(mountpoint)],
              mountpoint)
        copy_tree(mountpoint, mounted.path, contents=True)
    finally:
        for resource in reversed(temporary.resources):
            session.release(resource)


def copy_tree(source: Path, into: Path, contents: bool = False) -> None:
    """Copy a tree (or, with `contents`, what it holds) into a directory of a fresh file
    system with `cp -a`: each file written whole, one after the other, so the copy is
    laid out fresh (Conway et al., FAST '17: an aged tree against a fresh copy of it)."""
    system.run(["cp", "-a", f"{source}/." if contents else str(source), str(into)],
               timeout=3600)
