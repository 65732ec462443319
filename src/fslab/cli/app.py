"""The `fslab` command's shared parts: the Typer app, consoles and common options (the
commands live beside this file, one module per group)."""

from __future__ import annotations

import signal
import sys
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer

from fslab.core.errors import ExitCode, UserError

# Plain help text (click's formatter): rendering it through rich costs more than the rest
# of `fslab --help` together.
app = typer.Typer(
    rich_markup_mode=None,
    add_completion=False,
    pretty_exceptions_enable=False,
    no_args_is_help=True,
    help="fslab: build real file systems, run real workloads, get sound statistics.",
)


class LazyConsole:
    """A rich Console made on first use: `fslab --help` and a command that fails early
    never import rich's console at all."""

    def __init__(self, **options: Any) -> None:
        self._options = options
        self._console: Any = None

    def get(self) -> Any:
        """The Console itself (for rich objects that take one: a progress bar)."""
        if self._console is None:
            from rich.console import Console

            self._console = Console(**self._options)
        return self._console

    def __getattr__(self, name: str) -> Any:
        return getattr(self.get(), name)


def escape(text: str) -> str:
    """rich markup escaped (rich.markup loaded when first needed)."""
    from rich.markup import escape as rich_escape

    return rich_escape(text)


# Tables are wide: when output is not a terminal (a log, a file), do not wrap at 80.
console: Any = LazyConsole(width=None if sys.stdout.isatty() else 160)
err_console: Any = LazyConsole(stderr=True)

LabOption = Annotated[
    Path | None, typer.Option("--lab", help="Lab directory for images and mounts "
                              "(default $FSLAB_LAB or /var/lib/fslab); the disk it is on "
                              "is the disk measured under the images.")
]
CatalogueOption = Annotated[Path | None, typer.Option(
    "--catalogue", help="Catalogue directory, shared by any number of machines (default "
                        "$FSLAB_CATALOGUE or ~/.local/share/fslab/catalogue); a .duckdb "
                        "file of an earlier fslab is read as it is.")]


def show(where: Any, parts: list[Any]) -> None:
    """Print a reporter's parts (report/): a plain line (rich Text) as it is, on one line
    however long; a string with its markup (colours)."""
    from rich.text import Text

    for part in parts:
        if isinstance(part, Text):
            where.print(part, highlight=False, soft_wrap=True)
        else:
            where.print(part)


def exit_interrupted(message: str) -> NoReturn:
    """Say what was interrupted and how to go on, and exit 130. Everything is released by
    now, so a further Ctrl-C is ignored: one landing while the exit unwinds would end the
    process by SIGINT (-2) instead of 130. The process is ending: an in-process caller
    (tests/conftest.py fslab_here) restores its own handler."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    err_console.print(message)
    sys.exit(ExitCode.INTERRUPTED)


def parse_labels(items: list[str] | None) -> dict[str, str]:
    """['kernel=6.12.3', 'commit=abc'] -> {'kernel': '6.12.3', 'commit': 'abc'}."""
    labels: dict[str, str] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise UserError(f"bad label {item!r}: use --label KEY=VALUE")
        labels[key.strip()] = value.strip()
    return labels
