"""The cgroups fslab makes (blkio throttles, memory limits), and the only way it removes
one. Depends on nothing in fslab, so the lab's releasers, device options and memory
limits can all use it without importing each other."""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import time
from pathlib import Path

PREFIX = "fslab-"
BLKIO_ROOT = Path("/sys/fs/cgroup/blkio")  # cgroup v1 blkio (slow-device emulation)
MEMORY_V1_ROOT = Path("/sys/fs/cgroup/memory")
CGROUP_V2_ROOT = Path("/sys/fs/cgroup")
HYBRID_V2_ROOT = Path("/sys/fs/cgroup/unified")  # v2 beside v1 controllers (no controllers)
ROOTS = (BLKIO_ROOT, MEMORY_V1_ROOT, CGROUP_V2_ROOT, HYBRID_V2_ROOT)


def is_fslab_cgroup(path: Path) -> bool:
    """Only cgroups fslab made (by name, directly under a controller root)."""
    return path.name.startswith(PREFIX) and path.parent in ROOTS


# A cgroup whose last process has just exited can still be busy for a moment while the
# kernel releases that process (seen here once: EBUSY right after cgroup.procs emptied,
# on a loaded machine): its removal is tried again for up to a second.
RELEASE_TRIES, RELEASE_PAUSE_S = 100, 0.01


def release_cgroup(path: Path) -> None:
    """Remove an fslab cgroup (its processes, fslab's own, have exited); refuse others."""
    if not is_fslab_cgroup(path):
        raise OSError(f"refusing to remove {path}: not an fslab cgroup")
    for attempt in range(RELEASE_TRIES):
        try:
            path.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError as exc:
            if exc.errno != errno.EBUSY or attempt == RELEASE_TRIES - 1:
                raise
            time.sleep(RELEASE_PAUSE_S)


def tracking_root() -> Path | None:
    """A cgroup v2 hierarchy to hold fslab's child processes (children.py): a process and
    everything it forks stay in its cgroup whatever they do to their process groups and
    sessions, as fio's job processes do. None without v2 or without the right to use it."""
    for root in (HYBRID_V2_ROOT, CGROUP_V2_ROOT):
        if (root / "cgroup.controllers").exists():
            return root if os.access(root / "cgroup.procs", os.W_OK) else None
    return None


def end_members(path: Path) -> None:
    """SIGKILL every process in an fslab cgroup (all fslab's: they were started in it),
    and wait until it is empty."""
    if not is_fslab_cgroup(path) or not path.exists():
        return
    kill_file = path / "cgroup.kill"
    for _ in range(200):
        procs = [int(pid) for pid in (path / "cgroup.procs").read_text().split()]
        if not procs:
            return
        if kill_file.exists():
            kill_file.write_text("1")
        else:
            for pid in procs:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        time.sleep(0.01)
