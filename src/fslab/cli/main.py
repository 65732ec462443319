"""The `fslab` command: parse arguments, call the library, print. Nothing else."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from fslab.cli import run as _run  # noqa: F401  (registers `fslab run` first, as help lists it)
from fslab.cli import tune as _tune  # noqa: F401  (then `fslab tune`)
from fslab.cli.app import (
    CatalogueOption,
    LabOption,
    app,
    console,
    err_console,
    exit_interrupted,
    show,
)
from fslab.core.errors import ExitCode, Shortage, ToolError, UserError
from fslab.core.units import parse_margin
from fslab.report.run_text import results_text
from fslab.report.terminal import compare_report, skipped_table


@app.command()
def analyze(
    results_dir: Annotated[Path, typer.Argument(metavar="DIR", help="A results directory.")],
) -> None:
    """Summarise a results directory; writes DIR/stats/summary.csv."""
    from fslab import api

    show(console, results_text(api.results_view(results_dir)))
    console.print(f"Wrote {results_dir / 'stats' / 'summary.csv'}")


@app.command()
def export(
    results_dir: Annotated[Path, typer.Argument(metavar="DIR", help="A results directory.")],
    form: Annotated[str, typer.Option(
        "--format", help="csv, or json (a list of records, one object per row).")] = "csv",
    out: Annotated[Path | None, typer.Option(
        "--out", help="A file for the --table; an existing directory: both tables, "
                      "metrics.FORMAT and verdicts.FORMAT in it (default: standard "
                      "output).")] = None,
    table: Annotated[str, typer.Option(
        "--table", help="metrics: one row per run × op × metric, value in SI units with "
                        "its unit and which way is better; verdicts: one row per compared "
                        "pair, ratio with its 95 % interval and decision.")] = "metrics",
) -> None:
    """One tidy table of a results directory for a spreadsheet or another tool."""
    from fslab import api

    text, written = api.export(results_dir, form, out, table,
                               say=lambda line: err_console.print(line, markup=False))
    if text:
        sys.stdout.write(text)
    for path in written:
        err_console.print(f"Wrote {path}", markup=False, highlight=False)


@app.command()
def reparse(
    results_dir: Annotated[Path, typer.Argument(metavar="DIR", help="A results directory.")],
) -> None:
    """Parse every run again from its raw output (after a parser fix); nothing is re-run."""
    from fslab import api

    found = api.reparse(results_dir)
    console.print(f"Reparsed {found.reparsed} runs of {results_dir} ({found.rows} values in "
                  "metrics.parquet" + ("; stats/ updated" if (results_dir / "stats").exists()
                                       else "") + ").")
    for run_id, reason in found.kept:
        err_console.print(f"kept as they were: {run_id}: {reason}", markup=False,
                          highlight=False)


@app.command()
def report(
    results_dirs: Annotated[list[Path], typer.Argument(
        metavar="DIR...", help="A results directory (a campaign, an import or an aging "
                               "run), or several to see as one.")],
    output: Annotated[Path | None, typer.Option(
        "-o", "--output", help="HTML file (default DIR/report.html; for several "
                               "directories report.html here).")] = None,
) -> None:
    """Write one self-contained, interactive HTML report (works offline). Several
    directories (two campaigns, two aging runs) give one report with their targets side
    by side, each labelled by its directory."""
    from fslab import api

    path = api.report(results_dirs, output, say=lambda line: err_console.print(
        line, markup=False, highlight=False))
    console.print(f"Wrote {path}")


@app.command()
def compare(
    base: Annotated[Path, typer.Argument(metavar="BASE", help="The baseline results.")],
    new: Annotated[Path, typer.Argument(metavar="NEW", help="The results to judge.")],
    margin: Annotated[str | None, typer.Option(
        "--margin", help="Within this, new and base are the same (default: the base "
                         "campaign's, else 10%).")] = None,
    threshold: Annotated[float | None, typer.Option(
        hidden=True, help="Old name of --margin, in percent.")] = None,
    as_json: Annotated[bool, typer.Option(
        "--json", help="Print one JSON object per cell instead of the table.")] = False,
    output: Annotated[Path | None, typer.Option(
        "-o", "--output", help="Also write the comparison as an HTML report.")] = None,
    catalogue: CatalogueOption = None,
    within_sitting: Annotated[bool, typer.Option(
        "--within-sitting", help="Judge on the iterations alone, as if BASE and NEW were "
                                 "one sitting (a sitting's own shift not counted).")] = False,
) -> None:
    """Compare two results directories as the verdicts decide: each workload's primary
    metric is a question (improved, regressed, the same within the margin, or not
    resolved), the error rate held across them; before and after are two sittings, so a
    change counts as a regression only past what a repeat sitting shows (the host's
    history with --catalogue, else a stated prior); exit 1 on a decided regression."""
    import json

    from fslab import api

    if threshold is not None and margin is None:
        margin = f"{threshold}%"
    comparison = api.compare(base, new, None if margin is None else parse_margin(margin),
                             output, catalogue, within_sitting)
    if comparison.cells.empty:
        raise UserError(f"{base} and {new} share no cells to compare")
    if as_json:
        sys.stdout.write(json.dumps(comparison.as_json(), indent=2) + "\n")
    else:
        console.print(compare_report(comparison))
    if output and not as_json:
        console.print(f"Wrote {output}")
    if comparison.regressed:
        raise typer.Exit(ExitCode.REGRESSION)


@app.command("import")
def import_(
    paths: Annotated[list[Path], typer.Argument(metavar="PATH...",
                                                help="Files or directories to import.")],
    out: Annotated[Path, typer.Option(help="The results directory to create.")],
    pattern: Annotated[str | None, typer.Option(
        help="Where fields sit in each path, e.g. '{fs}/fio_results/{iteration}/"
             "{workload}-result.json'; guessed when absent.")] = None,
    analyze: Annotated[bool, typer.Option(
        help="Analyse the imported results (as `fslab analyze`) straight away.")] = True,
) -> None:
    """Build a results directory from fio JSON, dd logs or bonnie++ CSV collected elsewhere."""
    from fslab import api

    report = api.import_results(paths, out, pattern, analyze_after=analyze)
    if report.skipped:
        err_console.print(skipped_table(report.skipped, out / "import_errors.csv"))
    console.print(f"Imported {report.imported} files ({report.rows} values) into {out}; "
                  f"skipped {len(report.skipped)}.")
    if not report.imported:
        raise typer.Exit(ExitCode.USER_ERROR)
    if analyze:
        console.print(f"Wrote {out / 'stats'} (summary, tests, pairwise, headline, ranking, "
                      f"verdicts.txt). Next: fslab report {out}")
    else:
        console.print(f"Next: fslab analyze {out}")
    if report.skipped:
        raise typer.Exit(ExitCode.SKIPPED_FILES)


@app.command()
def cleanup(lab: LabOption = None) -> None:
    """Release mounts, loop devices and images that a killed fslab run left behind."""
    from fslab import api

    report = api.cleanup(api.make_lab(lab))
    for line in report.released:
        console.print(f"released {line}")
    for line in report.skipped:
        console.print(f"left alone: {line}")
    for line in report.errors:
        err_console.print(f"[red]error: {line}[/red]")
    if not (report.released or report.skipped or report.errors):
        console.print("nothing to clean up")
    if report.errors:
        raise typer.Exit(ExitCode.NOT_RELEASED)


@app.command()
def targets() -> None:
    """List every kind of target and whether it can run on this machine (and why not)."""
    from fslab import api

    console.print(api.targets_table())


@app.command()
def serve(
    bind: Annotated[str, typer.Option(
        help="Address to listen on; loopback unless you ask for another.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port.")] = 8765,
) -> None:
    """Run a fio server for a controller's `fslab run --hosts` (Ctrl-C stops it)."""
    from fslab import api

    if not 0 < port < 65536:
        raise UserError(f"bad port {port}")
    if exposed := api.serve_exposure(bind, port):
        err_console.print(f"fslab: warning: {exposed}", markup=False, highlight=False,
                          soft_wrap=True)
    console.print(f"fio server listening on {bind}:{port} (Ctrl-C to stop)")
    if api.serve(bind, port):
        console.print("fio server stopped")


