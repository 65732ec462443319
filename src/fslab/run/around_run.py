"""Around each run on an aged target: its free-space fragmentation before and after the
run, and `fstrim` before it when the target asks (`fstrim = true`).

The aging thesis (seed 004, section 6.2) ran its tests this way: "pre-test fragmentation
is logged and environment is initialized" (sync, fstrim, dropped caches), and "when the
test is over, post-test fragmentation is gathered", with the test's files still in place.
A fresh counterpart of an aged target (`fresh_copy_of`) is probed too, so the two can be
set side by side. Both land in run.json (`workload_metadata.around_run`).
"""

from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from fslab.core.aging_record import FreeSpaceSeen
from fslab.host import system
from fslab.host.space import root_space
from fslab.probes.freespace import of_mounted as free_space
from fslab.targets import Mounted
from fslab.targets.base import AGE_LEVEL

WHY = ("free-space fragmentation before and after the run on an aged target, fstrim before "
       "it when asked (the aging study's protocol, section 6.2), the fill of the space "
       "root can write at its start")
# Target options that make a target aged (or its twin): aged once, from an image, a fresh
# copy of one, or a level of the `age` factor (fresh among them: the aged levels' twin).
PROBED = ("age", "image", "fresh_copy_of", AGE_LEVEL)


@dataclass
class AroundRun:
    """What was done and seen around one run (run.json `workload_metadata.around_run`):
    the free space before and after it (probes.freespace, as JSON), the trim before it."""

    free_space_before: FreeSpaceSeen | None = None
    free_space_after: FreeSpaceSeen | None = None
    fstrim: dict[str, object] | None = None
    # the fill at the run's start (room made for it): the share of the space root could
    # write on the fresh file system (host/space.py), the same measure on every one
    fill: float | None = None

    def to_json(self) -> dict[str, object]:
        found = {"free_space_before": self.free_space_before, "fstrim": self.fstrim,
                 "free_space_after": self.free_space_after, "fill": self.fill}
        return {**{k: v for k, v in found.items() if v is not None}, "why": WHY}


def before_run(place: Mounted, options: Mapping[str, object]) -> AroundRun | None:
    """Probe the free space, then trim when asked; None for a target neither applies to."""
    probed = any(key in options for key in PROBED)
    trim = bool(options.get("fstrim"))
    if place.path is None or not (probed or trim):
        return None
    capacity = place.description.details.get("root_capacity")
    space = root_space(place.path, capacity if isinstance(capacity, int) else None) \
        if probed else None
    return AroundRun(free_space_before=free_space(place) if probed else None,
                     fstrim=fstrim(place.path) if trim else None,
                     fill=round(space.fill, 5) if space is not None else None)


def after_run(place: Mounted, record: AroundRun | None,
              metadata: dict[str, object]) -> None:
    """The free space once the run is over (its files still there), into the run's
    metadata with what was recorded before it."""
    if record is None:
        return
    if record.free_space_before is not None:
        record.free_space_after = free_space(place)
    metadata["around_run"] = record.to_json()


TRIMMED = re.compile(r"\((\d+) bytes\) trimmed")


def fstrim(mountpoint: Path) -> dict[str, object]:
    """Trim the mounted file system (sync first, as the study did): bytes and seconds, or
    why it could not."""
    system.sync_file_system(mountpoint)
    start = time.perf_counter()
    try:
        done = subprocess.run(["fstrim", "-v", str(mountpoint)], capture_output=True,
                              text=True, timeout=600, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return {"done": False, "reason": f"fstrim: {exc}"}
    seconds = round(time.perf_counter() - start, 3)
    if done.returncode != 0:
        return {"done": False, "seconds": seconds,
                "reason": (done.stderr.strip() or f"exit {done.returncode}")[:200]}
    match = TRIMMED.search(done.stdout)
    return {"done": True, "seconds": seconds,
            "trimmed_bytes": int(match.group(1)) if match else None}
