"""Why a run has no values, as a field: run.json's `failure`, the runs table's column.

Code branches on the kind; the run's `reason` beside it is for people and is never read
back (results/legacy_failures.py reads it once, for directories written before kinds).
Where a tool refused (mkfs or mount), its own words are kept apart as `tool_said`, so a
reader can show what the tool and the kernel said without taking the reason apart.
"""

from __future__ import annotations

import errno
from enum import StrEnum
from pathlib import Path

from fslab.core.errors import ToolError


class Failure(StrEnum):
    """The kinds of failed run ('' is a run that measured)."""

    PROVISION = "provision"  # the target could not be made (a loop device, a daemon ...)
    REFUSED = "refused"  # mkfs or mount refused the target's options (tool_said: its words)
    NO_SPACE = "no_space"  # the run's files did not fit on the target
    UNSUPPORTED = "unsupported"  # the workload cannot run on this target (status unsupported)
    TOOL = "tool"  # the workload's tool failed, or its output says a job failed
    TIMEOUT = "timeout"  # the watchdog ended the workload at its deadline
    ERROR = "error"  # the system refused fslab something during the run (an OSError ...)
    AGING = "aging"  # the aging stopped short of its level's utilisation (aging/per_place.py)
    HUNG = "hung"  # the target's FUSE daemon stopped answering: its connection was aborted


# The programs whose failure while a target is made means the file system refused what it
# was asked (an option, a combination, a size), not that the machine could not make it.
REFUSING_TOOLS = ("mount", "mkfs")


def provision_failure(exc: BaseException) -> tuple[Failure, str]:
    """(kind, the tool's own words) of a target that could not be made."""
    if isinstance(exc, ToolError) and exc.cmd and Path(exc.cmd[0]).name.startswith(
            REFUSING_TOOLS):
        return Failure.REFUSED, str(exc)
    return Failure.PROVISION, ""


def error_failure(exc: BaseException) -> Failure:
    """The kind of an exception that ended a run: no space, a tool, or the system's."""
    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return Failure.NO_SPACE
    if isinstance(exc, ToolError):
        return Failure.TOOL
    return Failure.ERROR


def failure_of(status: str, kind: str) -> str:
    """A finished run's kind: '' when it measured, its own when said, else what its status
    implies (a workload that fails without saying why has a failed tool)."""
    if status == "ok":
        return ""
    if kind:
        return str(Failure(kind))
    return str(Failure.UNSUPPORTED if status == "unsupported" else Failure.TOOL)
