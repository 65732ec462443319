"""The `fslab` command's shared parts: the Typer app, consoles and common options (the
commands live beside this file, one module per group)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from fslab.core.errors import UserError

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
CatalogueOption = Annotated[Path | None, typer.Option(
    "--catalogue", help="Catalogue file (default $FSLAB_CATALOGUE or "
                        "~/.local/share/fslab/catalogue.duckdb).")]


def parse_labels(items: list[str] | None) -> dict[str, str]:
    """['kernel=6.12.3', 'commit=abc'] -> {'kernel': '6.12.3', 'commit': 'abc'}."""
    labels: dict[str, str] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise UserError(f"bad label {item!r}: use --label KEY=VALUE")
        labels[key.strip()] = value.strip()
    return labels
