"""The `fslab` command: parse arguments, call the library, print. Nothing else."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from fslab.cli.app import (
    CatalogueOption,
    LabOption,
    app,
    console,
    err_console,
    escape,
    parse_labels,
)
from fslab.core.errors import ExitCode, ToolError, UserError


def _split(text: str | None) -> list[str] | None:
    if text is None:
        return None
    items = [item.strip() for item in text.split(",") if item.strip()]
    if not items:
        raise UserError("empty list: give comma-separated names, e.g. ext4,xfs")
    return items


@app.command()
def run(
    campaign_file: Annotated[Path | None, typer.Argument(
        metavar="[CAMPAIGN.toml]", help="Campaign file; flags override it.")] = None,
    fs: Annotated[str | None, typer.Option(
        "--fs", help="Targets, comma-separated: ext4,xfs,btrfs or dir:PATH.")] = None,
    preset: Annotated[str | None, typer.Option(help="fio preset (default direct5).")] = None,
    workloads: Annotated[str | None, typer.Option(
        help="Only these workloads, comma-separated, e.g. randread,seqwrite.")] = None,
    iterations: Annotated[int | None, typer.Option(help="Repetitions of every run.")] = None,
    runtime: Annotated[str | None, typer.Option(
        help="Seconds per fio job, e.g. 5 or 30s.")] = None,
    size: Annotated[str | None, typer.Option(help="Image size per target, e.g. 2G.")] = None,
    file_size: Annotated[str | None, typer.Option(
        "--file-size", help="File size per fio job (default: auto, fitted to the image).")] = None,
    out: Annotated[Path | None, typer.Option(help="Results directory.")] = None,
    seed: Annotated[int | None, typer.Option(help="Seed of the run-order shuffle.")] = None,
    fresh: Annotated[str | None, typer.Option(
        help="New file system per run, iteration (default) or campaign.")] = None,
    hosts: Annotated[str | None, typer.Option(
        help="fio servers to drive, e.g. node1,node2:8766 (fio client/server mode).")] = None,
    resume: Annotated[bool, typer.Option(
        "--resume", help="Continue the campaign in --out DIR.")] = False,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="Print the plan and job files; touch nothing.")] = False,
    confirm_device: Annotated[list[str] | None, typer.Option(
        "--confirm-device", help="Allow formatting this real device (repeat per device).")] = None,
    force_device: Annotated[bool, typer.Option(
        "--force-device", help="Also overwrite a confirmed device with a signature.")] = False,
    until_ci: Annotated[float | None, typer.Option(
        "--until-ci", help="Treat --iterations as a pilot and run as many more as every "
                           "CI within PCT % needs (estimates use those alone).",
        metavar="PCT")] = None,
    max_iterations: Annotated[int, typer.Option(
        "--max-iterations", help="Cap for --until-ci and --until-detectable.")] = 20,
    until_detectable: Annotated[float | None, typer.Option(
        "--until-detectable", help="Treat --iterations as a pilot and run as many more as "
        "detecting a PCT % difference needs (80 % power), up to --max-iterations.",
        metavar="PCT")] = None,
    rounds: Annotated[int | None, typer.Option(
        "--rounds", min=1, help="Measure each fio job in this many slices interleaved "
        "with the other targets (default 6; 1: each run in one piece).")] = None,
    no_ceiling: Annotated[bool, typer.Option(
        "--no-ceiling", help="Do not measure the raw device under the images first (the "
        "ceiling that marks cache-bound results; campaign key: ceiling = false).")] = False,
    as_published: Annotated[bool, typer.Option(
        "--as-published", help="Run the preset at its study's own scale and protocol "
        "(sizes, runtimes, repetitions, file systems; one run per job); with --dry-run, "
        "show that plan and how long it takes.")] = False,
    rerun_unsteady: Annotated[bool, typer.Option(
        "--rerun-unsteady", help="Measure runs again whose throughput stepped or trended "
        "within their window (fio's per-interval logs).")] = False,
    rerun_disturbed: Annotated[bool, typer.Option(
        "--rerun-disturbed", help="Measure runs the witness saw disturbed (another "
        "process's CPU, memory pressure, other I/O) again at the end of their iteration."
    )] = False,
    primary: Annotated[str | None, typer.Option(
        "--primary", help="Metrics the verdicts answer, comma-separated, in order of "
        "preference (default: each workload's own, e.g. IOPS for random I/O).")] = None,
    label: Annotated[list[str] | None, typer.Option(
        "--label", help="A label of this campaign, KEY=VALUE (repeatable; campaign key "
        "labels = {...}): the history orders and compares campaigns by them.")] = None,
    catalogue: CatalogueOption = None,
    margin: Annotated[str | None, typer.Option(
        "--margin", help="Targets within this of each other are 'the same' (default 10%; "
        "campaign key margin).")] = None,
    lab: LabOption = None,
) -> None:
    """Run a campaign: targets × workloads × iterations, then summarise."""
    from fslab import api
    from fslab.host.lab import Lab
    from fslab.plan.campaign import Overrides, load_campaign

    if until_ci is not None and until_ci <= 0:
        raise UserError("--until-ci must be a percentage above 0, e.g. 5")
    if until_detectable is not None and until_detectable <= 0:
        raise UserError("--until-detectable must be a percentage above 0, e.g. 5")
    overrides = Overrides(
        fs=_split(fs), preset=preset, workloads=_split(workloads), iterations=iterations,
        runtime=runtime, image_size=size, file_size=file_size,
        out=str(out) if out else None, seed=seed, fresh=fresh, hosts=_split(hosts),
        primary=_split(primary), rounds=rounds, ceiling=False if no_ceiling else None,
        as_published=as_published or None, labels=parse_labels(label) or None,
        margin=margin,
    )
    if resume:
        if out is None:
            raise UserError("--resume needs --out DIR: the results directory to continue")
        from fslab.plan.resume import progress_line, resume_campaign

        campaign = resume_campaign(out, campaign_file, overrides)
        if not dry_run:
            console.print(progress_line(campaign, out))
    else:
        campaign = load_campaign(campaign_file, overrides)
    devices = frozenset(confirm_device or [])
    the_lab = Lab(lab)
    if dry_run:
        from fslab.report.terminal import plan_renderable

        problems: list[str] = []
        plan, targets = api.prepare(campaign, confirmed_devices=devices,
                                    force_device=force_device, problems=problems)
        console.print(plan_renderable(plan, targets, the_lab.root), soft_wrap=True)
        for problem in problems:
            err_console.print(f"would stop: {problem}", markup=False, highlight=False)
        if problems:
            raise typer.Exit(ExitCode.USER_ERROR)
        return
    from fslab.host.doctor import QUICK, examine_beside
    from fslab.report.progress import LineProgress, RichProgress

    if campaign.published is not None:
        for line in campaign.published.lines():
            console.print(line, markup=False, highlight=False)

    try:
        shown = err_console.get()
        with (RichProgress(shown) if shown.is_terminal else LineProgress(sys.stderr)) as progress:
            check = examine_beside(the_lab.root, QUICK, progress.note)
            try:
                result = api.run(campaign, out=out, lab=the_lab, resume=resume,
                                 confirmed_devices=devices, force_device=force_device,
                                 progress=progress, until_ci=until_ci,
                                 max_iterations=max_iterations,
                                 until_detectable=until_detectable,
                                 rerun_disturbed=rerun_disturbed,
                                 rerun_unsteady=rerun_unsteady)
            finally:
                check.join()
    except KeyboardInterrupt:
        target = out or "DIR"
        err_console.print(f"fslab: interrupted; everything fslab made was released. "
                          f"Continue with: fslab run --resume --out {target}")
        raise typer.Exit(ExitCode.INTERRUPTED) from None
    _print_summary(result.results.path, result.summary)
    for warning in result.runner.warnings:
        err_console.print(f"[yellow]warning: {warning}[/yellow]")
    if until_ci is not None or until_detectable is not None:
        goal = " and ".join(filter(None, [
            f"±{until_ci:g} % CIs" if until_ci else "",
            f"{until_detectable:g} % detectable" if until_detectable else ""]))
        if result.unconverged:
            console.print(f"[yellow]Not at {goal} after the second stage (planned from "
                          "the pilot's spread; reported, not chased):[/yellow]")
            for cell in result.unconverged:
                console.print(f"  {escape(cell)}")
        else:
            console.print(f"Every cell at {goal}.")
    console.print(f"Next: fslab report {result.results.path} (HTML; the tests, effect sizes "
                  f"and verdicts are in {result.results.path / 'stats'})")
    if catalogue is not None:
        from fslab.history.catalogue import add

        added = add(catalogue, [result.results.path])[0]
        console.print(f"Catalogue {catalogue}: campaign {added.campaign_id} added")
    console.print(f"Results: {result.results.path}  ({result.runner.ok} runs ok, "
                  f"{result.runner.failed} failed, {result.runner.skipped} kept from before)")
    if result.runner.failed:
        raise typer.Exit(ExitCode.RUN_FAILURES)


@app.command()
def analyze(
    results_dir: Annotated[Path, typer.Argument(metavar="DIR", help="A results directory.")],
) -> None:
    """Summarise a results directory; writes DIR/stats/summary.csv."""
    _print_summary(results_dir)
    console.print(f"Wrote {results_dir / 'stats' / 'summary.csv'}")


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
    threshold: Annotated[float, typer.Option(
        help="Noise threshold in percent: smaller changes count as unchanged.")] = 2.0,
    output: Annotated[Path | None, typer.Option(
        "-o", "--output", help="Also write the comparison as an HTML report.")] = None,
) -> None:
    """Compare two results directories; exit 1 when anything regressed (for CI)."""
    from fslab import api

    if threshold < 0:
        raise UserError("--threshold must be a percentage >= 0")
    comparison = api.compare(base, new, threshold / 100.0, output)
    if comparison.cells.empty:
        raise UserError(f"{base} and {new} share no cells to compare")
    from fslab.report.terminal import compare_report

    console.print(compare_report(comparison))
    regressed = comparison.count("regressed")
    if output:
        console.print(f"Wrote {output}")
    if regressed:
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
        from rich.table import Table

        table = Table(title=f"Skipped files ({len(report.skipped)}; also in "
                            f"{out / 'import_errors.csv'})", title_justify="left")
        table.add_column("file")
        table.add_column("reason")
        for name, reason in report.skipped:
            table.add_row(escape(name), escape(reason))
        err_console.print(table)
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
    from fslab.host.lab import Lab

    report = api.cleanup(Lab(lab))
    for line in report.released:
        console.print(f"released {line}")
    for line in report.skipped:
        console.print(f"left alone: {line}")
    for line in report.errors:
        err_console.print(f"[red]error: {line}[/red]")
    if not (report.released or report.skipped or report.errors):
        console.print("nothing to clean up")
    if report.errors:
        raise typer.Exit(1)


@app.command()
def targets() -> None:
    """List every kind of target and whether it can run on this machine (and why not)."""
    from fslab.report.listings import targets_table

    console.print(targets_table())


@app.command()
def serve(
    bind: Annotated[str, typer.Option(
        help="Address to listen on; loopback unless you ask for another.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port.")] = 8765,
) -> None:
    """Run a fio server for a controller's `fslab run --hosts` (Ctrl-C stops it)."""
    from fslab.workloads.distributed import run_server

    if not 0 < port < 65536:
        raise UserError(f"bad port {port}")
    console.print(f"fio server listening on {bind}:{port} (Ctrl-C to stop)")
    if run_server(bind, port):
        console.print("fio server stopped")


