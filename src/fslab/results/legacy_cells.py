"""Results written before format 5 recorded a cell only as names ("ext4
mount_options=noatime" on "randread iodepth=8/hpc-read"): the one place those names are
read back into the fields later formats record (target_base, job). Nothing else takes a
name apart (core/cell_keys.py)."""

from __future__ import annotations

from typing import Any


def legacy_job(workload: str) -> str:
    """'randread iodepth=8' -> 'randread'; 'hpc iodepth=8/hpc-read' -> 'hpc/hpc-read'
    (plan names never held spaces, so a name's first word was the job's own)."""
    head, _, section = str(workload).partition("/")
    job = head.split(" ", 1)[0]
    return f"{job}/{section}" if section else job


def legacy_target(target: str) -> str:
    """'ext4 mount_options=noatime' -> 'ext4'."""
    return str(target).split(" ", 1)[0]


def with_cell_fields(row: dict[str, object]) -> dict[str, object]:
    """A metrics row of an older run record, with its cell's fields."""
    if "job" not in row:
        row["job"] = legacy_job(str(row.get("workload", "")))
    if "target_base" not in row:
        row["target_base"] = legacy_target(str(row.get("target", "")))
    return row


def add_cell_columns(table: Any) -> Any:
    """An older metrics.parquet (an Arrow table) with the columns target_base and job."""
    import pyarrow as pa

    if "target_base" not in table.column_names:
        table = table.append_column("target_base", pa.array(
            [legacy_target(v) for v in table.column("target").to_pylist()], pa.string()))
    if "job" not in table.column_names:
        table = table.append_column("job", pa.array(
            [legacy_job(v) for v in table.column("workload").to_pylist()], pa.string()))
    return table
