"""`fslab tune`: which options for this workload — screen, race, confirm (fslab/tune/)."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Annotated

import typer

from fslab.cli.app import LabOption, app, console, err_console, exit_interrupted
from fslab.cli.run import _split, _sweeps
from fslab.core.errors import UserError


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
    from fslab.core.units import DEFAULT_MARGIN

    wall_time = _wall_time(wall_time, budget)
    if again is not None:
        if resume or campaign_file is not None or out is not None:
            raise UserError("--again DIR confirms DIR's own tune in a new sitting: drop the "
                            "campaign file, --out and --resume")
        given = {"--factor": factor, "--wall-time": wall_time, "--max-runs": max_runs,
                 "--margin": margin, "--objective": objective, "--subject-to": subject_to,
                 "--allow-unsafe": allow_unsafe or None, "--fs": fs, "--preset": preset,
                 "--workloads": workloads, "--runtime": runtime, "--size": size,
                 "--rounds": rounds, "--no-ceiling": no_ceiling or None,
                 "--dry-run": dry_run or None}
        changed = [flag for flag, value in given.items() if value is not None]
        if changed:
            raise UserError(f"--again confirms {again}'s own tune: drop {', '.join(changed)} "
                            "(a new sitting confirms the same recommendation, new seed)")
        for line in api.tune_again(again, lab=api.make_lab(lab), seed=seed,
                                   catalogue=catalogue):
            console.print(line, markup=False, highlight=False, soft_wrap=True)
        console.print(f"Wrote {again / 'stats' / 'tune_options.csv'}", highlight=False)
        return
    if resume:
        if out is None:
            raise UserError("--resume needs --out DIR: the tune to continue")
        campaign, request = api.tune_resumed(out)
    else:
        overrides = api.Overrides(
            fs=_split(fs), preset=preset, workloads=_split(workloads), runtime=runtime,
            image_size=size, seed=seed, rounds=rounds,
            ceiling=False if no_ceiling else None)
        campaign = api.load_campaign(campaign_file, overrides)
        request = api.tune_request(
            campaign.tune, _sweeps(factor) or {}, margin=margin,
            campaign_margin=campaign.margin or DEFAULT_MARGIN, budget=wall_time,
            max_runs=max_runs, objective=objective, bounds=subject_to,
            allow_unsafe=allow_unsafe)
    space = request.space([t.fs for t in campaign.targets])
    if dry_run:
        for line in [*space.notes, *api.tune_plan(campaign, request)]:
            console.print(line, markup=False, highlight=False)
        return
    where = out or Path("results") / f"tune-{campaign.name}-{time.strftime('%Y%m%d-%H%M%S')}"
    try:
        shown = err_console.get()
        with (api.RichProgress(shown) if shown.is_terminal
              else api.LineProgress(sys.stderr)) as progress:
            lines = api.tune(campaign, request, where, lab=api.make_lab(lab),
                             progress=progress, resume=resume, catalogue=catalogue)
    except KeyboardInterrupt:
        exit_interrupted("fslab: interrupted; what fslab made was released (what it could "
                         "not, named above). "
                         f"Continue with: fslab tune --resume --out {where}")
    for line in lines:
        console.print(line, markup=False, highlight=False, soft_wrap=True)
    stats = where / "stats"
    console.print(f"Wrote {stats / 'tune_options.csv'} (each option: change or keep), "
                  f"{stats / 'tune_set.csv'}, {stats / 'tune.csv'}, {stats / 'tuned.toml'} "
                  f"and {where / 'tune.html'}", highlight=False)


def _wall_time(wall_time: str | None, budget: str | None) -> str | None:
    """--wall-time, or its old name --budget with a note (in `fslab run`, --budget is
    measuring time: one flag name, one meaning)."""
    if budget is None:
        return wall_time
    if wall_time is not None:
        raise UserError("give --wall-time alone (--budget is its old name)")
    err_console.print("fslab: note: tune's --budget is now --wall-time (the wall time the "
                      "tune may take); `fslab run --budget` is measuring time",
                      markup=False, highlight=False)
    return budget
