"""fslab's own child processes (fio, bonnie++): each started in a cgroup of its own (cgroup
v2; a process group where there is none), written in the session's ledger while it runs,
and bounded by a deadline (the watchdog).

Why a cgroup: fio forks a process per job, and each job process makes itself a session
of its own (seen with fio 3.33: ending fio's process group leaves the job running).
Ending only the process fslab started leaves its jobs running, holding files on an
image whose loop device then cannot be detached; a cgroup holds everything forked in it.
Why the ledger: after fslab itself is SIGKILLed, `fslab cleanup` finds the cgroup (or
group) there and ends what is in it. Why a deadline: a job that never ends (fio's
own `io_submit_mode=offload` examples hang fio 3.33 here) must not hold the campaign; it
is ended with its group and the run is recorded as failed with the reason.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from fslab.core import stopwatch
from fslab.host import system
from fslab.host.cgroups import CGROUP_V2_ROOT, PREFIX, end_members, release_cgroup, tracking_root


class Ledger(Protocol):
    """What children need of a lab session (lab.Session): to write a child down before
    it runs and to strike it off once fslab has ended it itself."""

    def record(self, kind: str, path: Path | str, **extra: Any) -> Any: ...

    def forget(self, resource: Any) -> None: ...


_SESSION: ContextVar[Ledger | None] = ContextVar("fslab_children_session", default=None)
INTERRUPT_GRACE_S = 15  # fio writes its results after SIGINT; then it is ended


@contextlib.contextmanager
def recorded_in(session: Ledger) -> Iterator[None]:
    """Every child started inside goes into `session`'s ledger while it runs."""
    token = _SESSION.set(session)
    try:
        yield
    finally:
        _SESSION.reset(token)


# Work that can wait for a moment when fslab has nothing to do but wait on a child whose
# time nobody measures (a layout pass): importing the analysis's libraries, say.
_WHILE_UNMEASURED: list[Callable[[], None]] = []


def while_unmeasured(work: Callable[[], None]) -> None:
    """Do `work` the next time fslab waits on a child that measures nothing, instead of
    in the foreground: never beside a measured run, whose CPU and disk it would share."""
    if work not in _WHILE_UNMEASURED:
        _WHILE_UNMEASURED.append(work)


# Work whose I/O may overlap anything but a measurement: removing a written image, whose
# host file system discards the blocks it frees (0.2-1.4 s a target here, measured in a
# default campaign's teardown steps). It runs in a thread at once, beside the next
# target's mkfs and layout, and is waited for before anything measures (`settle`).
_BACKGROUND: list[threading.Thread] = []


def in_background(work: Callable[[], None]) -> None:
    """Start `work` (which raises nothing) in a thread; `settle` waits for it."""
    thread = threading.Thread(target=work, name="fslab-background", daemon=True)
    _BACKGROUND.append(thread)
    thread.start()


def settle() -> None:
    """Wait for the work started in_background: before a measured child starts, a
    workload runs in fslab's own process, or a session closes. A wait is the run's
    teardown step (core/stopwatch.py)."""
    if not _BACKGROUND:
        return
    with stopwatch.step(stopwatch.TEARDOWN):
        while _BACKGROUND:
            _BACKGROUND.pop(0).join()


@dataclass
class Finished:
    """How a child ended."""

    returncode: int
    stdout: str
    stderr: str
    seconds: float
    watchdog: str = ""  # why the watchdog ended it ('' when it ended by itself)


