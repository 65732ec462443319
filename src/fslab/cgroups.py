"""The cgroups fslab makes (blkio throttles, memory limits), and the only way it removes
one. Depends on nothing in fslab, so the lab's releasers, device options and memory
limits can all use it without importing each other."""

from __future__ import annotations

from pathlib import Path

PREFIX = "fslab-"
BLKIO_ROOT = Path("/sys/fs/cgroup/blkio")  # cgroup v1 blkio (slow-device emulation)
MEMORY_V1_ROOT = Path("/sys/fs/cgroup/memory")
CGROUP_V2_ROOT = Path("/sys/fs/cgroup")
ROOTS = (BLKIO_ROOT, MEMORY_V1_ROOT, CGROUP_V2_ROOT)


def is_fslab_cgroup(path: Path) -> bool:
    """Only cgroups fslab made (by name, directly under a controller root)."""
    return path.name.startswith(PREFIX) and path.parent in ROOTS


def release_cgroup(path: Path) -> None:
    """Remove an fslab cgroup (its processes, fslab's own, have exited); refuse others."""
    if not is_fslab_cgroup(path):
        raise OSError(f"refusing to remove {path}: not an fslab cgroup")
    if path.exists():
        path.rmdir()
