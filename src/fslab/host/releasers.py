"""How each kind of resource in a lab session's ledger is released (host/lab.py calls
these in reverse order of acquisition). Each releaser touches only what its entry names,
only inside the lab, and only a process whose PID and start time the entry recorded."""

from __future__ import annotations

import os
import shutil
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from fslab.core.errors import ToolError
from fslab.host import freeing, fuse, system
from fslab.host.cgroups import end_members, release_cgroup


class Resource(Protocol):
    """A ledger's entry, as a releaser reads it (host/lab.Resource)."""

    kind: str
    path: str
    extra: dict[str, Any]


class _Lab(Protocol):
    @property
    def root(self) -> Path: ...


class Session(Protocol):
    """What a releaser needs of the session whose ledger names the resource
    (host/lab.Session): its lab, the daemons it started, its view of FUSE connections."""

    @property
    def lab(self) -> _Lab: ...

    @property
    def children(self) -> dict[int, Any]: ...

    def fuse_control(self) -> Path: ...

WORKDIR_PREFIX = ".fslab-work-"  # the only name fslab removes inside a user's directory
UMOUNT_RETRIES = 10  # a just-exited fio may still hold files for a moment
UMOUNT_RETRY_DELAY_S = 0.3
DAEMON_STOP_TIMEOUT_S = 10.0
LOOP_DETACH_WAIT_S = 10.0  # udev may still hold a fresh device open to probe it


def _inside_lab(session: Session, path: Path) -> bool:
    return path.resolve().is_relative_to(session.lab.root.resolve())


def _release_file(session: Session, resource: Resource) -> None:
    path = Path(resource.path)
    if not _inside_lab(session, path):
        raise OSError(f"refusing to delete {path}: outside the lab directory")
    freeing.remove(path)


def _release_dir(session: Session, resource: Resource) -> None:
    """Remove a directory fslab made in its lab; one still mounted on is left (it is
    never looked at: a hung FUSE mount would not answer)."""
    path = Path(resource.path)
    if system.is_mountpoint(path):
        return
    if not _inside_lab(session, path):
        raise OSError(f"refusing to remove {path}: outside the lab directory")
    if path.is_dir():
        shutil.rmtree(path, ignore_errors=True)


def _release_workdir(session: Session, resource: Resource) -> None:
    """Remove fslab's own work directory inside a user's `dir:` target, nothing else."""
    path = Path(resource.path)
    if not path.name.startswith(WORKDIR_PREFIX):
        raise OSError(f"refusing to remove {path}: not an fslab work directory")
    shutil.rmtree(path, ignore_errors=True)


def _release_mount(session: Session, resource: Resource) -> None:
    """Unmount; a FUSE mount through host/fuse.py (its daemon waited for, a hung one's
    connection aborted first), its daemons left to exit (the "fuse" entry, recorded
    after the mount, ends the one fslab started)."""
    path = Path(resource.path)
    if resource.extra.get("fuse") and system.is_mountpoint(path):
        fuse.unmount(path, session.fuse_control(), fuse.daemons_of(path),
                     end_daemons=False, retries=UMOUNT_RETRIES, pause_s=UMOUNT_RETRY_DELAY_S)
        return
    for attempt in range(UMOUNT_RETRIES):
        if not system.is_mountpoint(path):
            return
        proc = system.run(["umount", str(path)], check=False, timeout=120)
        if proc.returncode == 0:
            return
        if attempt == UMOUNT_RETRIES - 1:
            raise ToolError(["umount", str(path)], proc.returncode, proc.stderr)
        time.sleep(UMOUNT_RETRY_DELAY_S)


def _release_fuse(session: Session, resource: Resource) -> None:
    """End a FUSE file system fslab mounted, whatever its daemon does: unmounted (a hung
    daemon's connection aborted first), then its daemon — started by fslab's mount, the
    PID and start time in the ledger — waited for and, if it does not go, ended."""
    daemon = fuse.Daemon(int(resource.path), resource.extra.get("start_time"),
                         str(resource.extra.get("program", "?")))
    mountpoint = Path(str(resource.extra.get("mountpoint", "")))
    mounted = mountpoint.name != "" and system.is_mountpoint(mountpoint)
    if not mounted and not daemon.alive():
        return
    fuse.unmount(mountpoint, session.fuse_control() if mounted else None, [daemon],
                 end_daemons=True, retries=UMOUNT_RETRIES, pause_s=UMOUNT_RETRY_DELAY_S)


