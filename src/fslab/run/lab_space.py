"""The room a campaign's images take on the lab's disk.

An image is sparse: mkfs writes its metadata into it and the runs their files, each block
taken from the lab's disk as it is written. A lab whose disk cannot hold that fails mkfs
part-way ("Input/output error while writing out and closing file system", measured with
mkfs.ext4 on a loop device over a full tmpfs), or a run's writes. So each target is
checked before it is made, and a failure to make one is read against the disk again
after; a campaign is checked before it starts (`fslab doctor CAMPAIGN`, `fslab run
--dry-run`, the machine line at the start of a run).
"""

from __future__ import annotations

import contextlib
import shutil
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from fslab.core.units import format_bytes
from fslab.host import freeing, loops
from fslab.plan.order import RunSpec
from fslab.targets import Target


@dataclass(frozen=True)
class LabNeed:
    """Bytes of the lab's disk a campaign needs: `total` with every target made at once
    (an iteration's targets all stand while its rounds interleave), `least` for its
    smallest run (with less free, no run can be made)."""

    total: int
    least: int

    def line(self, root: Path) -> str:
        """The lab's free space against the need, as `fslab run --dry-run` says it."""
        if not self.total:
            return f"lab: {format_bytes(lab_free(root))} free at {root}; no image is made there"
        return (f"lab: {format_bytes(lab_free(root))} free at {root}; the campaign's images "
                f"take about {format_bytes(self.total)} with every target made at once, "
                f"{format_bytes(self.least)} for its smallest run")

    def shortfall(self, root: Path) -> str:
        """Why the campaign cannot start for want of room ('' when its smallest run fits)."""
        free = lab_free(root)
        if free >= self.least:
            return ""
        return (f"the lab's disk has {format_bytes(free)} free at {root}; the smallest "
                f"target of the campaign needs about {format_bytes(self.least)}: free some "
                "space there, or use --lab DIR on a larger disk")


def campaign_need(runs: Sequence[RunSpec], targets: Mapping[str, Target]) -> LabNeed:
    """The room `runs` take in the lab: each target's with its largest run's files, all
    of them at once, and the smallest run's."""
    by_target: dict[str, int] = {}
    needs = []
    for run in runs:
        need = targets[run.target.name].lab_bytes(run.workload.required_bytes())
        by_target[run.target.name] = max(by_target.get(run.target.name, 0), need)
        needs.append(need)
    return LabNeed(sum(by_target.values()), min(needs, default=0))


def lab_free(root: Path) -> int:
    """Free bytes on the disk that holds `root` (its nearest existing parent's)."""
    where = Path(root)
    while not where.exists() and where != where.parent:
        where = where.parent
    return shutil.disk_usage(where).free


RELEASE_S = 30.0  # how long an image's loop device may take to let go of its blocks


def free_once_released(root: Path, need: int) -> int:
    """Free bytes at `root`, once images removed from the lab have been freed (a busy
    host takes seconds: the next target's check read the disk before the last one's
    blocks came back), up to RELEASE_S; at once when nothing is being released or the
    need fits. Being released: a loop device still bound to a removed image
    (host/loops.releasing), or an image fslab removed whose blocks the disk has not
    given back yet (host/freeing: the kernel drops the file after the loop device
    stopped naming it)."""
    deadline = time.monotonic() + RELEASE_S
    free = lab_free(root)
    while free < need and time.monotonic() < deadline and _being_released(Path(root)):
        time.sleep(0.2)
        free = lab_free(root)
    return free


def _being_released(root: Path) -> bool:
    """Whether an image under `root` is still on its way out (see free_once_released)."""
    return bool(loops.releasing(root)) or freeing.on_its_way(root)


def held_by(folder: Path) -> int:
    """Bytes the files in `folder` take on its disk (a session's images: sparse)."""
    held = 0
    for path in folder.glob("*") if folder.is_dir() else ():
        with contextlib.suppress(OSError):
            held += path.stat().st_blocks * 512
    return held


def short_of_room(name: str, need: int, free: int, root: Path) -> str:
    """Why target `name` is not made: it needs `need` bytes of the lab's disk, which
    has `free`."""
    return (f"the lab's disk has {format_bytes(free)} free at {root}; target {name} needs "
            f"about {format_bytes(need)} (its image's file system and the run's files): "
            "it was not made")


def filled_while_made(name: str, need: int, had: int, now: int, root: Path) -> str:
    """Why target `name` could not be made: the lab's disk filled while it was."""
    return (f"the lab's disk at {root} filled while target {name} was made: it needs "
            f"about {format_bytes(need)}, had {format_bytes(had)} free before and "
            f"{format_bytes(now)} after; its image was removed")
