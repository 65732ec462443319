"""The history's commands as plain functions (`fslab history ...` calls these): record
campaigns in a catalogue, take one out, query it, find the changes across it, render it,
keep it compact, migrate a single-file catalogue of an earlier fslab."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from fslab.analysis.sittings.repeat import PRIOR_TAU, as_percent
from fslab.core.errors import UserError
from fslab.core.units import DEFAULT_MARGIN
from fslab.history.catalogue import campaigns, query
from fslab.history.series import changes, method
from fslab.history.sittings import host_spreads
from fslab.history.writing import add, compact, migrate, remove
from fslab.report.history_page import render
from fslab.results.store import write_atomic

if TYPE_CHECKING:
    import pandas as pd

    from fslab.history.series import Series


def history_add(catalogue: Path | None, directories: list[Path],
                labels: dict[str, str] | None = None) -> list[str]:
    """`fslab history add`: record results directories; what was done to each."""
    for directory in directories:
        if not Path(directory).is_dir():
            raise UserError(f"{directory}: no such directory")
    return [recorded.describe() for recorded in add(catalogue, directories, labels)]


def record_campaign(catalogue: Path, results_dir: Path) -> tuple[str | None, str]:
    """Add a finished campaign to a catalogue without ever failing the campaign: (what
    was recorded, '') or (None, why not, in one line). `fslab run --catalogue` reports
    the second and exits as the campaign would have."""
    try:
        (recorded,) = history_add(catalogue, [Path(results_dir)])
    except UserError as exc:
        return None, str(exc)
    except Exception as exc:  # any failure of the catalogue: the results stand
        first = (str(exc).splitlines() or [""])[0]
        return None, f"{type(exc).__name__}: {first}" if first else type(exc).__name__
    return recorded, ""


def history_remove(catalogue: Path | None, campaign_id: str) -> str:
    """`fslab history remove ID`: take a campaign out of the catalogue."""
    return remove(catalogue, campaign_id)


def history_campaigns(catalogue: Path | None) -> pd.DataFrame:
    """`fslab history list`: every campaign with its labels, oldest first."""
    return campaigns(catalogue)


def history_spreads(catalogue: Path | None) -> list[str]:
    """Each host's between-sitting spread of ratios, and each workload's where the history
    has it, a line each (`fslab history list`)."""
    lines = []
    for host, spread in host_spreads(catalogue):
        if not spread.sittings:
            lines.append(f"{host}: no two sittings of one campaign yet (fslab run --again "
                         "DIR --catalogue C makes one); the prior is "
                         f"±{as_percent(PRIOR_TAU):.0f} %")
            continue
        lines.append(f"{host}: a sitting's ratio moves ±{as_percent(spread.tau):.1f} % "
                     f"(1 SD; from {spread.sittings} sittings, {spread.df:.1f} effective "
                     f"df; ±{as_percent(spread.raw_tau):.1f} % before shrinking toward "
                     f"±{as_percent(PRIOR_TAU):.0f} %)")
        lines += [f"  {name}: ±{as_percent(own.tau):.1f} % (from {own.sittings} sittings, "
                  f"{own.df:.1f} df; ±{as_percent(own.raw_tau):.1f} % before shrinking "
                  f"toward the host's)" for name, own in spread.workloads.items()]
    return lines


def history_query(catalogue: Path | None, sql: str) -> pd.DataFrame:
    """`fslab history query SQL`: a read-only query over the catalogue."""
    return query(catalogue, sql)


def history_changes(catalogue: Path | None, by: str | None = None, since: str | None = None,
                    across_machines: bool = False, metrics: list[str] | None = None,
                    margin: float = DEFAULT_MARGIN, within_sitting: bool = False
                    ) -> list[Series]:
    """`fslab history changes`: every series with its changes, each decided by the rule
    of the verdicts, each campaign a sitting whose own shift is counted unless
    `within_sitting` (history/series.py)."""
    return changes(catalogue, by, since, across_machines, metrics, margin=margin,
                   within_sitting=within_sitting)


def history_report(catalogue: Path | None, out: Path, by: str | None = None,
                   since: str | None = None, across_machines: bool = False,
                   metrics: list[str] | None = None, margin: float = DEFAULT_MARGIN) -> Path:
    """`fslab history report`: one self-contained HTML page, regressions first."""
    series = history_changes(catalogue, by, since, across_machines, metrics, margin)
    write_atomic(Path(out), render(series, by or "start time", method()))
    return Path(out)


def history_compact(catalogue: Path | None) -> tuple[int, int]:
    """`fslab history compact`: (parts before, campaigns kept in one part)."""
    return compact(catalogue)


def history_migrate(legacy: Path, to: Path) -> int:
    """`fslab history migrate FILE DIR`: copy a single-file catalogue into a directory
    catalogue; how many campaigns it held."""
    return migrate(legacy, to)
