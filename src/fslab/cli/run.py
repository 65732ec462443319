"""`fslab run`: a campaign from a file and flags, run (or shown: --dry-run), summarised."""

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
    exit_interrupted,
    parse_labels,
)
from fslab.cli.summary import print_decision_line, print_summary
from fslab.core.errors import ExitCode, UserError


def _sweeps(flags: list[str] | None) -> dict[str, list[str]] | None:
    """--sweep NAME=V1,V2 flags as {NAME: levels} (a name given twice: one clear error)."""
    if not flags:
        return None
    from fslab import api

    found: dict[str, list[str]] = {}
    for text in flags:
        name, levels = api.parse_factor(text)
        if name in found:
            raise UserError(f"--sweep {name} is given twice: give every level in one flag")
        found[name] = levels
    return found


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
    sweep: Annotated[list[str] | None, typer.Option(
        "--sweep", help="A factor of the design, NAME=V1,V2,... (repeatable): a fio job "
        "option (iodepth, numjobs, bs, ioengine, rw …), mount_options, mkfs_options or "
        "zfs.PROPERTY; the plan is the product of the levels (campaign table [sweep]).",
        metavar="NAME=V1,V2")] = None,
    budget: Annotated[str | None, typer.Option(
        "--budget", help="The most measuring time to plan without --yes (default 2h).")] = None,
    yes: Annotated[bool, typer.Option(
        "--yes", help="Run a plan past its --budget.")] = False,
    resolve: Annotated[bool, typer.Option(
        "--resolve", help="Then measure more iterations only where a primary question is "
        "unresolved, until each is decided or --budget is spent (with --resume: of a "
        "campaign already run).")] = False,
    again: Annotated[Path | None, typer.Option(
        "--again", metavar="DIR", help="Run DIR's campaign once more as a new sitting "
        "(the same plan, a new seed, new file systems) into DIR/sittings/N, then pool "
        "all of DIR's sittings into DIR/stats/pooled.csv.")] = None,
    lab: LabOption = None,
) -> None:
    """Run a campaign: targets × workloads × iterations, then summarise."""
    from fslab import api

    if until_ci is not None and until_ci <= 0:
        raise UserError("--until-ci must be a percentage above 0, e.g. 5")
    if until_detectable is not None and until_detectable <= 0:
        raise UserError("--until-detectable must be a percentage above 0, e.g. 5")
    overrides = api.Overrides(
        fs=_split(fs), preset=preset, workloads=_split(workloads), iterations=iterations,
        runtime=runtime, image_size=size, file_size=file_size,
        out=str(out) if out else None, seed=seed, fresh=fresh, hosts=_split(hosts),
        primary=_split(primary), rounds=rounds, ceiling=False if no_ceiling else None,
        as_published=as_published or None, labels=parse_labels(label) or None,
        margin=margin, sweeps=_sweeps(sweep),
    )
    from fslab.core.units import parse_duration

    budget_s = parse_duration(budget) if budget is not None else api.DEFAULT_BUDGET_S
    if again is not None:
        if resume or campaign_file is not None or out is not None:
            raise UserError("--again DIR runs DIR's own campaign as a new sitting: drop the "
                            "campaign file, --out and --resume")
        campaign, out = api.again_campaign(again, seed)
        resume = False
    elif resume:
        if out is None:
            raise UserError("--resume needs --out DIR: the results directory to continue")
        campaign, line = api.resume_with(out, campaign_file, overrides)
        if not dry_run:
            console.print(line)
    else:
        campaign = api.load_campaign(campaign_file, overrides)
    devices = frozenset(confirm_device or [])
    the_lab = api.make_lab(lab)
    if dry_run:
        problems: list[str] = []
        plan, targets = api.prepare(campaign, confirmed_devices=devices,
                                    force_device=force_device, problems=problems)
        console.print(api.plan_preview(plan, targets, the_lab.root), soft_wrap=True)
        for problem in problems:
            err_console.print(f"would stop: {problem}", markup=False, highlight=False)
        if problems:
            raise typer.Exit(ExitCode.USER_ERROR)
        return

    if campaign.published is not None:
        for line in campaign.published.lines():
            console.print(line, markup=False, highlight=False)

    try:
        shown = err_console.get()
        with (api.RichProgress(shown) if shown.is_terminal
              else api.LineProgress(sys.stderr)) as progress:
            check = api.quick_check(the_lab, progress.note)
            try:
                result = api.run(campaign, out=out, lab=the_lab, resume=resume,
                                 confirmed_devices=devices, force_device=force_device,
                                 progress=progress, until_ci=until_ci,
                                 max_iterations=max_iterations,
                                 until_detectable=until_detectable,
                                 rerun_disturbed=rerun_disturbed,
                                 rerun_unsteady=rerun_unsteady,
                                 budget=None if yes else budget_s,
                                 resolve=resolve, resolve_budget=budget_s,
                                 catalogue=catalogue)
            finally:
                check.join()
    except KeyboardInterrupt:
        target = out or "DIR"
        exit_interrupted(f"fslab: interrupted; everything fslab made was released. "
                         f"Continue with: fslab run --resume --out {target}")
    print_summary(result.results.path, result.analysis, decided=False)
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
    for line in result.unresolved:
        console.print(f"[yellow]Not resolved within --budget: {escape(line)}[/yellow]")
    console.print(f"Next: fslab report {result.results.path} (HTML; the tests, effect sizes "
                  f"and verdicts are in {result.results.path / 'stats'})")
    if catalogue is not None:
        from fslab import api

        recorded, why = api.record_campaign(catalogue, result.results.path)
        if recorded is not None:
            console.print(escape(f"Catalogue {catalogue}: {recorded}"), highlight=False)
        else:  # the campaign's results stand whatever happened to the catalogue
            err_console.print(escape(
                f"catalogue {catalogue}: this campaign was not recorded ({why}); record it "
                f"later with: fslab history add {result.results.path} --catalogue "
                f"{catalogue}"), highlight=False, markup=False, soft_wrap=True)
    console.print(f"Results: {result.results.path}  ({result.runner.ok} runs ok, "
                  f"{result.runner.failed} failed, {result.runner.skipped} kept from before"
                  + (f", {result.runner.reruns} measured again" if result.runner.reruns
                     else "") + ")")
    print_decision_line(result.analysis or api.analysed(result.results.path))
    if again is not None:
        pooled = api.pool_again(again, catalogue)
        if pooled is not None:
            console.print("\n".join(pooled.lines), markup=False, highlight=False,
                          soft_wrap=True)
            console.print(f"Wrote {again / 'stats' / 'pooled.csv'}", markup=False)
    if result.runner.failed:
        raise typer.Exit(ExitCode.RUN_FAILURES)
