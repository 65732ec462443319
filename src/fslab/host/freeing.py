"""Files fslab removed whose blocks the disk has not given back yet.

An image removed after its loop device was released is freed only when the kernel drops
its last reference to the file, and that is deferred: on a busy host, seconds after the
unlink, after the loop device no longer names its file (host/loops.releasing sees it only
while it does). The lab's room is read right after a target's teardown, so what fslab
removed is remembered here with the free space before, and read as on its way back until
the disk has it (run/lab_space.free_once_released waits for it, up to its bound).
"""

from __future__ import annotations

import shutil
import threading
import time
from dataclasses import dataclass
from pathlib import Path

REMEMBERED_S = 60.0  # a removal older than this is not waited for


@dataclass(frozen=True)
class Removed:
    """A file fslab removed: its blocks, and the disk's free bytes just before."""

    path: Path
    blocks_bytes: int
    free_before: int
    at: float

    def given_back(self) -> bool:
        """Whether the disk's free space has grown by half the file's blocks or more (the
        rest is other writers' business)."""
        try:
            free = shutil.disk_usage(self.path.parent).free
        except OSError:
            return True
        return free >= self.free_before + self.blocks_bytes // 2


_REMOVED: list[Removed] = []
_LOCK = threading.Lock()  # teardowns run in background threads (host/children.py)


def remove(path: Path) -> None:
    """Unlink `path` (gone already: nothing to do), remembering what it held."""
    try:
        blocks = path.stat().st_blocks * 512
        free = shutil.disk_usage(path.parent).free
    except FileNotFoundError:
        return
    path.unlink(missing_ok=True)
    with _LOCK:
        _REMOVED.append(Removed(path, blocks, free, time.monotonic()))


def on_its_way(under: Path) -> bool:
    """Whether a file fslab removed under `under` lately has not been given back yet."""
    now = time.monotonic()
    with _LOCK:
        _REMOVED[:] = [r for r in _REMOVED if now - r.at < REMEMBERED_S]
        pending = [r for r in _REMOVED if r.path.is_relative_to(under) and r.blocks_bytes]
    return any(not removed.given_back() for removed in pending)
