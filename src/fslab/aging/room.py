"""Room for the runs on an aged file system, made the way the aging thesis did (section
6.2: "If the mounted file system utilize too much space, some files can be randomly
deleted"): random aged files deleted until the runs' files fit with a tenth to spare.

It is made once, right after the aging (and, in an age sweep, before the fresh twin
copies the tree: the twin holds the same files as the place its runs are compared with),
for the most any run on the place (or its twin) needs, so every run of the place begins
at the same fill; files larger than what is still missing are passed over while smaller
ones remain, so that fill is the same mark on every file system. Free space is what
root can write (host/space.py), as the runs write as root: on every file system the
same way (counted from a non-root user's space, ext4's 5 % root reserve was freed too,
and its runs began 7 points emptier than xfs's). It is read again after each batch,
once deferred frees have landed (xfs frees a deleted file's blocks in the background),
not added up from the files' sizes.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

from fslab.core.aging_record import Released
from fslab.host.space import root_space, settled_space
from fslab.workloads.agedfiles import AGED_TREE

ROOM_MARGIN = 1.1  # room made for the runs: their files' bytes and a tenth more
OVERSHOOT = 0.004  # of the capacity: how far past the room a deleted file may go


def make_room(mountpoint: Path, need: int, seed: int,
              capacity: int | None = None) -> Released:
    """Delete random aged files until `need` bytes (and a tenth more) are free to root;
    what was released ({} when nothing had to be): files, bytes, the fill after (of
    `capacity`, what root could write fresh, where known).

    A file larger than what is still missing (and OVERSHOOT of the capacity) is passed
    over while smaller ones remain, so the fill the runs begin at lies within OVERSHOOT
    of the same mark on every file system, whatever its largest files."""
    root = mountpoint / AGED_TREE
    wanted = int(need * ROOM_MARGIN)
    space = root_space(mountpoint)
    if space is None or space.free >= wanted or not root.is_dir():
        return Released()
    slack = int(space.capacity * OVERSHOOT)
    files = sorted(str(p) for p in root.rglob("*") if p.is_file())
    random.Random(seed).shuffle(files)
    released, count, free = 0, 0, space.free
    while free < wanted and files:
        missing, kept = wanted - free, []
        for path in files:
            size = os.stat(path).st_blocks * 512
            if missing <= 0 or size > missing + slack:
                kept.append(path)
                continue
            os.unlink(path)
            released, count, missing = released + size, count + 1, missing - size
        if len(kept) == len(files):  # every file too large: the smallest of them
            smallest = min(kept, key=lambda path: os.stat(path).st_blocks)
            released += os.stat(smallest).st_blocks * 512
            os.unlink(smallest)
            kept.remove(smallest)
            count += 1
        files = kept
        settled = settled_space(mountpoint)  # xfs frees a deleted file's blocks later
        free = settled.free if settled is not None else wanted
    after = root_space(mountpoint, capacity)
    return Released(files=count, bytes=released,
                    used_after=after.fill if after is not None else None)


