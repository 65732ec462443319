"""A statistic added by a plug-in (core/plugins.py): its module declares
`STATISTIC = Statistic(...)` and one line registers the module; the analysis computes its
table from every campaign's runs, writes it to stats/ under its own file name, puts its
method statement in methods.csv, and the report shows the table with that statement.

A statistic that fails is one line in the verdicts; the rest of the analysis stands.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fslab.analysis.step import Step, table_files
from fslab.core import plugins
from fslab.core.errors import UserError

if TYPE_CHECKING:
    import pandas as pd

    from fslab.core.campaign_settings import CampaignSettings


@dataclass(frozen=True)
class Measured:
    """What a statistic is computed from: one row per run and metric (runs.parquet's
    columns: target, workload, op, metric, iteration, value, and the cell's fields), the
    per-cell summary (summary.csv), the resolved campaign ({} for imports), the runs'
    records (run.json: their steps' seconds among them) and fio's per-interval values
    (intervals.parquet; None where no run kept its logs)."""

    runs: pd.DataFrame
    summary: pd.DataFrame
    settings: dict[str, Any]
    records: tuple[Any, ...] = ()
    intervals: pd.DataFrame | None = None


@dataclass(frozen=True)
class Statistic:
    """One table of stats/ beyond fslab's own."""

    name: str  # its step in methods.csv, its heading in the report, stats/NAME.csv
    method: str  # what it computes and why, in one or two sentences (printed as is)
    compute: Callable[[Measured], pd.DataFrame]

    def __post_init__(self) -> None:
        if not re.fullmatch(r"[a-z][a-z0-9_]*", self.name):
            raise ValueError(f"statistic {self.name!r}: a name of a-z, 0-9 and _")

    @property
    def table(self) -> str:
        """Its file in stats/."""
        return f"{self.name}.csv"


def registered() -> list[Statistic]:
    """Every registered statistic, checked: a file name of its own (not one of fslab's)."""
    found = plugins.declared("STATISTIC", of=Statistic)
    taken = set(table_files().values())
    for statistic in found:
        if statistic.table in taken:
            raise UserError(f"statistic {statistic.name}: stats/{statistic.table} is taken")
        taken.add(statistic.table)
    return found


@dataclass(frozen=True)
class Computed:
    """Every statistic's table (by file name), its methods.csv row, a line per failure."""

    tables: dict[str, pd.DataFrame]
    methods: list[dict[str, str]]
    failures: list[str]


def computed(runs: pd.DataFrame, summary: pd.DataFrame, settings: CampaignSettings,
             records: list[Any], intervals: pd.DataFrame | None) -> Computed:
    """Each registered statistic computed from the campaign (a failure is its own line)."""
    measured = Measured(runs, summary, dict(settings.table), tuple(records), intervals)
    found = Computed({}, [], [])
    for statistic in registered():
        try:
            found.tables[statistic.table] = statistic.compute(measured)
            found.methods.append({"step": statistic.name, "method": statistic.method})
        except Exception as exc:  # a plug-in's bug is its own line, not the analysis's end
            found.failures.append(f"statistic {statistic.name} failed: "
                                  f"{type(exc).__name__}: {exc}")
    return found


# Its tables are the statistics' own (analysis/pipeline.py writes them, each under its file).
STEP = Step("statistics", reads=("runs", "summary", "settings", "records", "intervals"),
            makes=("statistics",), run=computed)
