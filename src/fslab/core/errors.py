"""The one user-facing error type and the process exit codes."""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """Exit codes of the `fslab` command, stable for scripts."""

    OK = 0
    REGRESSION = 1  # reserved for `fslab compare`
    USER_ERROR = 2
    RUN_FAILURES = 3  # campaign finished but some runs failed
    SKIPPED_FILES = 4  # `fslab import` wrote what it could read; some files were skipped
    TOOL_FAILED = 5  # an external command (mkfs, mount, fio ...) failed outside a run
    INTERRUPTED = 130


class UserError(Exception):
    """A mistake the user can fix; printed as one line, never as a traceback."""


class Shortage(Exception):
    """The machine lacks what the campaign needs to go on (a free loop device, room in the
    lab for any of its targets): said in one line, the campaign stops, what fslab made is
    released and the runs that finished stay (--resume continues). Not a UserError: no
    failed run is recorded for it, whatever catches a run's own errors on the way."""


class ToolError(Exception):
    """An external command failed; carries the command and the tail of its stderr."""

    def __init__(self, cmd: list[str], returncode: int, stderr: str) -> None:
        self.cmd = cmd
        self.returncode = returncode
        self.stderr = stderr
        super().__init__(f"{cmd[0]} exited with {returncode}: {_telling_lines(stderr)}")


def _telling_lines(stderr: str) -> str:
    """What a failed tool said, in a line: its last three lines, or, where it printed its
    usage after the reason (mkfs.xfs: "Log size must be at least 64MB." then 30 lines of
    usage), the three before the usage."""
    lines = [line.strip() for line in stderr.strip().splitlines() if line.strip()]
    usage = next((i for i, line in enumerate(lines) if line.lower().startswith("usage:")),
                 None)
    if usage:
        lines = lines[:usage]
    return " ".join(lines[-3:]) or "no output"
