"""Aging as a factor of a campaign: a file system at a level of `age` is aged after it is
made and before the runs on it (run/aging_places.py calls this), its raw output kept in
the results directory (DIR/aged/<target>/i<iteration>/: the files `fslab age` keeps), then
room made for its runs' files (aging/room.py: the thesis's protocol), before its fresh
twin copies its tree.

An aging that cannot reach its utilisation says why, and its place's runs fail with
that reason (a level a file system cannot reach is said, not measured at another fill):
out of space before it (the file system refused more) or stopped before it (the level is
too short for this file system). Utilisation is the fill of the space root can write
(host/space.py), the same measure on every file system.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fslab.aging.age import age_mounted
from fslab.aging.config import AgingConfig
from fslab.aging.levels import level_config, parameters, with_fstrim
from fslab.aging.room import make_room
from fslab.parsers.aging_kind import AGING
from fslab.parsers.raw_files import DirFiles
from fslab.targets import Mounted
from fslab.workloads.aging_levels import AgeLevel

# A utilisation within this of the target counts as reached (a check sees the used share
# between operations: the last file written may stop just short of it).
REACHED_WITHIN = 0.005
OUT_OF_SPACE, NOT_REACHED = "out of space", "not reached"


def age_place(place: Mounted, level: AgeLevel, capacity: int, seed: int,
              out: Path, fstrim: bool | None = None, room: int = 0) -> dict[str, Any]:
    """Age the provisioned `place` at `level` (sized for `capacity` bytes, seeded; with
    `fstrim` given, trimmed at its probes or never, whatever the level says), then make
    `room` bytes for its runs' files; return what the runs on it record (its `aging`
    description: the level, the seed, how it went, what was released and, short of the
    utilisation, `short` and `why`) with the figures' summary
    (parsers/aging_kind.aging_summary) under `summary`."""
    config = with_fstrim(level_config(level, capacity, seed), fstrim)
    out.mkdir(parents=True, exist_ok=True)
    record = age_mounted(place, config, out, parameters(level, config, fstrim))
    short, why = reached(record, config)
    assert place.path is not None
    released = make_room(place.path, room, seed + 1, record.get("root_capacity")) \
        if room and not short else {}

    parsed = AGING.parse(DirFiles(out))
    described = {"level": level.name, "seed": seed, "recipe": config.recipe,
                 "ops": record["ops_done"], "seconds": round(float(record["seconds"]), 3),
                 "stopped_by": record["stopped_by"], "utilization": config.utilization,
                 "used_max": record.get("used_max"), "used_end": record.get("used_end"),
                 "raw": str(out), "study": level.study or "", "fstrims": record["fstrims"],
                 "not_here": list(level.cannot)}
    if released:
        described["released"] = released
    if short:
        described.update(short=short, why=why)
    return {**described, "summary": parsed.metadata.get("aging", {})}


def reached(record: dict[str, Any], config: AgingConfig) -> tuple[str, str]:
    """('', '') when the aging reached its utilisation (or has none); else (OUT_OF_SPACE
    or NOT_REACHED, why in words)."""
    target = config.utilization
    # an aging that finishes full is judged by where it ended, any other by its peak
    most = record.get("used_end" if config.finish_full else "used_max")
    if target is None or most is None:
        return "", ""
    if float(most) >= target - REACHED_WITHIN or (
            record.get("deleted_for_space") and not config.finish_full):
        return "", ""
    if record.get("out_of_space"):
        return OUT_OF_SPACE, (f"cannot reach its target of {target:.0%} of the space root "
                              f"can write: out of space at {float(most):.1%} "
                              f"({record['out_of_space']} writes refused); not measured "
                              "at a fill it did not reach")
    return NOT_REACHED, (f"stopped by {record.get('stopped_by') or 'its end'} at "
                         f"{float(most):.1%} used, short of its target of {target:.0%}: "
                         "give the level more operations (its ops_per_gib in the "
                         "campaign's age_levels table)")