def run_child(cmd: list[str], deadline_s: float, cgroup: str = "",
              bound: str = "", measured: bool = True) -> Finished:
    """Run `cmd` to its end or to `deadline_s`, whichever comes first; on Ctrl-C or SIGTERM
    stop it (SIGINT: fio still writes what it measured), wait, and re-raise. `bound` says
    where the deadline came from, for the failure line. While a child that is not
    `measured` runs, fslab does the work waiting for such a moment (while_unmeasured)."""
    if measured:
        settle()
    tracking = _tracking_cgroup(cgroup)
    joins = [c for c in (cgroup, str(tracking or "")) if c]
    session = _SESSION.get()
    entry = None
    if session is not None and tracking is not None:  # recorded before it is made
        entry = session.record("children", str(tracking), cmd=Path(cmd[0]).name)
    if tracking is not None:
        tracking.mkdir()
    start = time.perf_counter()
    proc = subprocess.Popen(joined(cmd, joins), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    born = system.process_start_time(proc.pid) or 0
    # Members are forked while the group runs: none starts after its deadline.
    until = born + int((deadline_s + INTERRUPT_GRACE_S + 5) * os.sysconf("SC_CLK_TCK"))
    if session is not None and tracking is None:
        entry = session.record("pgroup", str(proc.pid), cmd=Path(cmd[0]).name,
                               start_time=born, until=until)
    why = ""
    try:
        while not measured and _WHILE_UNMEASURED:
            _WHILE_UNMEASURED.pop(0)()  # its failure is its own: it raises nothing
        try:
            stdout, stderr = proc.communicate(timeout=deadline_s)
        except subprocess.TimeoutExpired:
            _end_all(proc, tracking, signal.SIGKILL)
            stdout, stderr = proc.communicate()
            why = (f"the watchdog ended {Path(cmd[0]).name} after {deadline_s:.0f} s"
                   + (f" ({bound})" if bound else ""))
        except BaseException:
            _interrupt(proc, tracking)
            raise
    finally:
        if tracking is not None:
            end_members(tracking)  # what outlived fio's own process, if anything
            release_cgroup(tracking)
        else:
            system.end_stragglers(proc.pid, born, until)
        if session is not None and entry is not None:
            session.forget(entry)
    code = -signal.SIGKILL if why else proc.returncode
    return Finished(code, stdout or "", (stderr or "") + (f"\nfslab: {why}" if why else ""),
                    time.perf_counter() - start, why)


_made = itertools.count()
# Joins the cgroups named before "--", then becomes the command after it. Not a Python
# preexec_fn: that makes subprocess fork the whole interpreter (16–25 ms with pandas and
# pyarrow loaded, paid by every slice) where a shell lets it use vfork (about 1 ms).
_JOIN = ('for g; do [ "$g" = -- ] && break; echo $$ 2>/dev/null > "$g/cgroup.procs" || '
         '{ echo "fslab: could not join cgroup $g" >&2; exit 126; }; shift; done; shift; '
         'exec "$@"')


def joined(cmd: list[str], cgroups: list[str]) -> list[str]:
    """`cmd`, started inside `cgroups` (cgroup v2 directories) before it runs."""
    if not cgroups:
        return cmd
    return ["/bin/sh", "-c", _JOIN, "fslab-join", *cgroups, "--", *cmd]


def _tracking_cgroup(cgroup: str) -> Path | None:
    """A fresh cgroup for one child and all it forks; None where none can be made (no
    cgroup v2, not root, or the child must join a v2 cgroup of its own already)."""
    root = tracking_root()
    if root is None or (cgroup and Path(cgroup).is_relative_to(root)
                        and root == CGROUP_V2_ROOT):
        return None
    return root / f"{PREFIX}child-{os.getpid()}-{next(_made)}"


def _end_all(proc: subprocess.Popen[str], tracking: Path | None, sig: int) -> None:
    """Signal the child and everything it forked (its cgroup, else its process group)."""
    if tracking is not None and sig == signal.SIGKILL:
        end_members(tracking)
    else:
        end_group(proc.pid, sig)
        if tracking is not None:
            for pid in (tracking / "cgroup.procs").read_text().split():
                with contextlib.suppress(ProcessLookupError):
                    os.kill(int(pid), sig)


def _interrupt(proc: subprocess.Popen[str], tracking: Path | None) -> None:
    if proc.poll() is None:
        _end_all(proc, tracking, signal.SIGINT)
        try:
            proc.wait(timeout=INTERRUPT_GRACE_S)
        except subprocess.TimeoutExpired:
            _end_all(proc, tracking, signal.SIGKILL)
            proc.wait()


def end_group(pgid: int, sig: int) -> None:
    """Signal a process group fslab made, while its leader is not yet reaped (so the
    group's number is still fslab's)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)
