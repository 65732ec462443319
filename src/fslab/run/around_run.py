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
from pathlib import Path
from typing import Any

from fslab.host import system
from fslab.probes.freespace import of_mounted as free_space
from fslab.targets import Mounted
from fslab.targets.base import AGE_LEVEL

WHY = ("free-space fragmentation before and after the run on an aged target, fstrim before "
       "it when asked (the aging study's protocol, section 6.2)")
# Target options that make a target aged (or its twin): aged once, from an image, a fresh
# copy of one, or a level of the `age` factor (fresh among them: the aged levels' twin).
PROBED = ("age", "image", "fresh_copy_of", AGE_LEVEL)


def before_run(place: Mounted, options: dict[str, Any]) -> dict[str, Any] | None:
    """Probe the free space, then trim when asked; None for a target neither applies to."""
    probed = any(key in options for key in PROBED)
    trim = bool(options.get("fstrim"))
    if place.path is None or not (probed or trim):
        return None
    record: dict[str, Any] = {}
    if probed:
        record["free_space_before"] = free_space(place)
    if trim:
        record["fstrim"] = fstrim(place.path)
    return record


def after_run(place: Mounted, record: dict[str, Any] | None,
              metadata: dict[str, Any]) -> None:
    """The free space once the run is over (its files still there), into the run's
    metadata with what was recorded before it."""
    if record is None:
        return
    if "free_space_before" in record:
        record["free_space_after"] = free_space(place)
    metadata["around_run"] = {**record, "why": WHY}


TRIMMED = re.compile(r"\((\d+) bytes\) trimmed")


def fstrim(mountpoint: Path) -> dict[str, Any]:
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
