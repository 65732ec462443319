"""The contract every target implements (provision, describe, teardown) and its helpers."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol

from fslab.core.errors import UserError
from fslab.core.run_parts import TargetDescription
from fslab.host import system
from fslab.host.fuse import Watch
from fslab.host.lab import Resource, Session
from fslab.host.space import root_space

# Capability flags (cf. fio's FIO_DISKLESSIO-style engine flags), each read by the core:
# NEEDS_ROOT by the preflight, SEQUENTIAL_LAYOUT (a FUSE quirk) by the fio workload. No flag
# says a target has FIEMAP or drops its caches: those are probed where they are used, and
# say so when they fail, so no flag can claim what the file system does not do.
NEEDS_ROOT = "needs-root"
SEQUENTIAL_LAYOUT = "sequential-layout"  # files must be written sequentially before use
# Nothing is made fresh (an existing directory): the runner keeps the place, and the
# workloads' laid-out files in it, from one iteration to the next, as a fio loop would.
KEEPS_PLACE = "keeps-place"


@dataclass(frozen=True)
class TargetSpec:
    """A target as the campaign names it: a label, a kind and its options."""

    name: str
    fs: str
    size: int = 0  # image size in bytes (image-backed kinds)
    mkfs_options: tuple[str, ...] = ()
    mount_options: str = ""
    path: str = ""  # dir: the existing directory to benchmark
    device: str = ""  # a real block device instead of an image (needs confirmation)
    options: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)
    # A variant of a swept target: its factors' levels, (("mount_options", "noatime"),),
    # and the name of the target it is a variant of (core/cell_keys.py: its key's target)
    levels: tuple[tuple[str, str], ...] = field(default=(), hash=False, compare=False)
    variant_of: str = field(default="", hash=False, compare=False)

    @property
    def base(self) -> str:
        """The target as the campaign declared it (its own name when not a variant)."""
        return self.variant_of or self.name


# A level of the `age` factor (workloads/aging_levels.py): the runner ages the target after
# it is made (run/aging_places.py); the simulator reads it as a level of its effects.
AGE_LEVEL = "age_level"
# Options of every target, read around each run rather than by the target (run_probes.py).
RUN_OPTIONS = frozenset({"fstrim", AGE_LEVEL})

# Deleted files' space returns asynchronously on btrfs and zfs: wait this long for it.
SPACE_SETTLE_S = 20.0


@dataclass
class Mounted:
    """A provisioned target, ready for workloads."""

    path: Path | None  # the directory workloads run in (None: raw device only)
    description: TargetDescription
    resources: list[Resource] = field(default_factory=list)
    device: str = ""  # the block device, for raw targets
    layout_first: bool = False  # write files sequentially before fio touches them
    keep_files: bool = False  # the workloads' files stay between runs (KEEPS_PLACE)
    cgroup: str = ""  # blkio cgroup that workload processes join (slow-device emulation)
    watch: Watch | None = None  # a FUSE mount's watch (host/fuse.py): why it hung, if it did

    def wait_for_space(self, need: int) -> int | None:
        """Free space, after giving deferred frees (btrfs, zfs) time to land, up to a limit."""
        free = self.free_bytes()
        deadline = time.monotonic() + SPACE_SETTLE_S
        while free is not None and need > free and time.monotonic() < deadline:
            system.sync_file_system(self.path) if self.path else os.sync()
            time.sleep(0.5)
            free = self.free_bytes()
        return free

    def free_bytes(self) -> int | None:
        """Space a writer has (device size for raw); None when the fs won't say. fslab's
        workloads run as root: ext4's root reserve is theirs (host/space.py)."""
        if self.path is None:
            return self.description.device_size
        found = root_space(self.path)  # fusefat reports no sizes at all: None
        return found.free if found is not None else None


class Target(Protocol):
    """One kind of target. Capabilities are flags like fio's engine flags."""

    kind: ClassVar[str]
    capabilities: ClassVar[frozenset[str]]
    spec: TargetSpec

    @property
    def needs_root(self) -> bool: ...

    @property
    def tools(self) -> tuple[str, ...]:
        """The programs it runs (checked before a campaign, versions in environment.json)."""

    def availability(self) -> str:
        """Why this kind cannot run on this machine ('' when it can), root aside."""

    def check(self) -> None:
        """Raise UserError with one line when this target cannot run here."""

    def describe(self) -> TargetDescription:
        """What the target will be, without touching anything (for plans and dry runs)."""

    def lab_bytes(self, files: int) -> int:
        """Bytes of the lab's disk it may take with `files` bytes of a run's files in it
        (0: it keeps nothing there), checked before it is made (run/lab_space.py)."""

    def provision(self, session: Session) -> Mounted:
        """Create and mount the target, recording every resource in the session first."""

    def teardown(self, session: Session, mounted: Mounted) -> None:
        """Release what provision acquired, in reverse order."""

    def shares(self) -> tuple[str, str]:
        """What it shares with other targets that its own level of it changes: (what,
        level), e.g. ("zfs ARC", "256 MiB") for pools under one zfs-fuse daemon; ("", "")
        for nothing. Targets naming the same thing at other levels are never mounted
        together (run/places.py)."""


class BaseTarget:
    """Shared behaviour: root and tool checks, option validation, ordered teardown."""

    kind: ClassVar[str] = "base"
    capabilities: ClassVar[frozenset[str]] = frozenset({NEEDS_ROOT})
    tools: ClassVar[tuple[str, ...]] = ()
    allowed_options: ClassVar[frozenset[str]] = frozenset()

    def __init__(self, spec: TargetSpec, **_: Any) -> None:
        self.spec = spec

    @property
    def needs_root(self) -> bool:
        return NEEDS_ROOT in self.capabilities

    def availability(self) -> str:
        missing = [tool for tool in self.tools if system.which(tool) is None]
        if missing:
            return "; ".join(system.missing_tool_message(tool) for tool in missing)
        return self.kernel_support()

    def kernel_support(self) -> str:
        """Why the running kernel cannot host this kind ('' when it can)."""
        return ""

    def lab_bytes(self, files: int) -> int:
        """Nothing in the lab unless the kind says so (an image it makes there)."""
        return 0

    def check(self) -> None:
        unknown = sorted(set(self.spec.options) - self.allowed_options - RUN_OPTIONS)
        if unknown:
            allowed = ", ".join(sorted(self.allowed_options | RUN_OPTIONS))
            raise UserError(f"target {self.spec.name}: unknown option {', '.join(unknown)} "
                            f"for {self.spec.fs} (allowed: {allowed})")
        if self.needs_root and not system.is_root():
            raise UserError(
                f"target {self.spec.name} ({self.spec.fs}) needs root to create and mount "
                "file systems: run fslab as root, or benchmark an existing directory with dir:PATH"
            )
        reason = self.availability()
        if reason:
            raise UserError(f"target {self.spec.name} ({self.spec.fs}): {reason}")

    def teardown(self, session: Session, mounted: Mounted) -> None:
        release_all(session, mounted)

    def shares(self) -> tuple[str, str]:
        return "", ""


def release_all(session: Session, mounted: Mounted) -> None:
    """Release a target's resources in reverse order of acquisition; its image file in
    the background, after its loop device is gone (lab.Session.release_soon: removing a
    written image is most of a target's teardown here, and nothing needs it gone before
    the next measurement). A FUSE mount's watch stops first: its release decides alone."""
    if mounted.watch is not None:
        mounted.watch.stop()
    for resource in reversed(mounted.resources):
        if resource.kind == "file":
            session.release_soon(resource)
        else:
            session.release(resource)
    mounted.resources.clear()
