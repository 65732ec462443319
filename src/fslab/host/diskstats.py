"""Per-device I/O statistics of a run: what each block device under the target did.

fio reports them itself (`disk_util`: ios, merges, ticks, in_queue, util per device, and
for md arrays their members) when it can map the file system to its devices; for a btrfs
raid1 it cannot (the file system's device number is anonymous), so fslab reads the same
counters from /sys/block/<device>/stat before and after the run. Either way a mirror's
read split between its members shows (the RAID-1 study printed 63,618 vs 16,184 reads).
Both are kept in run.json (`disk_stats`), with where they came from.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

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


@contextmanager
def sampled(devices: list[str]) -> Iterator[dict[str, Any]]:
    """Yield a dict that holds, after the block, each device's counters over it (fio's
    disk_util fields; util = the share of the time the device was busy, in %)."""
    found: dict[str, Any] = {}
    before = {name: _counters(name) for name in devices}
    started = time.monotonic()
    try:
        yield found
    finally:
        elapsed_ms = (time.monotonic() - started) * 1000
        rows = []
        for index, name in enumerate(devices, start=1):
            after = _counters(name)
            first = before.get(name)
            if after is None or first is None:
                continue
            row: dict[str, Any] = {"member": index, "name": name}
            row.update({key: after[key] - first[key] for key in KEPT})
            busy = after["io_ticks"] - first["io_ticks"]
            row["util"] = round(100 * busy / elapsed_ms, 2) if elapsed_ms > 0 else 0.0
            rows.append(row)
        if rows:
            found.update(source="/sys/block (counters before and after the run)",
                         devices=rows)


def from_fio(data: dict[str, Any]) -> list[dict[str, Any]]:
    """fio's own disk_util entries, as fio names their fields (md arrays keep their
    aggr_* fields, which describe the members fio found)."""
    entries = data.get("disk_util")
    return [dict(entry) for entry in entries if isinstance(entry, dict)] if isinstance(
        entries, list) else []


def add_up(samples: list[dict[str, Any]]) -> dict[str, Any]:
    """One run measured in slices: each member's counters summed over the slices (util:
    their mean)."""
    totals: dict[int, dict[str, Any]] = {}
    count: dict[int, int] = {}
    for sample in samples:
        for row in sample.get("devices", []):
            member = int(row["member"])
            total = totals.setdefault(member, {"member": member, "name": row["name"],
                                               **{key: 0 for key in KEPT}, "util": 0.0})
            for key in KEPT:
                total[key] += row[key]
            total["util"] += row["util"]
            count[member] = count.get(member, 0) + 1
    for member, total in totals.items():
        total["util"] = round(total["util"] / count[member], 2)
    return {"source": "/sys/block (counters before and after each slice, summed)",
            "devices": [totals[m] for m in sorted(totals)]} if totals else {}


SPLIT_COLUMNS = ["target", "workload", "member", "device", "read_ios", "write_ios",
                 "read_share", "source"]


def split_rows(records: Iterable[Any]) -> list[dict[str, Any]]:
    """Per target, workload and member of a multi-device target: reads and writes summed
    over its ok runs and the member's share of the reads (fio's figures where fio gave
    them for the members, else fslab's from /sys/block)."""
    totals: dict[tuple[str, str, int], dict[str, Any]] = {}
    for record in records:
        if record.status != "ok":
            continue
        stats = record.workload_metadata.section("disk_stats")
        devices = stats.get("devices") or []
        if len(devices) < 2:
            continue
        for row in devices:
            key = (record.target, record.workload, int(row["member"]))
            total = totals.setdefault(key, {"target": record.target,
                                            "workload": record.workload,
                                            "member": int(row["member"]),
                                            "device": row["name"], "read_ios": 0,
                                            "write_ios": 0, "source": stats.get("source", "")})
            total["read_ios"] += int(row["read_ios"])
            total["write_ios"] += int(row["write_ios"])
    out = sorted(totals.values(), key=lambda r: (r["target"], r["workload"], r["member"]))
    for row in out:
        reads = sum(r["read_ios"] for r in out
                    if (r["target"], r["workload"]) == (row["target"], row["workload"]))
        row["read_share"] = round(row["read_ios"] / reads, 4) if reads else float("nan")
    return out
