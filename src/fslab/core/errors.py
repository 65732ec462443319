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


class ToolError(Exception):
    """An external command failed; carries the command and the tail of its stderr."""

    def __init__(self, cmd: list[str], returncode: int, stderr: str) -> None:
        self.cmd = cmd
        self.returncode = returncode
        self.stderr = stderr
        tail = " ".join(stderr.strip().splitlines()[-3:]) if stderr.strip() else "no output"
        super().__init__(f"{cmd[0]} exited with {returncode}: {tail}")
