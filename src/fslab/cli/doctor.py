"""`fslab doctor`: is this machine fit to measure on, and what to do where it is not."""

from __future__ import annotations

from typing import Annotated

import typer

from fslab.cli.app import LabOption, app, console, escape
from fslab.core.errors import ExitCode


@app.command()
def doctor(
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
    findings = api.doctor(lab)
    colours = {api.OK: "green", api.BAD: "red"}
    for finding in findings:
        mark = colours.get(finding.state, "yellow")
        console.print(f"[{mark}]{finding.state:>4}[/] {escape(finding.name)}: "
                      f"{escape(finding.seen)}")
        for extra in (finding.meaning, f"fix: {finding.fix}" if finding.fix else ""):
            if extra:
                console.print(f"       {escape(extra)}", style="dim")
    if any(f.state == api.BAD for f in findings):
        raise typer.Exit(ExitCode.TOOL_FAILED)
