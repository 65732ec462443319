"""The lab directory: where fslab makes its images and mount points, and its ledger.

Every resource (image file, loop device, mount, directory) is written to the session's
ledger *before* it is acquired, and released in reverse order when the session closes —
on success, on error, on Ctrl-C and SIGTERM. A SIGKILLed session leaves its ledger
behind; `fslab cleanup` finds sessions whose process is gone and releases what they
recorded. fslab only ever touches what a ledger names, and only inside its lab.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fslab.core.errors import ToolError, UserError
from fslab.host import fuse, system
from fslab.host.children import in_background, settle
from fslab.host.releasers import RELEASERS
from fslab.host.signals import drop_unwound_frames

DEFAULT_LAB = Path(os.environ.get("FSLAB_LAB", "/var/lib/fslab"))
RELEASE_AGAIN_S = 2.0  # a release that failed is tried once more after this pause
FUSE_CONTROL = "fusectl"  # a session's own mount of the FUSE connections (host/fuse.py)


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
        self._issued: set[Path] = set()  # the paths new_path gave

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
        """A path in `folder` no earlier call of this session gave and nothing holds:
        `name`, then `x-2.img`, `x-3.img` ... for `x.img`. A target made again gets an
        image of its own, while its last one may still be on its way out (release_soon),
        and two targets whose names read alike as paths get one each."""
        stem, dot, suffix = name.rpartition(".")
        for count in itertools.count(1):
            unique = name if count == 1 else (f"{stem}-{count}.{suffix}" if dot
                                              else f"{name}-{count}")
            path = self.path_for(folder, unique)
            if path not in self._issued and not os.path.lexists(path):
                self._issued.add(path)
                return path
        raise AssertionError("unreachable")

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
            RELEASERS[resource.kind](self, resource)
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
        def release() -> None:
            with contextlib.suppress(OSError, ToolError):
                self.release(resource)

        in_background(release)

    def close(self, report: CleanupReport | None = None) -> CleanupReport:
        """Release every active resource in reverse order, then remove the session. While
        an exception unwinds, its frames' locals go first (a directory walk left in one
        keeps its file system busy); a release that fails is tried once more after a
        pause (a child that was ending may have held it)."""
        report = report or CleanupReport()
        drop_unwound_frames()
        for pause in (0.0, RELEASE_AGAIN_S):
            time.sleep(pause)
            settle()
            this = CleanupReport()
            for resource in reversed(self.active()):
                self.release(resource, this)
            report.released += this.released
            if not this.errors and not self.active():  # (a release may record another:
                break                                   # fusectl, mounted to abort with)
        report.errors += this.errors
        if not self.active():
            shutil.rmtree(self.dir, ignore_errors=True)
        return report

    def fuse_control(self) -> Path:
        """Where this session reads and aborts FUSE connections (host/fuse.py): fusectl
        where it is mounted already (the session's own mount, or the system's), else
        mounted in the session's directory, recorded first like any mount."""
        own = self.path_for(FUSE_CONTROL)
        mounted = fuse.control_mounts()
        for place in (own, fuse.SYSTEM_CONTROL):
            if place in mounted:
                return place
        self.record("mount", own)
        fuse.mount_control(own)
        return own

    def _entries(self) -> Iterator[dict[str, Any]]:
        if not self.ledger.exists():
            return
        for line in self.ledger.read_text().splitlines():
            try:
                yield json.loads(line)
            except ValueError:
                continue  # a line torn by SIGKILL mid-write: its resource was never acquired


def _write_json_atomic(path: Path, data: Any) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2))
    os.replace(tmp, path)