@app.command()
def presets(
    as_json: Annotated[bool, typer.Option(
        "--json", help="Every parameter of every preset with its source, as JSON.")] = False,
) -> None:
    """List every preset (fio suites and fslab's own workloads) with its parameters, each
    with where it comes from (the study and the place in it, fio's default, the campaign,
    or fslab's choice and why), and the study's own scale (--as-published)."""
    from fslab.report.listings import presets_json, presets_tables

    if as_json:
        sys.stdout.write(presets_json() + "\n")
        return
    console.print(presets_tables())


def _print_summary(results_dir: Path, summary: object = None) -> None:
    from fslab import api
    from fslab.report.terminal import summary_tables

    if summary is None:
        summary = api.analyze(results_dir)
    runs = api.runs(results_dir)
    console.print(summary_tables(summary, runs))
    note = api.drift(results_dir)
    if note:
        console.print(note, style="dim")
    for line in _member_lines(api.member_split(results_dir)):
        console.print(line, markup=False, highlight=False)
    if "disturbed" in runs and runs["disturbed"].astype(bool).any():
        busy = runs[runs["disturbed"].astype(bool)]
        console.print(f"[yellow]{len(busy)} of {len(runs)} runs ran while the machine was "
                      f"busy ({escape(str(busy['disturbed_by'].iloc[0]))}; every one in "
                      "stats/disturbed.csv): fslab run --rerun-disturbed measures them "
                      "again.[/yellow]")