def _release_zpool(session: Session, resource: Resource) -> None:
    """Destroy a pool fslab created; with its daemon gone, the pool went with it."""
    pool = resource.path
    daemon = resource.extra.get("daemon_pid")
    mountpoint = Path(resource.extra.get("mountpoint", ""))
    if daemon is not None and system.process_state(int(daemon)) in ("", "Z", "X"):
        if mountpoint.name and system.is_mountpoint(mountpoint):
            system.run(["umount", "-l", str(mountpoint)], check=False)
        return
    for attempt in range(UMOUNT_RETRIES):
        listed = system.run(["zpool", "list", "-H"], check=False).stdout.split("\n")
        if not any(line.split("\t")[0] == pool for line in listed):
            return
        proc = system.run(["zpool", "destroy", "-f", pool], check=False, timeout=120)
        if proc.returncode == 0:
            return
        if attempt == UMOUNT_RETRIES - 1:  # "pool is busy" while FUSE releases files
            raise ToolError(["zpool", "destroy", pool], proc.returncode, proc.stderr)
        time.sleep(UMOUNT_RETRY_DELAY_S)


def _release_mdarray(session: Session, resource: Resource) -> None:
    """Stop an md array fslab assembled from its own loop devices."""
    if Path(resource.path).exists():
        system.run(["mdadm", "--stop", resource.path], timeout=60)


def _release_cgroup(session: Session, resource: Resource) -> None:
    release_cgroup(Path(resource.path))


def _release_loop(session: Session, resource: Resource) -> None:
    """Detach every loop device backed by the recorded image, and only those."""
    backing = resource.path
    if not Path(backing).exists():
        return
    proc = system.run(["losetup", "-n", "-O", "NAME", "-j", backing], check=False)
    for device in proc.stdout.split():
        system.run(["losetup", "-d", device])
        _wait_detached(device)


def _wait_detached(device: str) -> None:
    """`losetup -d` of a device someone still holds open (udev probing a just-made file
    system) only marks it to go when closed: wait for that, briefly, so that the image is
    not removed from under a device that still exists."""
    backing = Path("/sys/block") / Path(device).name / "loop" / "backing_file"
    deadline = time.monotonic() + LOOP_DETACH_WAIT_S
    while backing.exists() and time.monotonic() < deadline:
        time.sleep(0.05)


def _release_process(session: Session, resource: Resource) -> None:
    """Stop a daemon this session started, only if it is still that same process."""
    pid = int(resource.path)
    child = session.children.pop(pid, None)
    if system.process_start_time(pid) != resource.extra.get("start_time"):
        return  # gone, or the PID now belongs to someone else: leave it alone
    if system.process_state(pid) not in ("Z", "X"):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + DAEMON_STOP_TIMEOUT_S
    while time.monotonic() < deadline:
        if child is not None and child.poll() is not None:
            return  # exited and reaped
        if child is None and system.process_state(pid) in ("", "Z", "X"):
            return  # not our child (cleanup from another process): its parent reaps it
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)  # ours, and deaf to SIGTERM
    if child is not None:
        child.wait(timeout=10)


def _release_pgroup(session: Session, resource: Resource) -> None:
    """End what is left of a process group fslab started (fio and its jobs), only members
    started since its recorded leader: a SIGKILLed fslab leaves them running."""
    started, until = resource.extra.get("start_time"), resource.extra.get("until")
    if isinstance(started, int) and isinstance(until, int) and started:
        system.end_stragglers(int(resource.path), started, until)


def _release_children(session: Session, resource: Resource) -> None:
    """End every process left in the cgroup fslab started a child in (fio and its jobs,
    after a SIGKILLed fslab), then remove the cgroup."""
    end_members(Path(resource.path))
    release_cgroup(Path(resource.path))


RELEASERS: dict[str, Callable[[Session, Resource], None]] = {
    "file": _release_file,
    "dir": _release_dir,
    "workdir": _release_workdir,
    "mount": _release_mount,
    "fuse": _release_fuse,
    "loop": _release_loop,
    "process": _release_process,
    "pgroup": _release_pgroup,
    "children": _release_children,
    "zpool": _release_zpool,
    "cgroup": _release_cgroup,
    "mdarray": _release_mdarray,
}
