"""A swept cell's name, read back: its job, its configuration, its file system, and its
levels in the campaign's order. plan/sweep.py writes the names ("ext4
mount_options=noatime" on "randread iodepth=8"); the analysis and the report read them
here. Plan names never hold spaces, so a name's first word is the job's or target's own.
"""

from __future__ import annotations

import math
from typing import Any

from fslab.core.errors import UserError
from fslab.core.units import parse_size


def job_of(workload: str) -> str:
    """'randread iodepth=8' -> 'randread'; 'hpc iodepth=8/hpc-read' -> 'hpc/hpc-read'."""
    head, _, section = str(workload).partition("/")
    job = head.split(" ", 1)[0]
    return f"{job}/{section}" if section else job


def workload_levels(workload: str) -> str:
    """'randread iodepth=8 numjobs=4' -> 'iodepth=8 numjobs=4' ('' without levels)."""
    head = str(workload).partition("/")[0]
    return head.split(" ", 1)[1] if " " in head else ""


def configuration(target: str, workload: str) -> str:
    """The configuration a cell measures: its target and its workload's levels."""
    levels = workload_levels(workload)
    return f"{target} {levels}" if levels else str(target)


def target_base(target: str) -> str:
    """'ext4 mount_options=noatime' -> 'ext4' (the file system a variant is of)."""
    return str(target).split(" ", 1)[0]


def declared_levels(settings: dict[str, Any]) -> dict[str, list[str]]:
    """{factor: levels in the campaign's order} from the resolved campaign.toml: its
    [sweep] table and the lists its [[target]] tables give (plan/sweep.py wrote both as
    the text that names each level)."""
    out: dict[str, list[str]] = {}

    def add(name: str, levels: list[Any]) -> None:
        have = out.setdefault(name, [])
        have += [text for text in map(_text, levels) if text not in have]

    for name, levels in (settings.get("sweep") or {}).items():
        if isinstance(levels, list) and len(levels) > 1:
            add(str(name), levels)
    for entry in settings.get("target") or []:
        for key in ("mount_options", "scale"):
            if isinstance(entry.get(key), list):
                add(key, entry[key])
        mkfs = entry.get("mkfs_options")
        if isinstance(mkfs, list) and any(isinstance(v, list) for v in mkfs):
            add("mkfs_options", mkfs)
        for key, value in (entry.get("options") or {}).items():
            if isinstance(value, list):
                add(f"zfs.{key}", value)
    return out


def _text(value: Any) -> str:
    if isinstance(value, list):
        return " ".join(map(_text, value))
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def ordered(levels: list[str], declared: list[str] | None) -> list[str]:
    """The levels present, in the campaign's order; others after, numbers ascending."""
    present = list(dict.fromkeys(str(v) for v in levels))
    first = [v for v in (declared or []) if v in present]
    rest = sorted((v for v in present if v not in first), key=_sort_key)
    return first + rest


def levels_key(levels: str) -> tuple[tuple[int, float, str], ...]:
    """A cell's levels ('iodepth=16 numjobs=4') as a sort key: numbers ascending (4
    before 16), words alphabetically."""
    return tuple(_sort_key(part.partition("=")[2]) for part in levels.split())


def _sort_key(text: str) -> tuple[int, float, str]:
    number = numeric(text)
    return (0, number, "") if math.isfinite(number) else (1, 0.0, text)


def numeric(text: str) -> float:
    """A level as a number ('8' -> 8.0, '16k' -> 16384.0), NaN when it is not one."""
    try:
        return float(text)
    except (TypeError, ValueError):
        pass
    try:
        return float(parse_size(str(text)))
    except UserError:
        return math.nan


def is_numeric(levels: list[str]) -> bool:
    """Whether every level is a number (a factor drawn on an axis, not as categories)."""
    return bool(levels) and all(math.isfinite(numeric(v)) for v in levels)
