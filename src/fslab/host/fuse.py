"""A FUSE file system whose daemon stops answering: found, and ended.

A FUSE daemon that hangs (stopped, deadlocked, waiting on a dead network) rather than
exits blocks every access to its mount in the kernel. Measured here (ntfs-3g, kernel
6.18, the daemon SIGSTOPped under fio): fio's job process waits in
request_wait_answer, and once SIGKILLed waits on uninterruptibly (state D); a stat of
the mount point never returns; umount of the busy mount fails. Aborting the FUSE
connection (fusectl's `abort`) ends every such wait with "Transport endpoint is not
connected"; then a plain umount works and the daemon can be ended.

Nothing here stats the mount point: its connection is read from /proc/self/mountinfo,
the daemon's state from /proc, the requests waiting from fusectl.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from fslab.core.errors import ToolError
from fslab.host import system

CONTROL_FS = "fusectl"
SYSTEM_CONTROL = Path("/sys/fs/fuse/connections")  # where a distribution mounts fusectl
CHECK_S = 0.5  # how often the watch looks
STOPPED_S = 3.0  # a stopped daemon with requests waiting this long is hung
STALL_S = 20.0  # requests waiting this long while the daemon does nothing: hung
PROBE_S = 2.0  # at release, a daemon not stopped is watched this long for progress
EXIT_S = 30.0  # an unmounted daemon flushes its device and exits: wait for it
STOPPED = ("T", "t")  # stopped by a signal, or by a tracer


def connection_of(mountpoint: Path) -> str:
    """The FUSE connection's name under fusectl (the mount's device number as the kernel
    keeps it, major << 20 | minor); '' when `mountpoint` is no FUSE mount."""
    wanted = str(mountpoint.parent.resolve() / mountpoint.name)
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        left, _, right = line.partition(" - ")
        fields = left.split()
        fstype = right.split()[0] if right.split() else ""
        if system.unescape_mount_path(fields[4]) == wanted and fstype.startswith("fuse"):
            major, _, minor = fields[2].partition(":")
            return str((int(major) << 20) | int(minor))
    return ""


def control_mounts() -> list[Path]:
    """Where fusectl is mounted in this namespace."""
    found = []
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        left, _, right = line.partition(" - ")
        if right.split()[:1] == [CONTROL_FS]:
            found.append(Path(system.unescape_mount_path(left.split()[4])))
    return found


def mount_control(where: Path) -> None:
    """Mount fusectl at `where` (the caller recorded it in its ledger first)."""
    where.mkdir(parents=True, exist_ok=True)
    system.run(["mount", "-t", CONTROL_FS, "none", str(where)], timeout=30)


def requests_waiting(control: Path, connection: str) -> int:
    """Requests the kernel is waiting on the daemon to answer (0 when it cannot tell)."""
    try:
        return int((control / connection / "waiting").read_text().strip() or 0)
    except (OSError, ValueError):
        return 0


def abort(control: Path, connection: str) -> bool:
    """End the connection: every request waiting and every later one fails with ENOTCONN;
    False when there was none to end."""
    try:
        (control / connection / "abort").write_text("1")
    except OSError:
        return False
    return True


@dataclass(frozen=True)
class Daemon:
    """A FUSE daemon: its PID, start time (a later process with its PID is not it) and
    program."""

    pid: int
    start_time: int | None
    program: str

    def alive(self) -> bool:
        return (system.process_start_time(self.pid) == self.start_time
                and system.process_state(self.pid) not in ("", "Z", "X"))

    def state(self) -> str:
        return system.process_state(self.pid) if self.alive() else ""

    def progress(self) -> int:
        """A count that moves whenever the daemon does anything: its CPU ticks and the
        bytes and calls of its I/O (-1 when it is gone)."""
        try:
            stat = Path(f"/proc/{self.pid}/stat").read_text()
            io = Path(f"/proc/{self.pid}/io").read_text()
        except OSError:
            return -1
        fields = stat[stat.rindex(")") + 2:].split()
        counters = [int(line.split()[1]) for line in io.splitlines()
                    if line.split()[:1] and line.split()[0] in (
                        "rchar:", "wchar:", "syscr:", "syscw:")]
        return int(fields[11]) + int(fields[12]) + sum(counters)

    def end(self) -> None:
        """SIGKILL it, if it is still the process fslab started, and wait until it is."""
        if not self.alive():
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)
        deadline = time.monotonic() + EXIT_S
        while self.alive() and time.monotonic() < deadline:
            time.sleep(0.05)


def daemons_of(mountpoint: Path) -> list[Daemon]:
    """The live daemons serving `mountpoint` (their command line names it)."""
    return [Daemon(pid, started, _program(pid)) for pid, started in
            system.serving(mountpoint)]


def _program(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return "?"


def hung_now(daemon: Daemon, control: Path, connection: str) -> str:
    """Why the daemon is hung ('' when it is not): stopped, or requests waiting while it
    does nothing for PROBE_S. A release asks this once, before it unmounts."""
    if not daemon.alive():
        return ""
    if daemon.state() in STOPPED:
        return f"is stopped (state {daemon.state()})"
    if not requests_waiting(control, connection):
        return ""
    before = daemon.progress()
    time.sleep(PROBE_S)
    waiting = requests_waiting(control, connection)
    if waiting and daemon.progress() == before:
        return f"did nothing for {PROBE_S:.0f} s with {waiting} request(s) waiting"
    return ""


@dataclass
class Watch:
    """Watches one FUSE mount while fslab uses it, in a thread of its own (fslab's main
    thread may be the one blocked on the mount): when requests wait on a daemon that is
    stopped for STOPPED_S, or does nothing for STALL_S, the connection is aborted, so
    every process blocked on the mount gets an error and goes on, and `why` says what
    happened, in one line, for the run that was on it."""

    target: str
    mountpoint: Path
    connection: str
    daemon: Daemon
    control: Path
    why: str = ""
    at: float = 0.0  # when it hung (time.time())
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._watch, name="fslab-fuse-watch",
                                        daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def _watch(self) -> None:
        waited_stopped = waited_idle = 0.0
        last = self.daemon.progress()
        while not self._stop.wait(CHECK_S):
            if not self.daemon.alive():
                return  # a dead daemon's mount answers ENOTCONN by itself
            waiting = requests_waiting(self.control, self.connection)
            now = self.daemon.progress()
            stopped = self.daemon.state() in STOPPED
            waited_stopped = waited_stopped + CHECK_S if waiting and stopped else 0.0
            waited_idle = waited_idle + CHECK_S if waiting and now == last else 0.0
            last = now
            if waited_stopped >= STOPPED_S:
                self._hung(f"was stopped (state {self.daemon.state()}) for "
                           f"{waited_stopped:.0f} s with {waiting} request(s) waiting")
                return
            if waited_idle >= STALL_S:
                self._hung(f"did nothing for {waited_idle:.0f} s with {waiting} request(s) "
                           "waiting")
                return

    def hung_during(self, started: float) -> str:
        """Why the daemon hung, if it did while a run that began at `started` was on
        the mount ('' otherwise)."""
        return self.why if self.why and self.at >= started else ""

    def _hung(self, what: str) -> None:
        self.at = time.time()
        self.why = (f"the FUSE daemon {self.daemon.program} (pid {self.daemon.pid}) of "
                    f"{self.target} hung: it {what}; fslab aborted its connection and "
                    "ended it")
        abort(self.control, self.connection)


def unmount(mountpoint: Path, control: Path | None, daemons: list[Daemon],
            end_daemons: bool, retries: int, pause_s: float) -> None:
    """Unmount a FUSE mount whatever its daemon does: a hung daemon's connection is
    aborted first (else the busy mount never unmounts); a connection already gone is
    detached lazily; then wait for its daemons to exit and, with `end_daemons` (fslab
    started them: they are in its ledger), end those that do not."""
    connection = connection_of(mountpoint)
    if connection and control is not None and any(
            hung_now(d, control, connection) for d in daemons):
        abort(control, connection)
    for attempt in range(retries):
        if not system.is_mountpoint(mountpoint):
            break
        proc = system.run(["umount", str(mountpoint)], check=False, timeout=60)
        if proc.returncode == 0:
            break
        if "not connected" in proc.stderr.lower():
            # The daemon died or its connection was aborted: nothing can be flushed.
            system.run(["umount", "-l", str(mountpoint)], timeout=60)
            break
        if attempt == retries - 1:
            raise ToolError(["umount", str(mountpoint)], proc.returncode, proc.stderr)
        time.sleep(pause_s)
    deadline = time.monotonic() + EXIT_S
    while time.monotonic() < deadline and any(
            d.alive() and d.state() not in STOPPED for d in daemons):
        time.sleep(0.05)
    if end_daemons:
        for daemon in daemons:
            daemon.end()
