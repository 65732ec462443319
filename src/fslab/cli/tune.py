"""`fslab tune`: which options for this workload — screen, race, confirm (fslab/tune/)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from fslab.cli.app import (
    LabOption,
    app,
    console,
    err_console,
    exit_interrupted,
    progress_shown,
    split_list,
    sweeps_of,
)

if TYPE_CHECKING:
    from fslab.api.tuning import TuneJob


@app.command()
def tune(
    campaign_file: Annotated[Path | None, typer.Argument(
        metavar="[CAMPAIGN.toml]", help="Campaign file (its [tune] table: the space); "
                                        "flags override it.")] = None,
    factor: Annotated[list[str] | None, typer.Option(
        "--factor", help="A factor to tune, NAME=V1,V2,... (repeatable; the first level is "
        "the reference, what you run today): anything --sweep takes, and one option each, "
        "mount_options.KEY=… or mkfs_options.KEY=….", metavar="NAME=V1,V2")] = None,
    wall_time: Annotated[str | None, typer.Option(
        "--wall-time", help="Wall time the tune may take, every stage counted, e.g. 30m "
        "(default 30m; campaign key tune.budget). Not `fslab run --budget`, which is "
        "measuring time.")] = None,
    budget: Annotated[str | None, typer.Option(
        "--budget", hidden=True, help="The old name of --wall-time.")] = None,
    max_runs: Annotated[int | None, typer.Option(
        "--max-runs", help="Runs the tune may take, every stage counted (instead of or "
        "beside --wall-time).")] = None,
    margin: Annotated[str | None, typer.Option(
        "--margin", help="Within this, two configurations are the same (default: the "
        "campaign's, else 10%).")] = None,
    objective: Annotated[str | None, typer.Option(
        "--objective", help="The metric to tune for (default: each workload's primary "
        "one, e.g. IOPS for random I/O).")] = None,
    subject_to: Annotated[list[str] | None, typer.Option(
        "--subject-to", help="A bound a winner keeps, e.g. 'p99_clat<=2ms' (repeatable): "
        "a configuration whose interval lies beyond it is dropped.")] = None,
    allow_unsafe: Annotated[bool, typer.Option(
        "--allow-unsafe", help="Measure options that risk acknowledged data on a power "
        "loss (nobarrier, data=writeback, sync=disabled …); a winner using one says so.")
    ] = False,
    fs: Annotated[str | None, typer.Option("--fs", help="Targets, comma-separated.")] = None,
    preset: Annotated[str | None, typer.Option(help="fio preset (default direct5).")] = None,
    workloads: Annotated[str | None, typer.Option(
        help="Only these workloads, comma-separated.")] = None,
    runtime: Annotated[str | None, typer.Option(help="Seconds per fio job.")] = None,
    size: Annotated[str | None, typer.Option(help="Image size per target, e.g. 2G.")] = None,
    rounds: Annotated[int | None, typer.Option(
        "--rounds", min=1, help="Slices per fio job, interleaved.")] = None,
    seed: Annotated[int | None, typer.Option(help="Seed of the designs and orders.")] = None,
    out: Annotated[Path | None, typer.Option(help="The tune's directory.")] = None,
    resume: Annotated[bool, typer.Option(
        "--resume", help="Continue the tune in --out DIR where it stopped.")] = False,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="Print the stages and what each may take; touch nothing.")] = False,
    no_ceiling: Annotated[bool, typer.Option(
        "--no-ceiling", help="Do not measure the raw device under the images.")] = False,
    again: Annotated[Path | None, typer.Option(
        "--again", metavar="DIR", help="Measure DIR's recommendation in a new sitting "
        "against itself without each change and against the reference, and say what "
        "holds next time, decided on the sittings after the one that chose.")] = None,
    catalogue: Annotated[Path | None, typer.Option(
        "--catalogue", help="A catalogue holding this host's history of option effects "
        "(what earlier tunes measured in two or more sittings): with it `change` is "
        "printed only where the next sitting's interval shows the gain, a --subject-to "
        "bound is for the next sitting, and this sitting's option contrasts are recorded "
        "there.")] = None,
    lab: LabOption = None,
) -> None:
    """Find the few options that matter for a workload and their best setting within a
    budget, proven against the reference (what you run today) on fresh data."""
    from fslab import api

    job = api.tune_request(campaign_file, api.TuneFlags(
        factors=sweeps_of(factor, "--factor"), wall_time=wall_time, old_budget=budget,
        max_runs=max_runs, margin=margin, objective=objective, subject_to=subject_to,
        allow_unsafe=allow_unsafe, overrides=api.Overrides(
            fs=split_list(fs), preset=preset, workloads=split_list(workloads),
            runtime=runtime, image_size=size, seed=seed, rounds=rounds,
            ceiling=False if no_ceiling else None),
        out=out, resume=resume, dry_run=dry_run, again=again, catalogue=catalogue))
    for note in job.notes:
        err_console.print(note, markup=False, highlight=False)
    if dry_run:
        for line in api.tune_plan(job.campaign, job.request):
            console.print(line, markup=False, highlight=False)
        return
    for line in _tuned(job, lab):
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    stats = job.out / "stats"
    if job.again:
        console.print(f"Wrote {stats / 'tune_options.csv'}", highlight=False)
        return
    console.print(f"Wrote {stats / 'tune_options.csv'} (each option: change or keep), "
                  f"{stats / 'tune_set.csv'}, {stats / 'tune.csv'}, {stats / 'tuned.toml'} "
                  f"and {job.out / 'tune.html'}", highlight=False)


def _tuned(job: TuneJob, lab: Path | None) -> list[str]:
    """The tune run (with its progress shown; --again: DIR's recommendation in a new
    sitting) and the lines that answer it; Ctrl-C: what to type to go on."""
    from fslab import api

    the_lab = api.make_lab(lab)
    if job.again:
        return api.tune_again(job.out, lab=the_lab, seed=job.seed, catalogue=job.catalogue)
    try:
        with progress_shown() as progress:
            return api.tune(job.campaign, job.request, job.out, lab=the_lab,
                            progress=progress, resume=job.resume, catalogue=job.catalogue)
    except KeyboardInterrupt:
        exit_interrupted("fslab: interrupted; what fslab made was released (what it could "
                         "not, named above). "
                         f"Continue with: fslab tune --resume --out {job.out}")
