"""The aging directory's format (aging.json "format"), with its history.

Readers accept every format up to the current one (what an older directory lacks, they
rebuild from what it has: latency.csv from oplog.parquet) and refuse a newer one in
one line, as results directories do (store.FORMAT_VERSION).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fslab.errors import UserError

FORMAT = 2
HISTORY = {
    1: "aging.json, oplog.parquet, utilization.csv, fragmentation.json, image + image.json",
    2: "latency.csv and aging.json latency_us (per-operation medians and means with "
       "intervals); image.json: fs_bytes, made_on, as_target; zstd and metadata images",
}


def check(record: Any, path: Path) -> dict[str, Any]:
    """The record of an aging directory, if this fslab can read its format."""
    if not isinstance(record, dict):
        raise UserError(f"{path}: aging.json is not an object")
    version = record.get("format", 1)
    if not isinstance(version, int) or version < 1:
        raise UserError(f"{path}: aging.json has a bad format {version!r}")
    if version > FORMAT:
        raise UserError(f"{path} was written by a newer fslab (aging format {version}; this "
                        f"one reads up to {FORMAT}): upgrade fslab")
    return record
