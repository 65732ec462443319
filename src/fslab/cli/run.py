"""`fslab run`: a campaign from a file and flags, run (or shown: --dry-run), summarised."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from fslab.cli.app import (
    CatalogueOption,
    LabOption,
    app,
    console,
    err_console,
    exit_interrupted,
    parse_labels,
    progress_shown,
    show,
    split_list,
    sweeps_of,
)
from fslab.core.descriptions import CEILING, SLICES
from fslab.core.errors import ExitCode
from fslab.core.units import parse_duration
from fslab.report.run_text import run_text

if TYPE_CHECKING:
    from fslab.api.campaigns import RunRequest
    from fslab.report.run_text import RunOutcome


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

    overrides = api.Overrides(
        fs=split_list(fs), preset=preset, workloads=split_list(workloads),
        iterations=iterations, runtime=runtime, image_size=size, file_size=file_size,
        out=str(out) if out else None, seed=seed, fresh=fresh, hosts=split_list(hosts),
        primary=split_list(primary), rounds=rounds, ceiling=False if no_ceiling else None,
        as_published=as_published or None, labels=parse_labels(label) or None,
        margin=margin, sweeps=sweeps_of(sweep, "--sweep"),
        job_files=[str(path) for path in job_file] if job_file else None)
    options = api.RunOptions(
        resume=resume, confirmed_devices=frozenset(confirm_device or []),
        force_device=force_device, until_ci=until_ci, max_iterations=max_iterations,
        until_detectable=until_detectable, rerun_disturbed=rerun_disturbed,
        rerun_unsteady=rerun_unsteady, budget=parse_duration(budget) if budget is not None
        else api.DEFAULT_BUDGET_S, yes=yes, resolve=resolve, catalogue=catalogue,
        again=again, summarise=True)
    request = api.campaign_for(campaign_file, overrides, options, out)
    if dry_run:
        _dry_run(request, lab)
        return
    outcome = _measured(request, lab)
    said, warned = run_text(outcome)
    show(console, said)
    show(err_console, warned)
    if outcome.failed:
        raise typer.Exit(ExitCode.RUN_FAILURES)


def _measured(request: RunRequest, lab: Path | None) -> RunOutcome:
    """The campaign run (after what is said of it first: how far a resumed one got, an
    as-published one's values) with its progress shown and the doctor's quick look beside
    it; Ctrl-C: what to type to go on."""
    from fslab import api

    if request.resumed:
        console.print(request.resumed)
    for line in request.published:
        console.print(line, markup=False, highlight=False)
    the_lab = api.make_lab(lab)
    try:
        with progress_shown() as progress:
            check = api.quick_check(the_lab, progress.note)
            try:
                result = api.run(request.campaign, request.out, request.options,
                                 lab=the_lab, progress=progress)
            finally:
                check.join()
    except KeyboardInterrupt:
        exit_interrupted("fslab: interrupted; what fslab made was released (what it could "
                         "not, named above). "
                         f"Continue with: fslab run --resume --out {request.out or 'DIR'}")
    assert result.outcome is not None
    return result.outcome


def _dry_run(request: RunRequest, lab: Path | None) -> None:
    """The plan, and what would stop it (exit 2) before anything is touched."""
    from fslab import api

    options = request.options
    preview, problems = api.dry_run(request.campaign, api.make_lab(lab).root,
                                    options.confirmed_devices, options.force_device)
    console.print(preview, soft_wrap=True)
    for problem in problems:
        err_console.print(f"would stop: {problem}", markup=False, highlight=False,
                          soft_wrap=True)  # one problem, one line
    if problems:
        raise typer.Exit(ExitCode.USER_ERROR)
