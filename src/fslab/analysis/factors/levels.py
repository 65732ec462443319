"""A sweep's factors as the analysis sees them: each cell's fields (core/cell_keys.py: the
target as declared, the job, every factor's level), read off the metrics table's own
columns, and which factors are the targets' and which the jobs' (as the plan recorded
it in campaign.toml's [factors]).
"""

from __future__ import annotations

import pandas as pd

from fslab.analysis.cells.observations import with_cell_fields
from fslab.analysis.step import Step
from fslab.core.campaign_settings import CampaignSettings
from fslab.core.cell_keys import JOB, CellKey, factor_scopes, keys_of, target_names
from fslab.core.metrics import factor_columns

# What names a cell in the tables, besides its factors' columns.
CELL_COLUMNS = ["target", "workload", "target_base", "job"]


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


def keys(cells: pd.DataFrame) -> list[CellKey]:
    """Each row's key (core/cell_keys.CellKey) of a cell_levels table."""
    return keys_of(cells, factors_of(cells))


def job_levels(key: CellKey, scopes: dict[str, str]) -> tuple[tuple[str, str], ...]:
    """The levels of a key that belong to its job."""
    return tuple((f, v) for f, v in key.levels if scopes.get(f) == JOB)


def _levels(metrics: pd.DataFrame, cell_summary: pd.DataFrame, settings: CampaignSettings
            ) -> tuple[pd.DataFrame, dict[str, str], dict[str, str], pd.DataFrame]:
    """(each cell's fields, each factor's scope, each target's name as short as the
    campaign allows, summary.csv: the cells' summary with their fields as columns)."""
    cells = cell_levels(metrics)
    scopes = factor_scopes(settings.scopes, factors_of(cells))
    return cells, scopes, target_names(cells, scopes), with_levels(cell_summary, cells)


STEP = Step("levels", reads=("metrics", "cell_summary", "settings"),
            makes=("cells", "scopes", "names", "summary"), run=_levels,
            tables={"summary": "summary.csv"})
