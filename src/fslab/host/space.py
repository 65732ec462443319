"""A file system's space as root sees it.

fslab ages file systems and runs its workloads as root, so the space that counts is the
space root can write: statvfs's `f_bavail` is a non-root user's, which on ext2/3/4 leaves
out the root reserve (5 % by default) as well as the clusters ext4 keeps from everyone
(`reserved_clusters`, about 2 % of a small file system, for its own metadata under
delayed allocation). Counting from `f_bavail` left ext4 7 % emptier than xfs at the same
"99 %" (issue 59). Here:

- capacity: what root could write on the file system fresh (fresh_capacity, measured
  when it is made), where known; else its blocks less what it keeps from root too (ext4:
  its reserved clusters, /sys/fs/ext4/DEV/reserved_clusters; any other: what statvfs
  keeps from every user, f_bfree − f_bavail: no other file system here reserves for root);
- free: what root can still write (ext4: f_bfree less its reserved clusters; the root
  reserve is free to root and counts as used only once data fills it);
- fill: (capacity − free) / capacity.
"""

from __future__ import annotations

import functools
import os
import time
from dataclasses import dataclass
from pathlib import Path

from fslab.host import system

EXT4_SYSFS = Path("/sys/fs/ext4")
SETTLE_S, SETTLE_STEP_S = 10.0, 0.25  # at most this long, reading this often


@dataclass(frozen=True)
class RootSpace:
    """The space root can write on one file system, in bytes (module doc)."""

    capacity: int
    free: int

    @property
    def fill(self) -> float:
        """The share of the capacity in use (0 for a file system with no capacity)."""
        return 1.0 - self.free / self.capacity if self.capacity > 0 else 0.0


def root_space(path: Path, capacity: int | None = None) -> RootSpace | None:
    """The file system at `path` as root sees it; None when it reports no sizes (fusefat).
    `capacity`: what root could write on it fresh (fresh_capacity), where it is known:
    the one capacity every file system's fill is a share of."""
    stats = os.statvfs(path)
    if stats.f_blocks == 0:
        return None
    unit = stats.f_frsize
    kept = kept_from_root(os.stat(path).st_dev)
    if kept is None:  # no reserve for root: what is kept from users is kept from root
        found = RootSpace((stats.f_blocks - (stats.f_bfree - stats.f_bavail)) * unit,
                          stats.f_bavail * unit)
    else:
        kept_bytes = kept * unit
        found = RootSpace(stats.f_blocks * unit - kept_bytes,
                          max(0, stats.f_bfree * unit - kept_bytes))
    return RootSpace(capacity, found.free) if capacity else found


def fresh_capacity(path: Path) -> int | None:
    """What root can write on a file system just made (its free space now): the capacity
    a fill is a share of. statvfs's own count of blocks differs between file systems in
    what it leaves out: ext4's leaves out its metadata, xfs's counts the space its
    allocation btrees keep in reserve (6.5 % of a fresh 512 MiB xfs reads as used), so a
    fill of f_blocks would hold xfs to less data than ext4."""
    found = root_space(path)
    return found.free if found is not None else None


def settled_space(path: Path, capacity: int | None = None) -> RootSpace | None:
    """The space once deferred frees have landed: caches dropped (the inodes evicted: xfs
    gives back the speculative preallocation it keeps past the end of files appended to
    again and again; its inode inactivation runs in the background), then read after a
    sync until two readings agree (or SETTLE_S passes)."""
    system.sync_and_drop_caches()
    found = root_space(path, capacity)
    deadline = time.monotonic() + SETTLE_S
    while found is not None and time.monotonic() < deadline:
        time.sleep(SETTLE_STEP_S)
        system.sync_file_system(path)
        again = root_space(path, capacity)
        if again == found:
            break
        found = again
    return found


def kept_from_root(device: int) -> int | None:
    """Blocks an ext4 keeps from root too (its reserved clusters; a cluster is a block
    without bigalloc, which fslab does not make), None for any other file system."""
    found = EXT4_SYSFS / _block_name(device) / "reserved_clusters"
    try:
        return int(found.read_text().strip())
    except (OSError, ValueError):
        return None


@functools.lru_cache(maxsize=64)
def _block_name(device: int) -> str:
    """The kernel's name of a block device ('loop3') from its number."""
    link = Path(f"/sys/dev/block/{os.major(device)}:{os.minor(device)}")
    try:
        return link.resolve().name
    except OSError:
        return f"{os.major(device)}:{os.minor(device)}"
