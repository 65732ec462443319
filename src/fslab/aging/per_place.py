"""Aging as a factor of a campaign: a file system at a level of `age` is aged after it is
made and before the runs on it (run/aging_places.py calls this), its raw output kept in
the results directory (DIR/aged/<target>/i<iteration>/: the files `fslab age` keeps), and
room made for the runs' files the way the aging thesis did (section 6.2: "If the mounted
file system utilize too much space, some files can be randomly deleted").

An aging that cannot reach its utilisation says why: out of space before it (the file
system refused more: as full as it gets, measured and labelled so) or stopped before it
(the level is too short for this file system: its runs fail with that reason).
"""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any

from fslab.aging.age import age_mounted
from fslab.aging.config import AgingConfig
from fslab.aging.levels import level_config, parameters
from fslab.host import system
from fslab.parsers.raw_files import DirFiles
from fslab.targets import Mounted
from fslab.workloads.agedfiles import AGED_TREE
from fslab.workloads.aging_levels import AgeLevel

# A utilisation within this of the target counts as reached (a check sees the used share
# between operations: the last file written may stop just short of it).
REACHED_WITHIN = 0.005
OUT_OF_SPACE, NOT_REACHED = "out of space", "not reached"
ROOM_MARGIN = 1.1  # room made for the runs: their files' bytes and a tenth more


def age_place(place: Mounted, level: AgeLevel, capacity: int, seed: int,
              out: Path) -> dict[str, Any]:
    """Age the provisioned `place` at `level` (sized for `capacity` bytes, seeded);
    return what the runs on it record (its `aging` description: the level, the seed, how
    it went and, short of the utilisation, `short` and `why`) with the figures' summary
    (parsers/aging_kind.aging_summary) under `summary`."""
    config = level_config(level, capacity, seed)
    out.mkdir(parents=True, exist_ok=True)
    record = age_mounted(place, config, out, parameters(level, config))
    short, why = reached(record, config)
    from fslab.parsers.aging_kind import AGING

    parsed = AGING.parse(DirFiles(out))
    described = {"level": level.name, "seed": seed, "recipe": config.recipe,
                 "ops": record["ops_done"], "seconds": round(float(record["seconds"]), 3),
                 "stopped_by": record["stopped_by"], "utilization": config.utilization,
                 "used_max": record.get("used_max"), "used_end": record.get("used_end"),
                 "raw": str(out), "study": level.study or "",
                 "not_here": list(level.cannot)}
    if short:
        described.update(short=short, why=why)
    return {**described, "summary": parsed.metadata.get("aging", {})}


def reached(record: dict[str, Any], config: AgingConfig) -> tuple[str, str]:
    """('', '') when the aging reached its utilisation (or has none); else (OUT_OF_SPACE
    or NOT_REACHED, why in words)."""
    target = config.utilization
    most = record.get("used_max")
    if target is None or most is None:
        return "", ""
    if record.get("deleted_for_space") or float(most) >= target - REACHED_WITHIN:
        return "", ""
    if record.get("out_of_space"):
        return OUT_OF_SPACE, (f"ran out of space at {float(most):.1%} used before its "
                              f"target of {target:.0%} ({record['out_of_space']} writes "
                              "refused): the file system keeps the rest")
    return NOT_REACHED, (f"stopped by {record.get('stopped_by') or 'its end'} at "
                         f"{float(most):.1%} used, short of its target of {target:.0%}: "
                         "give the level more operations (its ops_per_gib in the "
                         "campaign's age_levels table)")


def make_room(place: Mounted, need: int, seed: int) -> dict[str, Any]:
    """Delete random aged files until the runs' `need` bytes (and a tenth more) are free;
    what was released ({} when nothing had to be).

    Free space is read again after each batch, not added up from the files' sizes: an
    ext4 filled past its root reserve (the aging writes as root) shows none available
    until the reserve is back, so the first bytes deleted free nothing a run may use."""
    assert place.path is not None
    root = place.path / AGED_TREE
    wanted = int(need * ROOM_MARGIN)
    free = _available(place.path)
    if free >= wanted or not root.is_dir():
        return {}
    files = sorted(str(p) for p in root.rglob("*") if p.is_file())
    random.Random(seed).shuffle(files)
    released, count = 0, 0
    while free < wanted and count < len(files):
        short = wanted - free
        batch = 0
        while batch < short and count < len(files):
            size = os.stat(files[count]).st_blocks * 512
            os.unlink(files[count])
            batch += size
            count += 1
        released += batch
        system.sync_file_system(place.path)
        free = _available(place.path)
    stats = os.statvfs(place.path)
    return {"files": count, "bytes": released,
            "used_after": 1.0 - stats.f_bfree / stats.f_blocks if stats.f_blocks else None}


def _available(path: Path) -> int:
    """Bytes a run (not root) may write on the file system at `path`."""
    stats = os.statvfs(path)
    return stats.f_bavail * stats.f_frsize
