"""`fslab history`: the catalogue of campaigns and the changes across them."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from fslab.cli.app import CatalogueOption, app, console, escape, parse_labels, show
from fslab.core.errors import ExitCode
from fslab.core.units import DEFAULT_MARGIN, parse_margin
from fslab.report.terminal import campaigns_text, changes_text

history_app = typer.Typer(
    rich_markup_mode=None, no_args_is_help=True,
    help="The catalogue of campaigns: add, list, query, find changes across versions, report.")
app.add_typer(history_app, name="history")

ByOption = Annotated[str | None, typer.Option(
    "--by", help="Order campaigns by this label (version-sorted); default: start time.")]
SinceOption = Annotated[str | None, typer.Option(
    "--since", help="Only changes at or after this value of the --by label.")]
AcrossOption = Annotated[bool, typer.Option(
    "--across-machines", help="Compare campaigns of different machines too.")]
MetricOption = Annotated[list[str] | None, typer.Option(
    "--metric", help="These metrics (repeatable); default: each workload's primary one.")]
MarginOption = Annotated[str | None, typer.Option(
    "--margin", help="A change within this is the same, not a regression (default 10%).")]


@history_app.command("add")
def add(
    directories: Annotated[list[Path], typer.Argument(help="Results directories.")],
    catalogue: CatalogueOption = None,
    label: Annotated[list[str] | None, typer.Option(
        "--label", help="A label for these campaigns, KEY=VALUE (repeatable).")] = None,
) -> None:
    """Record results directories in the catalogue (again: their rows are replaced)."""
    from fslab import api

    for line in api.history_add(catalogue, directories, parse_labels(label)):
        console.print(escape(line), highlight=False)


@history_app.command("remove")
def remove(
    campaign_id: Annotated[str, typer.Argument(metavar="ID", help="A campaign's id "
                                               "(`fslab history list`).")],
    catalogue: CatalogueOption = None,
) -> None:
    """Take a campaign out of the catalogue (its results directory is left as it is)."""
    from fslab import api

    console.print(f"removed {escape(api.history_remove(catalogue, campaign_id))}",
                  highlight=False)


@history_app.command("list")
def list_(catalogue: CatalogueOption = None) -> None:
    """Every campaign in the catalogue with its labels."""
    from fslab import api

    show(console, campaigns_text(api.history_campaigns(catalogue),
                                 api.history_spreads(catalogue)))


@history_app.command("query")
def query(
    sql: Annotated[str, typer.Argument(help="SQL over campaigns, labels, runs, cells, "
                                            "metrics (read-only).")],
    catalogue: CatalogueOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Rows as JSON.")] = False,
) -> None:
    """Run a read-only SQL query over the catalogue."""
    from fslab import api

    frame = api.history_query(catalogue, sql)
    if as_json:
        sys.stdout.write(frame.to_json(orient="records", date_format="iso") + "\n")
    else:
        sys.stdout.write(frame.to_string(index=False) + "\n")


@history_app.command("changes")
def changes(
    catalogue: CatalogueOption = None, by: ByOption = None, since: SinceOption = None,
    across_machines: AcrossOption = False, metric: MetricOption = None,
    margin: MarginOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="One object per change.")] = False,
    within_sitting: Annotated[bool, typer.Option(
        "--within-sitting", help="Judge on the campaigns' iterations alone (a sitting's "
                                 "own shift not counted).")] = False,
) -> None:
    """Changes across campaigns, each decided as the verdicts decide (regressed, improved,
    the same within the margin, or unresolved); each campaign is a sitting, so a change
    counts only past how far a sitting moves on its machine (its history, else a stated
    prior); exit 1 on a decided regression (for CI gates)."""
    from fslab import api

    series = api.history_changes(catalogue, by, since, across_machines, metric,
                                 parse_margin(margin or DEFAULT_MARGIN), within_sitting)
    found = [change for s in series for change in s.changes]
    if as_json:
        found.sort(key=lambda c: (not c.regression, c.p_value))
        sys.stdout.write(json.dumps([c.to_json() for c in found], indent=2) + "\n")
    else:
        show(console, changes_text(series, by or "start time", api.history_method()))
    if any(change.regression for change in found):
        raise typer.Exit(ExitCode.REGRESSION)


@history_app.command("report")
def report(
    catalogue: CatalogueOption = None, by: ByOption = None, since: SinceOption = None,
    across_machines: AcrossOption = False, metric: MetricOption = None,
    margin: MarginOption = None,
    out: Annotated[Path, typer.Option("--out", help="HTML file to write.")] = Path(
        "history.html"),
) -> None:
    """One self-contained HTML page: the series that changed, regressions first."""
    from fslab import api

    written = api.history_report(catalogue, out, by, since, across_machines, metric,
                                 parse_margin(margin or DEFAULT_MARGIN))
    console.print(f"wrote {written}", highlight=False)


@history_app.command("compact")
def compact(catalogue: CatalogueOption = None) -> None:
    """Merge the catalogue's parts into one (faster to read when it has grown; never
    needed for correctness; safe beside writers and readers)."""
    from fslab import api

    before, kept = api.history_compact(catalogue)
    console.print(f"{kept} campaigns in one part (there were {before} parts)",
                  highlight=False)


@history_app.command("migrate")
def migrate(
    legacy: Annotated[Path, typer.Argument(metavar="FILE", help="A single-file catalogue "
                                           "(.duckdb) of an earlier fslab.")],
    to: Annotated[Path, typer.Argument(metavar="DIR", help="The directory catalogue to "
                                       "copy it into (new, or one to add to).")],
) -> None:
    """Copy a single-file catalogue into a directory catalogue that any number of
    machines can write at once."""
    from fslab import api

    count = api.history_migrate(legacy, to)
    console.print(f"copied {count} campaigns from {legacy} into {to}", highlight=False)
