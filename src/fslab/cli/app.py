"""The `fslab` command's shared parts: the Typer app, consoles and common options (the
commands live in cli.py and cli_more.py)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

app = typer.Typer(
    add_completion=False,
    pretty_exceptions_enable=False,
    no_args_is_help=True,
    help="fslab: build real file systems, run real workloads, get sound statistics.",
)
# Tables are wide: when output is not a terminal (a log, a file), do not wrap at 80.
console = Console(width=None if sys.stdout.isatty() else 160)
err_console = Console(stderr=True)

LabOption = Annotated[
    Path | None, typer.Option("--lab", help="Lab directory for images and mounts "
                              "(default $FSLAB_LAB or /var/lib/fslab).")
]
