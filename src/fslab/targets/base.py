"""The contract every target implements: provision, describe, tear down."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol

from fslab.lab import Resource, Session


@dataclass(frozen=True)
class TargetSpec:
    """A target as the campaign names it: a label, a kind and its options."""

    name: str
    fs: str
    size: int = 0  # image size in bytes (loop-image kinds)
    mkfs_options: tuple[str, ...] = ()
    mount_options: str = ""
    path: str = ""  # dir: the existing directory to benchmark
    device: str = ""  # a real block device instead of an image (needs confirmation)
    options: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)


@dataclass
class Mounted:
    """A provisioned target, ready for workloads."""

    path: Path
    description: dict[str, Any]
    resources: list[Resource] = field(default_factory=list)

    def free_bytes(self) -> int:
        """Space available to an unprivileged writer, as statvfs reports it."""
        stats = os.statvfs(self.path)
        return stats.f_bavail * stats.f_frsize


class Target(Protocol):
    """One kind of target. Capabilities are flags like fio's engine flags."""

    kind: ClassVar[str]
    capabilities: ClassVar[frozenset[str]]
    spec: TargetSpec

    @property
    def needs_root(self) -> bool: ...

    def check(self) -> None:
        """Raise UserError with one line when this target cannot run here."""

    def describe(self) -> dict[str, Any]:
        """What the target will be, without touching anything (for plans and dry runs)."""

    def provision(self, session: Session) -> Mounted:
        """Create and mount the target, recording every resource in the session first."""

    def teardown(self, session: Session, mounted: Mounted) -> None:
        """Release what provision acquired, in reverse order."""


def release_all(session: Session, mounted: Mounted) -> None:
    """Release a target's resources in reverse order of acquisition."""
    for resource in reversed(mounted.resources):
        session.release(resource)
    mounted.resources.clear()


# Capability flags (cf. fio's FIO_DISKLESSIO-style engine flags).
NEEDS_ROOT = "needs-root"
FORMATS = "formats"  # runs mkfs: a fresh file system per provision
FIEMAP = "fiemap"  # per-file extent maps are available
FUSE = "fuse"
DROP_CACHES = "drop-caches"  # caches can be dropped before runs (root)
