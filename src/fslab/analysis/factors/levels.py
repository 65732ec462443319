"""A sweep's factors as the analysis sees them: each cell's fields (core/cells.py: the
target as declared, the job, every factor's level), read off the metrics table's own
columns, and which factors are the targets' and which the jobs' (as the plan recorded
it in campaign.toml's [factors]).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from fslab.analysis.cells.observations import with_cell_fields
from fslab.core.cells import CellKey, cell_name, keys_of, level_label, short_names
from fslab.core.metrics import factor_columns

# What names a cell in the tables, besides its factors' columns.
CELL_COLUMNS = ["target", "workload", "target_base", "job"]
TARGET, JOB = "target", "job"
# Campaigns from before [factors] was recorded: target factors by their names then.
LEGACY_TARGET_FACTORS = ("mount_options", "mkfs_options", "scale")


def cell_levels(metrics: pd.DataFrame) -> pd.DataFrame:
    """One row per (target, workload): its target as declared, its job, and its level of
    every factor (None where the factor does not apply to it)."""
    factors = [f for f in factor_columns(metrics.columns) if f not in CELL_COLUMNS]
    frame = with_cell_fields(metrics)
    if frame.empty:
        return pd.DataFrame(columns=[*CELL_COLUMNS, *factors])
    cells = frame[[*CELL_COLUMNS, *factors]].astype(object)
    return cells.drop_duplicates(["target", "workload"]).reset_index(drop=True)


def factors_of(levels: pd.DataFrame) -> list[str]:
    """The factor columns of a cell_levels table."""
    return [c for c in levels.columns if c not in CELL_COLUMNS]


def with_levels(table: pd.DataFrame, levels: pd.DataFrame) -> pd.DataFrame:
    """`table` (per cell or per run) with its cell's fields and one column per factor,
    by target and workload."""
    if levels.empty or table.empty:
        return with_cell_fields(table)
    keys = pd.MultiIndex.from_frame(levels[["target", "workload"]].astype(str))
    out = table.copy()
    wanted = pd.MultiIndex.from_arrays([table["target"].astype(str),
                                        table["workload"].astype(str)])
    for column in ["target_base", "job", *factors_of(levels)]:
        mapping = pd.Series(levels[column].to_numpy(), index=keys)
        mapping = mapping[~mapping.index.duplicated()]
        out[column] = mapping.reindex(wanted).to_numpy()
    return with_cell_fields(out)


def factor_scopes(settings: dict[str, Any], factors: Sequence[str]) -> dict[str, str]:
    """{factor: 'target' or 'job'}: what each factor varies, as the plan recorded it in
    campaign.toml's [factors] (plan/sweep.py); a campaign from before that table: target
    options by their names."""
    recorded = settings.get("factors") or {}
    return {f: str(recorded[f]) if f in recorded else
            (TARGET if f in LEGACY_TARGET_FACTORS or f.startswith("zfs.") else JOB)
            for f in factors}


def keys(cells: pd.DataFrame) -> list[CellKey]:
    """Each row's key (core/cells.CellKey) of a cell_levels table."""
    return keys_of(cells, factors_of(cells))


def job_levels(key: CellKey, scopes: dict[str, str]) -> tuple[tuple[str, str], ...]:
    """The levels of a key that belong to its job."""
    return tuple((f, v) for f, v in key.levels if scopes.get(f) == JOB)


def job_levels_text(key: CellKey, scopes: dict[str, str]) -> str:
    """'iodepth=16 numjobs=4': the job's levels of a cell, as the verdicts name a variant."""
    return " ".join(level_label(f, v) for f, v in job_levels(key, scopes))


def configurations(cells: pd.DataFrame) -> dict[tuple[str, str], str]:
    """{(target, workload): the configuration's name, as short as the cells given allow}
    (core/cells.short_names over the keys of one job's configurations)."""
    found = keys(cells)
    names = short_names(found)
    return {(str(t), str(w)): name for t, w, name in zip(cells["target"], cells["workload"],
                                                         names, strict=True)}


def target_names(cells: pd.DataFrame, scopes: dict[str, str]) -> dict[str, str]:
    """{target: its name as short as the campaign's targets allow}: 'data=journal' where
    every target is ext4 and only a mount option varies; 'xfs' where targets differ and
    nothing varies (core/cells.short_names over the targets' own keys)."""
    if cells.empty:
        return {}
    targets = cells.drop_duplicates("target")
    found = [CellKey(key.target, "", tuple((f, v) for f, v in key.levels
                                          if scopes.get(f) == TARGET))
             for key in keys(targets)]
    return dict(zip(targets["target"].astype(str), short_names(found), strict=True))


def full_configuration(key: CellKey, scopes: dict[str, str]) -> str:
    """A configuration's full name: the target's name with its levels, then the job's
    ('ext4 mount_options=noatime iodepth=16')."""
    target = cell_name(key.target, [(f, v) for f, v in key.levels if scopes.get(f) == TARGET])
    return cell_name(target, job_levels(key, scopes))
