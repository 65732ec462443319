"""zfs and zfs-mirror: a pool per target on image files, via kernel OpenZFS or zfs-fuse.

With no kernel module (as here), fslab starts `zfs-fuse --no-daemon` when no zfs daemon
runs, remembers its PID in the ledger, and stops only a daemon it started. Pools are
created with cachefile=none, so nothing outlives the pool's owner: a daemon killed from
outside takes its pools with it, and the next run starts a new daemon. Results carry the
implementation: zfs-fuse (FUSE, pool version 23) is not the kernel OpenZFS module.
"""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path
from typing import Any, ClassVar

from fslab.core import stopwatch
from fslab.core.errors import ToolError, UserError
from fslab.core.run_parts import TargetDescription
from fslab.host import system
from fslab.host.lab import Session
from fslab.targets.base import NEEDS_ROOT, BaseTarget, Mounted
from fslab.targets.common import make_image, make_mountpoint, package_version

DAEMON = "zfs-fuse"
DAEMON_READY_TIMEOUT_S = 20.0
DATASET_PROPERTIES = frozenset({
    "recordsize", "compression", "primarycache", "secondarycache", "atime", "sync",
    "logbias", "checksum", "dedup", "copies", "xattr",
})
MiB = 1024**2
MIN_SIZE = 64 * MiB  # zpool refuses vdevs below 64 MiB


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


def ensure_daemon(session: Session) -> dict[str, Any]:
    """Make sure a zfs daemon serves this session; start (and record) one if needed."""
    if kernel_zfs():
        return {"mode": "kernel"}
    ours = session.shared.get("zfs_daemon")
    if ours and system.process_state(ours["pid"]) not in ("Z", "X", ""):
        return ours
    if ours:  # ours died (killed from outside): reap it before starting another
        session.release(ours["resource"])
    foreign = running_daemons()
    if foreign:
        return {"mode": "fuse", "pid": foreign[0], "started_by_fslab": False}
    log = session.path_for("zfs-fuse.log")
    with log.open("ab") as handle:
        proc = subprocess.Popen([system.require_tool(DAEMON), "--no-daemon"], stdout=handle,
                                stderr=handle, stdin=subprocess.DEVNULL,
                                start_new_session=True)  # Ctrl-C must not kill it before
    resource = session.record("process", str(proc.pid),  # its pools are destroyed
                              start_time=system.process_start_time(proc.pid), name=DAEMON)
    session.children[proc.pid] = proc
    info = {"mode": "fuse", "pid": proc.pid, "started_by_fslab": True, "resource": resource}
    session.shared["zfs_daemon"] = info
    deadline = time.monotonic() + DAEMON_READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise ToolError([DAEMON], proc.returncode or 1, log.read_text(errors="replace"))
        if system.run(["zpool", "list", "-H"], check=False).returncode == 0:
            return info
        time.sleep(0.1)
    raise ToolError([DAEMON], 1, f"no answer within {DAEMON_READY_TIMEOUT_S:.0f} s")


class ZfsTarget(BaseTarget):
    """One pool (single image, or a two-way mirror) with dataset properties from the campaign."""

    kind: ClassVar[str] = "zfs"
    capabilities: ClassVar[frozenset[str]] = frozenset({NEEDS_ROOT})
    tools: ClassVar[tuple[str, ...]] = ("zpool", "zfs")
    allowed_options: ClassVar[frozenset[str]] = DATASET_PROPERTIES | {"ashift"}

    def __init__(self, spec: Any, **kwargs: Any) -> None:
        super().__init__(spec, **kwargs)
        self.mirror = spec.fs == "zfs-mirror"
        self.ashift = int(spec.options.get("ashift", 12))
        self.properties = {k: str(v) for k, v in spec.options.items() if k != "ashift"}

    def kernel_support(self) -> str:
        if kernel_zfs():
            return ""
        if system.which(DAEMON) is None:
            return "no zfs kernel module and zfs-fuse not installed: apt-get install zfs-fuse"
        if not Path("/dev/fuse").exists():
            return "zfs-fuse needs FUSE (/dev/fuse missing)"
        return ""

    def check(self) -> None:
        super().check()
        if not 9 <= self.ashift <= 16:
            raise UserError(f"target {self.spec.name}: ashift must be 9..16")
        if self.spec.size < MIN_SIZE:
            raise UserError(f"target {self.spec.name}: zfs needs images of at least 64 MiB")

    def implementation(self, pool_version: str = "") -> str:
        version = f", pool version {pool_version}" if pool_version else ""
        if kernel_zfs():
            module = Path("/sys/module/zfs/version")
            release = module.read_text().strip() if module.exists() else "unknown"
            return f"OpenZFS {release} (kernel module){version}"
        return f"zfs-fuse {package_version('zfs-fuse')} (FUSE, not kernel OpenZFS){version}"

    def describe(self) -> TargetDescription:
        return TargetDescription.from_json({
            "target": self.spec.name,
            "fs": "zfs",
            "layout": "mirror of two images" if self.mirror else "single image",
            "fs_impl": self.implementation(),
            "image_size": self.spec.size,
            "ashift": self.ashift,
            "properties": self.properties or "defaults",
        })

    def provision(self, session: Session) -> Mounted:
        mounted = Mounted(path=None, description=self.describe())
        try:
            daemon = ensure_daemon(session)
            images = [make_image(session, mounted, f"{self.spec.name}-{i}", self.spec.size)
                      for i in range(2 if self.mirror else 1)]
            mounted.path = make_mountpoint(session, mounted, self.spec.name)
            pool = re.sub(r"[^A-Za-z0-9_.-]", "_", f"fslab_{session.dir.name}_{self.spec.name}")
            mounted.resources.append(session.record(
                "zpool", pool, daemon_pid=daemon.get("pid"), mountpoint=str(mounted.path)))
            vdevs = ["mirror", *map(str, images)] if self.mirror else [str(images[0])]
            with stopwatch.step(stopwatch.MKFS):  # makes the pool and mounts it
                system.run(["zpool", "create", "-f", "-o", f"ashift={self.ashift}", "-o",
                            "cachefile=none", "-m", str(mounted.path), pool, *vdevs],
                           timeout=120)
            for key, value in self.properties.items():
                system.run(["zfs", "set", f"{key}={value}", pool])
        except BaseException:
            self.teardown(session, mounted)
            raise
        mounted.description = mounted.description.with_(
            pool=pool,
            fs_impl=self.implementation(_pool_version(pool)),
            daemon={k: v for k, v in daemon.items() if k != "resource"},
            properties=_properties(pool, self.properties),
        )
        return mounted


def _pool_version(pool: str) -> str:
    """'23' (zfs-fuse), '5000' (feature flags), or '' when it cannot be read."""
    fields = system.run(["zpool", "get", "version", pool], check=False).stdout.split()
    # Header NAME PROPERTY VALUE SOURCE, then the pool's row.
    value = fields[6] if len(fields) >= 8 else ""
    return "5000" if value == "-" else value


def _properties(pool: str, wanted: dict[str, str]) -> dict[str, str]:
    """The dataset properties as zfs reports them after setting."""
    names = ",".join(sorted({"recordsize", "compression", "primarycache", *wanted}))
    out = system.run(["zfs", "get", "-H", "-o", "property,value", names, pool],
                     check=False).stdout
    return dict(line.split("\t", 1) for line in out.splitlines() if "\t" in line)
