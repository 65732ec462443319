"""`fslab run`: a campaign from a file and flags, run (or shown: --dry-run), summarised."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from fslab.cli.app import (
    CatalogueOption,
    LabOption,
    app,
    console,
    err_console,
    exit_interrupted,
    parse_labels,
    show,
)
from fslab.core.descriptions import CEILING, SLICES
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


@app.command(epilog=f"{SLICES}\n\n{CEILING}")
def run(
    campaign_file: Annotated[Path | None, typer.Argument(
        metavar="[CAMPAIGN.toml]", help="Campaign file; flags override it.")] = None,
    fs: Annotated[str | None, typer.Option(
        "--fs", help="Targets, comma-separated: ext4,xfs,btrfs or dir:PATH.")] = None,
    preset: Annotated[str | None, typer.Option(help="fio preset (default direct5).")] = None,
    job_file: Annotated[list[Path] | None, typer.Option(
        "--job-file", metavar="FILE.fio", help="Your own fio job file as the workload "
        "(repeatable; campaign key [[workload]] job_file = ...): laid out once and measured "
        "in interleaved slices like a preset, or whole where it cannot be sliced (the dry "
        "run says why).")] = None,
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
        "--confirm-device", metavar="DEV",
        help="Allow formatting the real device a target names (campaign key [[target]] "
             "device = DEV; repeat per device): its file system is made on the device "
             "itself, which is measured and loses all its data (fslab targets).")] = None,
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
        "--rounds", min=1, help="Slices per fio job, interleaved with the other targets "
        "(default 6, fewer for short jobs; 1: each run whole): see Slices below.")] = None,
    no_ceiling: Annotated[bool, typer.Option(
        "--no-ceiling", help="Do not measure the disk under the images (the ceiling that "
        "marks cache-bound results; campaign key ceiling = false): see Ceiling below."
    )] = False,
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
        "--budget", help="Measuring time (fio's runtime and ramp) a plan may take before it "
        "needs --yes, default 2h; with --resolve, the machine time the campaign's runs may "
        "take in all. (In `fslab tune`, wall time is --wall-time.)")] = None,
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
    from fslab.core.units import parse_duration

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
        job_files=[str(path) for path in job_file] if job_file else None,
    )
    budget_s = parse_duration(budget) if budget is not None else api.DEFAULT_BUDGET_S
    adaptive = [flag for flag, value in (("--until-ci", until_ci),
                                         ("--until-detectable", until_detectable))
                if value is not None]
    if again is not None and adaptive:
        raise UserError(f"--again repeats {again}'s plan: drop {', '.join(adaptive)} (a new "
                        "sitting runs the same iterations; --resolve may follow it)")
    campaign, out, resume = _campaign(campaign_file, overrides, resume, out, dry_run, again,
                                      seed)
    devices = frozenset(confirm_device or [])
    the_lab = api.make_lab(lab)
    if dry_run:
        _dry_run(campaign, the_lab.root, devices, force_device)
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
                                 catalogue=catalogue, summarise=True, again=again)
            finally:
                check.join()
    except KeyboardInterrupt:
        exit_interrupted("fslab: interrupted; what fslab made was released (what it could "
                         "not, named above). "
                         f"Continue with: fslab run --resume --out {out or 'DIR'}")
    from fslab.report.run_text import run_text

    assert result.outcome is not None
    said, warned = run_text(result.outcome)
    show(console, said)
    show(err_console, warned)
    if result.runner.failed:
        raise typer.Exit(ExitCode.RUN_FAILURES)


# The flags that would change a campaign's plan, by their Overrides field: --again repeats
# the plan as it was, so each is refused with it (only --seed and --resolve go with it).
PLAN_FLAGS = {"fs": "--fs", "preset": "--preset", "workloads": "--workloads",
              "iterations": "--iterations", "runtime": "--runtime", "image_size": "--size",
              "file_size": "--file-size", "fresh": "--fresh", "hosts": "--hosts",
              "primary": "--primary", "rounds": "--rounds", "ceiling": "--no-ceiling",
              "as_published": "--as-published", "labels": "--label", "margin": "--margin",
              "sweeps": "--sweep", "job_files": "--job-file"}


def _campaign(campaign_file: Path | None, overrides: object, resume: bool, out: Path | None,
              dry_run: bool, again: Path | None, seed: int | None
              ) -> tuple[Any, Path | None, bool]:
    """(the campaign the flags and the file describe, where it goes, whether it resumes):
    --again DIR, DIR's own as a new sitting; --resume, the one saved in --out (and the
    line saying how far it got)."""
    from fslab import api

    assert isinstance(overrides, api.Overrides)
    if again is not None:
        if resume or campaign_file is not None or out is not None:
            raise UserError("--again DIR runs DIR's own campaign as a new sitting: drop the "
                            "campaign file, --out and --resume")
        changed = [flag for field, flag in PLAN_FLAGS.items()
                   if getattr(overrides, field) is not None]
        if changed:
            raise UserError(f"--again repeats {again}'s plan: drop {', '.join(changed)} (a "
                            "new sitting runs the same plan with a new seed)")
        campaign, out = api.again_campaign(again, seed)
        return campaign, out, False
    if not resume:
        return api.load_campaign(campaign_file, overrides), out, False
    if out is None:
        raise UserError("--resume needs --out DIR: the results directory to continue")
    campaign, line = api.resume_with(out, campaign_file, overrides)
    if not dry_run:
        console.print(line)
    return campaign, out, True


def _dry_run(campaign: Any, lab_root: Path, devices: frozenset[str], force: bool) -> None:
    """The plan, and what would stop it (exit 2) before anything is touched."""
    from fslab import api

    preview, problems = api.dry_run(campaign, lab_root, devices, force)
    console.print(preview, soft_wrap=True)
    for problem in problems:
        err_console.print(f"would stop: {problem}", markup=False, highlight=False,
                          soft_wrap=True)  # one problem, one line
    if problems:
        raise typer.Exit(ExitCode.USER_ERROR)
