"""The zfs pools a campaign measured, as they were built (stats/zfs_pools.csv): each zfs
target's layout and devices, its log and cache devices, the ARC's maximum with where that
figure comes from, its cache properties as zfs reported them, and what implemented it —
read from each run's target description (targets/zfs.py), so a pool's build is a table
beside its results and not only a line in run.json."""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

from fslab.analysis.step import Step
from fslab.core.record import RunRecord

COLUMNS = ["target", "layout", "devices", "log_size", "cache_size", "arc_max", "arc_source",
           "primarycache", "secondarycache", "recordsize", "vdevs", "fs_impl", "runs"]
METHOD = ("ZFS pools: each zfs target's build as its runs recorded it (zpool status and "
          "zfs get read back after the pool was made): layout, devices, log and cache "
          "devices, the ARC's maximum and where it comes from (zfs-fuse's --max-arc-size, "
          "/etc/zfs/zfsrc, or the kernel module's zfs_arc_max; pools under one zfs-fuse "
          "daemon share one ARC), primarycache and secondarycache.")


def zfs_pools(records: Iterable[RunRecord]) -> pd.DataFrame:
    """One row per zfs target (its first run's description), with its count of runs."""
    rows: dict[str, dict[str, object]] = {}
    for record in records:
        described = record.target_description
        details = described.details
        if described.fs != "zfs" or "layout" not in details:
            continue
        if record.target in rows:
            rows[record.target]["runs"] = int(str(rows[record.target]["runs"])) + 1
            continue
        properties = details.get("properties")
        props = properties if isinstance(properties, dict) else {}
        rows[record.target] = {
            "target": record.target, "layout": details.get("layout"),
            "devices": details.get("devices"), "log_size": details.get("log_size"),
            "cache_size": details.get("cache_size"), "arc_max": details.get("arc_max"),
            "arc_source": details.get("arc_source", ""),
            "primarycache": props.get("primarycache", ""),
            "secondarycache": props.get("secondarycache", ""),
            "recordsize": props.get("recordsize", ""), "vdevs": details.get("vdevs", ""),
            "fs_impl": described.fs_impl, "runs": 1}
    sizes = {"devices": "Int64", "log_size": "Int64", "cache_size": "Int64",
             "arc_max": "Int64", "runs": "Int64"}  # whole numbers, empty where none
    return pd.DataFrame(list(rows.values()), columns=COLUMNS).astype(sizes)


STEP = Step("zfs_pools", reads=("records",), makes=("zfs_pools",), run=zfs_pools,
            method=METHOD, tables={"zfs_pools": "zfs_pools.csv"},
            optional=frozenset({"zfs_pools"}),
            stated=lambda done: not done["zfs_pools"].empty)
