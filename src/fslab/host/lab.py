"""The lab directory: where fslab makes its images and mount points, and its ledger.

Every resource (image file, loop device, mount, directory) is written to the session's
ledger *before* it is acquired, and released in reverse order when the session closes —
on success, on error, on Ctrl-C and SIGTERM. A SIGKILLed session leaves its ledger
behind; `fslab cleanup` finds sessions whose process is gone and releases what they
recorded. fslab only ever touches what a ledger names, and only inside its lab.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fslab.core.errors import ToolError, UserError
from fslab.host import system
from fslab.host.cgroups import end_members, release_cgroup
from fslab.host.signals import drop_unwound_frames

DEFAULT_LAB = Path(os.environ.get("FSLAB_LAB", "/var/lib/fslab"))
WORKDIR_PREFIX = ".fslab-work-"  # the only name fslab removes inside a user's directory
UMOUNT_RETRIES = 10  # a just-exited fio may still hold files for a moment
UMOUNT_RETRY_DELAY_S = 0.3
RELEASE_AGAIN_S = 2.0  # a release that failed is tried once more after this pause
FUSE_EXIT_S = 30.0  # an unmounted FUSE daemon flushes its device and exits: wait for it
DAEMON_STOP_TIMEOUT_S = 10.0
LOOP_DETACH_WAIT_S = 10.0  # udev may still hold a fresh device open to probe it


@dataclass
class Resource:
    """One thing a session acquired: what it is and how to find it again."""

    seq: int
    kind: str  # "file", "dir", "loop", "mount", "process", "pgroup", ...
    path: str
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class CleanupReport:
    """What `fslab cleanup` did, and what it left alone and why."""

    released: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


class Lab:
    """A lab directory holding one subdirectory per fslab session."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = Path(root or DEFAULT_LAB).absolute()

    @property
    def sessions_dir(self) -> Path:
        return self.root / "sessions"

    def open_session(self) -> Session:
        """Create a new session owned by this process."""
        try:
            self.sessions_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UserError(f"cannot create lab directory {self.root}: {exc.strerror}") from exc
        session_id = f"{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}"
        session = Session(self, self.sessions_dir / session_id)
        session.dir.mkdir()
        owner = {
            "pid": os.getpid(),
            "start_time": system.process_start_time(os.getpid()),
            "created": time.time(),
        }
        _write_json_atomic(session.dir / "session.json", owner)
        return session

    def sessions(self) -> Iterator[Session]:
        """Yield every session directory present in the lab."""
        if not self.sessions_dir.is_dir():
            return
        for path in sorted(self.sessions_dir.iterdir()):
            if path.is_dir():
                yield Session(self, path)

    def cleanup(self) -> CleanupReport:
        """Release everything recorded by sessions whose fslab process no longer runs."""
        report = CleanupReport()
        for session in self.sessions():
            if session.owner_alive():
                report.skipped.append(
                    f"session {session.dir.name} belongs to running fslab pid "
                    f"{session.owner().get('pid')}"
                )
                continue
            session.close(report)
        return report


