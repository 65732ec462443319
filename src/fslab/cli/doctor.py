"""`fslab doctor`: is this machine fit to measure on, and what to do where it is not."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from fslab.cli.app import LabOption, app, console, escape
from fslab.core.errors import ExitCode


@app.command()
def doctor(
    campaign_file: Annotated[Path | None, typer.Argument(
        metavar="[CAMPAIGN.toml]", help="Also check the lab's free space against what this "
                                        "campaign's images take.")] = None,
    tune: Annotated[bool, typer.Option(
        "--tune", help="Set what can be set reversibly (CPU governor); recorded.")] = False,
    untune: Annotated[bool, typer.Option("--untune", help="Undo --tune.")] = False,
    lab: LabOption = None,
) -> None:
    """Check this machine for measuring: load, CPU frequency, memory, disk, space, loop
    direct I/O, tools — each with what it means for results and how to fix it."""
    from fslab import api

    if tune or untune:
        for line in api.doctor_tune(lab, undo=untune):
            console.print(line)
        return
    campaign = (api.load_campaign(campaign_file, api.Overrides()) if campaign_file
                else None)
    findings = api.doctor(lab, campaign)
    colours = {api.OK: "green", api.BAD: "red"}
    for finding in findings:
        mark = colours.get(finding.state, "yellow")
        console.print(f"[{mark}]{finding.state:>4}[/] {escape(finding.name)}: "
                      f"{escape(finding.seen)}", soft_wrap=True)
        for extra in (finding.meaning, f"fix: {finding.fix}" if finding.fix else ""):
            if extra:
                console.print(f"       {escape(extra)}", style="dim", soft_wrap=True)
    if any(f.state == api.BAD for f in findings):
        raise typer.Exit(ExitCode.TOOL_FAILED)
