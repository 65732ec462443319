"""The aging directory's format (aging.json "format"), with its history.

The same machinery as results directories (fslab.dirformat): readers accept every
format up to the current one (what an older directory lacks, they rebuild from what it
has: latency.csv from oplog.parquet) and refuse a newer one in one line.
"""

from __future__ import annotations

from pathlib import Path

from fslab.dirformat import DirFormat

AGING = DirFormat("aging", "aging.json", unstamped=1, history={
    1: "aging.json, oplog.parquet, utilization.csv, fragmentation.json, image + image.json",
    2: "latency.csv and aging.json latency_us (per-operation medians and means with "
       "intervals); image.json: fs_bytes, made_on, as_target; zstd and metadata images",
})


def is_aging_dir(path: Path) -> bool:
    return (Path(path) / AGING.marker).is_file()
