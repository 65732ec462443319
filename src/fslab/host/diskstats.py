"""Per-device I/O statistics of a run: what each block device under the target did.

fio reports them itself (`disk_util`: ios, merges, ticks, in_queue, util per device, and
for md arrays their members) when it can map the file system to its devices; for a btrfs
raid1 it cannot (the file system's device number is anonymous), so fslab reads the same
counters from /sys/block/<device>/stat before and after the run. Either way a mirror's
read split between its members shows (the RAID-1 study printed 63,618 vs 16,184 reads).
Both are kept in run.json (`disk_stats`), with where they came from.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from fslab.core.record import RunRecord
from fslab.core.run_parts import TargetDescription

# /sys/block/<dev>/stat, in order (Documentation/block/stat.rst); ticks in ms.
STAT_FIELDS = ("read_ios", "read_merges", "read_sectors", "read_ticks", "write_ios",
               "write_merges", "write_sectors", "write_ticks", "in_flight", "io_ticks",
               "in_queue")
KEPT = ("read_ios", "write_ios", "read_merges", "write_merges", "read_ticks", "write_ticks",
        "in_queue")
SYS_BLOCK = Path("/sys/block")


def members(description: TargetDescription) -> list[str]:
    """The target's block devices, from its description: a mirror's members, or its one
    loop device (image-less and FUSE-on-file targets have none)."""
    devices = description.devices or ((description.device,) if description.device else ())
    return [Path(d).name for d in devices]


def _counters(name: str) -> dict[str, int] | None:
    try:
        values = (SYS_BLOCK / name / "stat").read_text().split()
    except OSError:
        return None
    return {field: int(value) for field, value in zip(STAT_FIELDS, values, strict=False)}


@dataclass
class DeviceCount:
    """One device's counters over a run (or the sum over a run's slices): its member
    number in the target, its name, the KEPT counters and how busy it was (util, %)."""

    member: int
    name: str
    counts: dict[str, int] = field(default_factory=dict)  # KEPT -> the difference
    util: float = 0.0

    def to_json(self) -> dict[str, object]:
        return {"member": self.member, "name": self.name, **self.counts, "util": self.util}

    @classmethod
    def from_json(cls, row: dict[str, Any]) -> DeviceCount:
        return cls(int(row["member"]), str(row["name"]),
                   {key: int(row.get(key, 0)) for key in KEPT}, float(row.get("util", 0.0)))


@dataclass
class DiskStats:
    """What a run's devices did (run.json `disk_stats`) and where the figures came from."""

    source: str = ""
    devices: list[DeviceCount] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        """As run.json holds it ({} when no device was counted)."""
        if not self.devices:
            return {}
        return {"source": self.source, "devices": [d.to_json() for d in self.devices]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> DiskStats:
        return cls(str(data.get("source", "")),
                   [DeviceCount.from_json(row) for row in data.get("devices") or []
                    if isinstance(row, dict)])


@contextmanager
def sampled(devices: list[str]) -> Iterator[DiskStats]:
    """Yield the disk statistics that hold, after the block, each device's counters over
    it (fio's disk_util fields; util = the share of the time the device was busy, in %)."""
    found = DiskStats()
    before = {name: _counters(name) for name in devices}
    started = time.monotonic()
    try:
        yield found
    finally:
        elapsed_ms = (time.monotonic() - started) * 1000
        for index, name in enumerate(devices, start=1):
            after = _counters(name)
            first = before.get(name)
            if after is None or first is None:
                continue
            busy = after["io_ticks"] - first["io_ticks"]
            found.devices.append(DeviceCount(
                index, name, {key: after[key] - first[key] for key in KEPT},
                round(100 * busy / elapsed_ms, 2) if elapsed_ms > 0 else 0.0))
        if found.devices:
            found.source = "/sys/block (counters before and after the run)"


def add_up(samples: list[DiskStats]) -> DiskStats:
    """One run measured in slices: each member's counters summed over the slices (util:
    their mean)."""
    totals: dict[int, DeviceCount] = {}
    count: dict[int, int] = {}
    for sample in samples:
        for row in sample.devices:
            total = totals.setdefault(row.member, DeviceCount(
                row.member, row.name, {key: 0 for key in KEPT}))
            for key in KEPT:
                total.counts[key] += row.counts.get(key, 0)
            total.util += row.util
            count[row.member] = count.get(row.member, 0) + 1
    for member, total in totals.items():
        total.util = round(total.util / count[member], 2)
    return DiskStats("/sys/block (counters before and after each slice, summed)",
                     [totals[m] for m in sorted(totals)]) if totals else DiskStats()


class MemberSplit(NamedTuple):
    """A member of a multi-device target, per target and workload: its reads and writes
    summed over the ok runs, and its share of the target's reads."""

    target: str
    workload: str
    member: int
    device: str
    read_ios: int
    write_ios: int
    read_share: float
    source: str  # fio's figures, or fslab's from /sys/block


SPLIT_COLUMNS = list(MemberSplit._fields)


def split_rows(records: Iterable[RunRecord]) -> list[MemberSplit]:
    """Per target, workload and member of a multi-device target: reads and writes summed
    over its ok runs and the member's share of the reads (fio's figures where fio gave
    them for the members, else fslab's from /sys/block)."""
    totals: dict[tuple[str, str, int], MemberSplit] = {}
    for record in records:
        if record.status != "ok":
            continue
        stats = DiskStats.from_json(record.workload_metadata.section("disk_stats"))
        if len(stats.devices) < 2:
            continue
        for row in stats.devices:
            key = (record.target, record.workload, row.member)
            total = totals.get(key) or MemberSplit(record.target, record.workload,
                                                   row.member, row.name, 0, 0, math.nan,
                                                   stats.source)
            totals[key] = total._replace(
                read_ios=total.read_ios + row.counts.get("read_ios", 0),
                write_ios=total.write_ios + row.counts.get("write_ios", 0))
    out = sorted(totals.values(), key=lambda r: (r.target, r.workload, r.member))
    reads: dict[tuple[str, str], int] = {}
    for each in out:
        reads[(each.target, each.workload)] = reads.get((each.target, each.workload),
                                                        0) + each.read_ios
    return [each._replace(read_share=round(each.read_ios / total, 4) if total else math.nan)
            for each in out for total in (reads[(each.target, each.workload)],)]
