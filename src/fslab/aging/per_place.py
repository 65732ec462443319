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

from dataclasses import dataclass
from pathlib import Path

from fslab.aging.age import age_mounted
from fslab.aging.config import AgingConfig
from fslab.aging.levels import level_config, parameters, with_fstrim
from fslab.aging.room import make_room
from fslab.core.aging_record import AgingRecord, Released
from fslab.parsers.aging_kind import AgingFigures
from fslab.targets import Mounted
from fslab.workloads.aging_levels import AgeLevel

# A utilisation within this of the target counts as reached (a check sees the used share
# between operations: the last file written may stop just short of it).
REACHED_WITHIN = 0.005
OUT_OF_SPACE, NOT_REACHED = "out of space", "not reached"


@dataclass(frozen=True)
class PlaceAging:
    """A place's aging: its level and seed, the aging's record and figures' summary
    (parsers/aging_kind.aging_summary, made in memory), the room made after it and,
    short of the utilisation, `short` and `why`."""

    level: AgeLevel
    seed: int
    config: AgingConfig
    raw: Path  # where its raw output is kept
    record: AgingRecord
    figures: AgingFigures
    released: Released
    short: str = ""  # OUT_OF_SPACE or NOT_REACHED ('' when it reached its utilisation)
    why: str = ""

    def to_json(self) -> dict[str, object]:
        """What the runs on the place record of its aging (its description's `aging`)."""
        record = self.record
        described: dict[str, object] = {
            "level": self.level.name, "seed": self.seed, "recipe": self.config.recipe,
            "ops": record.ops_done, "seconds": round(float(record.seconds), 3),
            "stopped_by": record.stopped_by, "utilization": self.config.utilization,
            "used_max": record.used_max, "used_end": record.used_end, "raw": str(self.raw),
            "study": self.level.study or "", "fstrims": record.fstrims,
            "not_here": list(self.level.cannot)}
        if self.released:
            described["released"] = self.released
        if self.short:
            described.update(short=self.short, why=self.why)
        return described


def age_place(place: Mounted, level: AgeLevel, capacity: int, seed: int,
              out: Path, fstrim: bool | None = None, room: int = 0) -> PlaceAging:
    """Age the provisioned `place` at `level` (sized for `capacity` bytes, seeded; with
    `fstrim` given, trimmed at its probes or never, whatever the level says), keeping its
    raw output in `out`, then make `room` bytes for its runs' files (not when it fell
    short of its utilisation)."""
    config = with_fstrim(level_config(level, capacity, seed), fstrim)
    out.mkdir(parents=True, exist_ok=True)
    aged = age_mounted(place, config, out, parameters(level, config, fstrim))
    short, why = reached(aged.record, config)
    assert place.path is not None
    released = make_room(place.path, room, seed + 1, aged.record.root_capacity) \
        if room and not short else Released()
    return PlaceAging(level, seed, config, out, aged.record, aged.figures(), released,
                      short, why)


def reached(record: AgingRecord, config: AgingConfig) -> tuple[str, str]:
    """('', '') when the aging reached its utilisation (or has none); else (OUT_OF_SPACE
    or NOT_REACHED, why in words)."""
    target = config.utilization
    # an aging that finishes full is judged by where it ended, any other by its peak
    most = record.used_end if config.finish_full else record.used_max
    if target is None or most is None:
        return "", ""
    if float(most) >= target - REACHED_WITHIN or (
            record.deleted_for_space and not config.finish_full):
        return "", ""
    if record.out_of_space:
        return OUT_OF_SPACE, (f"cannot reach its target of {target:.0%} of the space root "
                              f"can write: out of space at {float(most):.1%} "
                              f"({record.out_of_space} writes refused); not measured "
                              "at a fill it did not reach")
    return NOT_REACHED, (f"stopped by {record.stopped_by or 'its end'} at "
                         f"{float(most):.1%} used, short of its target of {target:.0%}: "
                         "give the level more operations (its ops_per_gib in the "
                         "campaign's age_levels table)")
