"""A sweep's factors as the analysis sees them: which columns of the metrics table are
factors, and each cell's level of every one of them (its name read back: core/cells.py).
"""

from __future__ import annotations

import pandas as pd

from fslab.core.cells import (  # re-exported: the analysis reads cells through here
    configuration,
    declared_levels,
    is_numeric,
    job_of,
    numeric,
    ordered,
    target_base,
    workload_levels,
)
from fslab.core.metrics import factor_columns

__all__ = ["cell_levels", "configuration", "declared_levels", "is_numeric", "job_of",
           "numeric", "ordered", "target_base", "with_levels", "workload_levels"]


def cell_levels(metrics: pd.DataFrame) -> pd.DataFrame:
    """One row per (target, workload) with its level of every factor (None where the
    factor does not apply to it): the columns beyond the metrics table's own."""
    factors = factor_columns(metrics.columns)
    if not factors or metrics.empty:
        return pd.DataFrame(columns=["target", "workload", *factors])
    cells = metrics[["target", "workload", *factors]].astype(object)
    return cells.drop_duplicates(["target", "workload"]).reset_index(drop=True)


def with_levels(table: pd.DataFrame, levels: pd.DataFrame) -> pd.DataFrame:
    """`table` (per cell or per run) with one column per factor, by target and workload."""
    if levels.empty or table.empty:
        return table
    factors = [c for c in levels.columns if c not in ("target", "workload")]
    keys = pd.MultiIndex.from_frame(levels[["target", "workload"]].astype(str))
    out = table.copy()
    wanted = pd.MultiIndex.from_arrays([table["target"].astype(str),
                                        table["workload"].astype(str)])
    for factor in factors:
        mapping = pd.Series(levels[factor].to_numpy(), index=keys)
        mapping = mapping[~mapping.index.duplicated()]
        out[factor] = mapping.reindex(wanted).to_numpy()
    return out