def _member_lines(split: object) -> list[str]:
    """"md-raid: randrw16k: reads 79.7 % on member 1 (loop3), 20.3 % on member 2 ..."""
    import pandas as pd

    assert isinstance(split, pd.DataFrame)
    lines = []
    for (target, workload), rows in split.groupby(["target", "workload"], sort=False):
        parts = ", ".join(f"{row.read_share:.1%} member {row.member} ({row.device}: "
                          f"{row.read_ios:,} reads, {row.write_ios:,} writes)"
                          for row in rows.itertuples())
        lines.append(f"{target} {workload}: read split {parts} [{rows['source'].iloc[0]}]")
    return lines


def main() -> None:
    """Entry point: user mistakes become one line and exit code 2, never a traceback."""
    try:
        app()
    except UserError as exc:
        err_console.print(f"fslab: error: {exc}", markup=False, highlight=False, soft_wrap=True)
        sys.exit(ExitCode.USER_ERROR)
    except ToolError as exc:  # outside a run (a run records it as its reason)
        err_console.print(f"fslab: error: {exc}", markup=False, highlight=False, soft_wrap=True)
        sys.exit(ExitCode.TOOL_FAILED)
    except KeyboardInterrupt:
        err_console.print("fslab: interrupted")
        sys.exit(ExitCode.INTERRUPTED)


import fslab.cli.history  # noqa: E402  (registers history)
import fslab.cli.more  # noqa: E402,F401  (registers age and doctor)

if __name__ == "__main__":
    main()
