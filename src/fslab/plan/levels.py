"""How a sweep's level is written: as text (what names a cell and fills its column) and on
the command line. A cell's name is rendered in one place, core/cell_keys.py. Kept apart
from plan/sweep.py so that reading a [[target]] table (plan/target_entries.py) does not
import the sweep's planning back."""

from __future__ import annotations

from typing import Any

from fslab.core.errors import UserError

ZFS_PREFIX = "zfs."  # zfs.PROPERTY: a dataset property (or zfs.ashift) as a factor


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


def parse_flag(text: str) -> tuple[str, list[str]]:
    """`--sweep NAME=V1,V2,...` -> (NAME, [V1, V2, ...]); one clear error otherwise."""
    name, sep, values = text.partition("=")
    name = name.strip()
    levels = [v.strip() for v in values.split(",")] if values.strip() else []
    if not sep or not name or not levels:
        raise UserError(f"bad --sweep {text!r}: use NAME=V1,V2,... e.g. --sweep iodepth=1,8,32 "
                        "(a level with a comma goes in the campaign's [sweep] table)")
    return name, levels
