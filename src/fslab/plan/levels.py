"""How a sweep's level is written: as text (what names a cell and fills its column), in a
cell's name ("ext4 mount_options=noatime"), as a file name, and on the command line.
Kept apart from plan/sweep.py so that reading a [[target]] table (plan/targets.py) does
not import the sweep's planning back."""

from __future__ import annotations

import re
from typing import Any

from fslab.core.errors import UserError

Level = tuple[str, str]  # (factor, level)
ZFS_PREFIX = "zfs."  # zfs.PROPERTY: a dataset property (or zfs.ashift) as a factor
NONE_SHOWN = "(none)"  # an empty level (the file system's defaults), as printed


def level_text(value: Any) -> str:
    """A level as text (what names a cell and fills its column): 8, "16k", true -> "1",
    1.5, ["-b", "1024"] -> "-b 1024"."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, list | tuple):
        return " ".join(level_text(v) for v in value)
    return str(value).strip()


def shown(level: str) -> str:
    return level if level else NONE_SHOWN


def cell_name(base: str, levels: tuple[Level, ...]) -> str:
    """'ext4 mount_options=noatime', 'randread iodepth=16 numjobs=4'."""
    return " ".join([base, *(f"{name}={shown(level)}" for name, level in levels)])


def path_name(name: str) -> str:
    """A cell's name as a file name (run ids, work directories): spaces and '=' spelled
    with characters every tool takes ('ext4 mount_options=noatime' ->
    'ext4_mount_options-noatime'); a name without levels is its own."""
    return re.sub(r"[^A-Za-z0-9_.+-]", "-", name.replace(" ", "_"))


def workdir_name(workload: str) -> str:
    """The directory a run's files lie in on its target ('fslab-randread_iodepth-8')."""
    return f"fslab-{path_name(workload)}"


def parse_flag(text: str) -> tuple[str, list[str]]:
    """`--sweep NAME=V1,V2,...` -> (NAME, [V1, V2, ...]); one clear error otherwise."""
    name, sep, values = text.partition("=")
    name = name.strip()
    levels = [v.strip() for v in values.split(",")] if values.strip() else []
    if not sep or not name or not levels:
        raise UserError(f"bad --sweep {text!r}: use NAME=V1,V2,... e.g. --sweep iodepth=1,8,32 "
                        "(a level with a comma goes in the campaign's [sweep] table)")
    return name, levels