class Session:
    """One fslab process's resources, recorded in an append-only ledger."""

    def __init__(self, lab: Lab, path: Path) -> None:
        self.lab = lab
        self.dir = path
        self.ledger = path / "ledger.jsonl"
        self.shared: dict[str, Any] = {}  # per-process state plug-ins share (a zfs daemon)
        self.children: dict[int, Any] = {}  # Popen objects of daemons this process started
        self._issued: dict[str, int] = {}  # file names new_path gave, and how often

    def owner(self) -> dict[str, Any]:
        try:
            return json.loads((self.dir / "session.json").read_text())
        except (OSError, ValueError):
            return {}

    def owner_alive(self) -> bool:
        """True when the process that opened this session still runs (same PID and start)."""
        owner = self.owner()
        pid = owner.get("pid")
        if not isinstance(pid, int):
            return False
        started = owner.get("start_time")
        return started is not None and system.process_start_time(pid) == started

    def path_for(self, *parts: str) -> Path:
        """Return a path inside this session's directory."""
        return self.dir.joinpath(*parts)

    def new_path(self, folder: str, name: str) -> Path:
        """A path in `folder` no earlier call of this session gave: `name`, then `x-2.img`,
        `x-3.img` ... for `x.img`. A target made again gets an image of its own, while
        its last one may still be on its way out (release_soon)."""
        count = self._issued[name] = self._issued.get(name, 0) + 1
        stem, dot, suffix = name.rpartition(".")
        unique = name if count == 1 else (f"{stem}-{count}.{suffix}" if dot
                                          else f"{name}-{count}")
        return self.path_for(folder, unique)

    def record(self, kind: str, path: Path | str, **extra: Any) -> Resource:
        """Write a resource to the ledger before the caller acquires it.

        Flushed to the kernel, not fsynced: the ledger must survive the process being
        killed, which the page cache guarantees; a machine crash takes every mount and
        loop device with it, so there is nothing left to clean up then.
        """
        seq = sum(1 for _ in self._entries())
        resource = Resource(seq, kind, str(path), extra)
        line = json.dumps({"seq": seq, "kind": kind, "path": str(path), "extra": extra})
        with self.ledger.open("a") as handle:
            handle.write(line + "\n")
        return resource

    def active(self) -> list[Resource]:
        """Resources recorded and not yet released, oldest first."""
        recorded: dict[int, Resource] = {}
        for entry in self._entries():
            if "released" in entry:
                recorded.pop(entry["released"], None)
            else:
                recorded[entry["seq"]] = Resource(
                    entry["seq"], entry["kind"], entry["path"], entry.get("extra", {})
                )
        return list(recorded.values())

    def release(self, resource: Resource, report: CleanupReport | None = None) -> None:
        """Release one resource and note it in the ledger; errors go to `report` or raise."""
        try:
            _RELEASERS[resource.kind](self, resource)
        except (OSError, ToolError) as exc:
            message = f"could not release {resource.kind} {resource.path}: {exc}"
            if report is None:
                raise ToolError(["release"], 1, message) from exc
            report.errors.append(message)
            return
        with self.ledger.open("a") as handle:
            handle.write(json.dumps({"released": resource.seq}) + "\n")
        if report is not None:
            report.released.append(f"{resource.kind} {resource.path}")

    def forget(self, resource: Resource) -> None:
        """Note in the ledger that the caller released `resource` itself."""
        with self.ledger.open("a") as handle:
            handle.write(json.dumps({"released": resource.seq}) + "\n")

    def release_soon(self, resource: Resource) -> None:
        """Release `resource` in the background (children.in_background: done before
        anything measures next); one that fails stays recorded, and close tries again."""
        from fslab.host.children import in_background

        def release() -> None:
            with contextlib.suppress(OSError, ToolError):
                self.release(resource)

        in_background(release)

    def close(self, report: CleanupReport | None = None) -> CleanupReport:
        """Release every active resource in reverse order, then remove the session. While
        an exception unwinds, its frames' locals go first (a directory walk left in one
        keeps its file system busy); a release that fails is tried once more after a
        pause (a child that was ending may have held it)."""
        from fslab.host.children import settle

        report = report or CleanupReport()
        drop_unwound_frames()
        for pause in (0.0, RELEASE_AGAIN_S):
            time.sleep(pause)
            settle()
            this = CleanupReport()
            for resource in reversed(self.active()):
                self.release(resource, this)
            report.released += this.released
            if not this.errors:
                break
        report.errors += this.errors
        if not self.active():
            shutil.rmtree(self.dir, ignore_errors=True)
        return report

    def _entries(self) -> Iterator[dict[str, Any]]:
        if not self.ledger.exists():
            return
        for line in self.ledger.read_text().splitlines():
            try:
                yield json.loads(line)
            except ValueError:
                continue  # a line torn by SIGKILL mid-write: its resource was never acquired


def _inside_lab(session: Session, path: Path) -> bool:
    return path.resolve().is_relative_to(session.lab.root.resolve())


def _release_file(session: Session, resource: Resource) -> None:
    path = Path(resource.path)
    if not _inside_lab(session, path):
        raise OSError(f"refusing to delete {path}: outside the lab directory")
    path.unlink(missing_ok=True)


def _release_dir(session: Session, resource: Resource) -> None:
    path = Path(resource.path)
    if not _inside_lab(session, path):
        raise OSError(f"refusing to remove {path}: outside the lab directory")
    if path.is_dir() and not system.is_mountpoint(path):
        shutil.rmtree(path, ignore_errors=True)


def _release_workdir(session: Session, resource: Resource) -> None:
    """Remove fslab's own work directory inside a user's `dir:` target, nothing else."""
    path = Path(resource.path)
    if not path.name.startswith(WORKDIR_PREFIX):
        raise OSError(f"refusing to remove {path}: not an fslab work directory")
    shutil.rmtree(path, ignore_errors=True)


def _release_mount(session: Session, resource: Resource) -> None:
    path = Path(resource.path)
    daemons = system.serving(path) if resource.extra.get("fuse") else []
    for attempt in range(UMOUNT_RETRIES):
        if not system.is_mountpoint(path):
            return
        proc = system.run(["umount", str(path)], check=False)
        if proc.returncode == 0:
            _wait_for_exit(daemons)
            return
        if resource.extra.get("fuse") and "not connected" in proc.stderr.lower():
            # The FUSE daemon died: nothing can be flushed any more, detach the corpse.
            system.run(["umount", "-l", str(path)])
            return
        if attempt == UMOUNT_RETRIES - 1:
            raise ToolError(["umount", str(path)], proc.returncode, proc.stderr)
        time.sleep(UMOUNT_RETRY_DELAY_S)


def _wait_for_exit(daemons: list[tuple[int, int | None]]) -> None:
    """Wait (never signal: the mount started them, not fslab) until the daemons of an
    unmounted FUSE file system have written their device and gone, so the loop device and
    image under them are free when the next step releases them."""
    deadline = time.monotonic() + FUSE_EXIT_S
    while time.monotonic() < deadline and any(
            system.process_start_time(pid) == started
            and system.process_state(pid) not in ("", "Z", "X") for pid, started in daemons):
        time.sleep(0.05)


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


_RELEASERS = {
    "file": _release_file,
    "dir": _release_dir,
    "workdir": _release_workdir,
    "mount": _release_mount,
    "loop": _release_loop,
    "process": _release_process,
    "pgroup": _release_pgroup,
    "children": _release_children,
    "zpool": _release_zpool,
    "cgroup": _release_cgroup,
    "mdarray": _release_mdarray,
}


def _write_json_atomic(path: Path, data: Any) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2))
    os.replace(tmp, path)