@app.command()
def presets(
    as_json: Annotated[bool, typer.Option(
        "--json", help="Every parameter of every preset with its source, as JSON.")] = False,
) -> None:
    """List every preset (fio suites and fslab's own workloads) with its parameters, each
    with where it comes from (the study and the place in it, fio's default, the campaign,
    or fslab's choice and why), and the study's own scale (--as-published)."""
    from fslab import api

    if as_json:
        sys.stdout.write(api.presets_json() + "\n")
        return
    console.print(api.presets_tables())


def main() -> None:
    """Entry point: user mistakes become one line and exit code 2, never a traceback."""
    try:
        app()
    except UserError as exc:
        err_console.print(f"fslab: error: {exc}", markup=False, highlight=False, soft_wrap=True)
        sys.exit(ExitCode.USER_ERROR)
    except Shortage as exc:  # the machine cannot go on: the campaign stopped
        err_console.print(f"fslab: error: {exc}", markup=False, highlight=False, soft_wrap=True)
        sys.exit(ExitCode.USER_ERROR)
    except ToolError as exc:  # outside a run (a run records it as its reason)
        err_console.print(f"fslab: error: {exc}", markup=False, highlight=False, soft_wrap=True)
        sys.exit(ExitCode.TOOL_FAILED)
    except KeyboardInterrupt:
        exit_interrupted("fslab: interrupted")


import fslab.cli.history  # noqa: E402  (registers history)
import fslab.cli.pool  # noqa: E402  (then pool)

# isort: split
import fslab.cli.age  # noqa: E402  (then age and doctor, in the order help lists them)
import fslab.cli.doctor  # noqa: E402,F401

if __name__ == "__main__":
    main()
