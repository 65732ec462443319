"""The zfs daemon a pool runs under, and the ARC it gives every pool.

With no kernel module (as here), fslab starts `zfs-fuse --no-daemon` when no zfs daemon
runs, remembers its PID in the ledger, and stops only a daemon it started. zfs-fuse takes
the ARC's maximum as a daemon option (--max-arc-size MB; without it, /etc/zfs/zfsrc's
max-arc-size, 100 MiB in Debian's file): one daemon serves every pool of the machine, so
its pools share one ARC. A pool that asks for another ARC size gets a daemon of its own
size once no pool of the other size is left (the runner measures them apart:
run/places.py). A daemon fslab did not start is used as it is, and a pool that asks for
an ARC size is refused on it. On kernel OpenZFS the ARC's maximum is the module
parameter zfs_arc_max, machine-wide as well.
"""

from __future__ import annotations

import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from fslab.core.errors import ToolError, UserError
from fslab.host import system
from fslab.host.lab import Resource, Session

DAEMON = "zfs-fuse"
DAEMON_READY_TIMEOUT_S = 20.0
ZFSRC = Path("/etc/zfs/zfsrc")  # zfs-fuse's own configuration, read as it starts
KERNEL_ARC = Path("/sys/module/zfs/parameters/zfs_arc_max")
SHARED = "zfs_daemon"  # the session's own daemon (lab.Session.shared)
MiB = 1024**2


def kernel_zfs() -> bool:
    """True when the kernel OpenZFS module is loaded (then no FUSE daemon is needed)."""
    return Path("/sys/module/zfs").is_dir()


def running_daemons() -> list[int]:
    """PIDs of live zfs-fuse processes (zombies excluded)."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if (proc / "comm").read_text().strip() == DAEMON and system.process_state(
                    int(proc.name)) not in ("Z", "X", ""):
                found.append(int(proc.name))
        except OSError:
            continue
    return found


@dataclass(frozen=True)
class Daemon:
    """What serves a pool: the kernel module or a zfs-fuse process, and its ARC's maximum
    (bytes; 0 when nothing says) with where that figure comes from."""

    mode: str  # "kernel" | "fuse"
    pid: int | None = None
    started_by_fslab: bool = False
    arc_max: int = 0
    arc_source: str = ""

    def to_json(self) -> dict[str, object]:
        return {"mode": self.mode, "pid": self.pid, "started_by_fslab": self.started_by_fslab,
                "arc_max": self.arc_max or None, "arc_source": self.arc_source}


@dataclass(frozen=True)
class Ours:
    """The daemon this session started, and its ledger entry."""

    daemon: Daemon
    resource: Resource


def ensure_daemon(session: Session, arc_max: int = 0, target: str = "") -> Daemon:
    """A zfs daemon serving this session with an ARC of `arc_max` bytes (0: any); one
    fslab starts is recorded first and stopped when the session closes. An ARC size while
    a zfs-fuse fslab did not start serves the machine is a UserError naming `target`
    (its runs fail with that reason: a daemon that comes and goes is the machine's state
    when the run starts, not the campaign's)."""
    if kernel_zfs():
        return Daemon("kernel", arc_max=_kernel_arc(), arc_source="zfs_arc_max (module)")
    ours: Ours | None = session.shared.get(SHARED)
    if ours is not None:
        alive = system.process_state(ours.daemon.pid or 0) not in ("Z", "X", "")
        if alive and arc_max in (0, ours.daemon.arc_max):
            return ours.daemon
        if alive and (pools := _pools()):
            raise ToolError([DAEMON], 1, f"zfs-fuse serves {', '.join(pools)} with an ARC of "
                            f"{ours.daemon.arc_max // MiB} MiB; a pool with {arc_max // MiB} "
                            "MiB needs a daemon of its own")
        session.release(ours.resource)  # stopped (another ARC), or died: reaped
        session.shared.pop(SHARED)
    others = running_daemons()
    if others:
        if arc_max:
            raise UserError(f"target {target}: arc_max needs a zfs-fuse that fslab starts "
                            f"with --max-arc-size, but zfs-fuse PID {others[0]} (not "
                            "fslab's) serves every pool here with its own ARC: stop it, or "
                            "leave arc_max out")
        return Daemon("fuse", others[0], False, *arc_of(others[0]))
    return _start(session, arc_max).daemon


def _start(session: Session, arc_max: int) -> Ours:
    log = session.path_for("zfs-fuse.log")
    size = ["--max-arc-size", str(arc_max // MiB)] if arc_max else []
    with log.open("ab") as handle:
        proc = subprocess.Popen([system.require_tool(DAEMON), "--no-daemon", *size],
                                stdout=handle, stderr=handle, stdin=subprocess.DEVNULL,
                                start_new_session=True)  # Ctrl-C must not kill it before
    resource = session.record("process", str(proc.pid),  # its pools are destroyed
                              start_time=system.process_start_time(proc.pid), name=DAEMON)
    session.children[proc.pid] = proc
    # its own arguments, not /proc/PID/cmdline (empty until the exec has settled)
    arc = (arc_max, "--max-arc-size") if arc_max else configured_arc()
    ours = Ours(Daemon("fuse", proc.pid, True, *arc), resource)
    session.shared[SHARED] = ours
    deadline = time.monotonic() + DAEMON_READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise ToolError([DAEMON], proc.returncode or 1, log.read_text(errors="replace"))
        if system.run(["zpool", "list", "-H"], check=False).returncode == 0:
            return ours
        time.sleep(0.1)
    raise ToolError([DAEMON], 1, f"no answer within {DAEMON_READY_TIMEOUT_S:.0f} s")


def _pools() -> list[str]:
    out = system.run(["zpool", "list", "-H", "-o", "name"], check=False).stdout
    return [line.strip() for line in out.splitlines() if line.strip()]


def arc_of(pid: int) -> tuple[int, str]:
    """(the ARC's maximum in bytes, where that comes from) of a running zfs-fuse: its
    command line's --max-arc-size (-m), else /etc/zfs/zfsrc's max-arc-size, else 0."""
    try:
        args = Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
    except OSError:
        args = []
    for index, arg in enumerate(args):
        value = (args[index + 1] if arg in ("-m", "--max-arc-size") and index + 1 < len(args)
                 else arg.partition("=")[2] if arg.startswith("--max-arc-size=") else "")
        if value.isdigit():
            return int(value) * MiB, "--max-arc-size"
    return configured_arc()


def configured_arc() -> tuple[int, str]:
    """The ARC's maximum of a zfs-fuse started without --max-arc-size: /etc/zfs/zfsrc's
    max-arc-size, else 0 (zfs-fuse's built-in default)."""
    configured = zfsrc_arc()
    if configured:
        return configured, str(ZFSRC)
    return 0, "zfs-fuse's built-in default"


def zfsrc_arc() -> int:
    """max-arc-size in /etc/zfs/zfsrc, in bytes (0 where the file does not set it)."""
    try:
        lines = ZFSRC.read_text().splitlines()
    except OSError:
        return 0
    for line in lines:
        key, _, value = line.split("#", 1)[0].partition("=")
        if key.strip() == "max-arc-size" and value.strip().isdigit():
            return int(value.strip()) * MiB
    return 0


def _kernel_arc() -> int:
    try:
        return int(KERNEL_ARC.read_text().strip())
    except (OSError, ValueError):
        return 0


def set_kernel_arc(arc_max: int) -> int:
    """Set kernel OpenZFS's zfs_arc_max (bytes); the value it had (restore it after)."""
    before = _kernel_arc()
    KERNEL_ARC.write_text(f"{arc_max}\n")
    return before
