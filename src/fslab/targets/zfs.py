"""zfs and zfs-mirror: a pool per target on image files, via kernel OpenZFS or zfs-fuse.

The pool is built as its target asks (targets/zfs_pool.py): a layout over N images
(single, mirror, raidz1), a separate log device, a cache (L2ARC) device on a loop device,
and the ARC's maximum, which the daemon gives every pool it serves
(targets/zfs_daemon.py). Pools are created with cachefile=none, so nothing outlives the
pool's owner: a daemon killed from outside takes its pools with it, and the next run
starts a new daemon. Results carry the implementation: zfs-fuse (FUSE, pool version 23)
is not the kernel OpenZFS module.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, ClassVar

from fslab.core import stopwatch
from fslab.core.errors import UserError
from fslab.core.run_parts import TargetDescription
from fslab.host import system
from fslab.host.lab import Session
from fslab.targets.base import NEEDS_ROOT, BaseTarget, Mounted, release_all
from fslab.targets.common import attach_loop, make_image, make_mountpoint, package_version
from fslab.targets.zfs_daemon import (
    DAEMON,
    Daemon,
    ensure_daemon,
    kernel_zfs,
    set_kernel_arc,
)
from fslab.targets.zfs_pool import MIN_VDEV, POOL_FIELDS, PoolBuild, pool_build

DATASET_PROPERTIES = frozenset({
    "recordsize", "compression", "primarycache", "secondarycache", "atime", "sync",
    "logbias", "checksum", "dedup", "copies", "xattr",
})
ARC = "zfs ARC"  # what pools under one daemon share (BaseTarget.shares)


class ZfsTarget(BaseTarget):
    """One pool (its layout, log and cache devices, and ARC as the campaign asks) with
    dataset properties from the campaign."""

    kind: ClassVar[str] = "zfs"
    capabilities: ClassVar[frozenset[str]] = frozenset({NEEDS_ROOT})
    tools: ClassVar[tuple[str, ...]] = ("zpool", "zfs")
    allowed_options: ClassVar[frozenset[str]] = DATASET_PROPERTIES | {"ashift", *POOL_FIELDS}

    def __init__(self, spec: Any, **kwargs: Any) -> None:
        super().__init__(spec, **kwargs)
        self.ashift = int(spec.options.get("ashift", 12))
        self.properties = {k: str(v) for k, v in spec.options.items()
                           if k in DATASET_PROPERTIES}

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
        if self.spec.size < MIN_VDEV:
            raise UserError(f"target {self.spec.name}: zfs needs images of at least 64 MiB")
        build = self.build()
        if build.cache_size and system.which("losetup") is None:
            raise UserError(f"target {self.spec.name}: a cache device needs losetup "
                            "(zfs takes a cache vdev only on a block device)")

    def build(self) -> PoolBuild:
        """The pool this target asks for, checked (one line naming what cannot be built)."""
        return pool_build(self.spec.options, self.spec.fs, self.spec.name)

    def shares(self) -> tuple[str, str]:
        """Pools under one daemon share its ARC: a target that sets arc_max cannot be
        mounted beside one that sets another (the runner measures them apart)."""
        build = self.build()
        return (ARC, f"{build.arc_mib} MiB") if build.arc_max else ("", "")

    def implementation(self, pool_version: str = "") -> str:
        version = f", pool version {pool_version}" if pool_version else ""
        if kernel_zfs():
            module = Path("/sys/module/zfs/version")
            release = module.read_text().strip() if module.exists() else "unknown"
            return f"OpenZFS {release} (kernel module){version}"
        return f"zfs-fuse {package_version('zfs-fuse')} (FUSE, not kernel OpenZFS){version}"

    def describe(self) -> TargetDescription:
        build = self.build()
        return TargetDescription.from_json({
            "target": self.spec.name,
            "fs": "zfs",
            "fs_impl": self.implementation(),
            "image_size": self.spec.size,
            "ashift": self.ashift,
            "pool_layout": build.shown(),
            **build.describe(),
            "arc_max": build.arc_max or None,
            "properties": self.properties or "defaults",
        })

    def provision(self, session: Session) -> Mounted:
        build = self.build()
        mounted = Mounted(path=None, description=self.describe())
        before = 0
        try:
            daemon = ensure_daemon(session, build.arc_max, self.spec.name)
            if daemon.mode == "kernel" and build.arc_max:
                before = set_kernel_arc(build.arc_max)
                mounted.description = mounted.description.with_(kernel_arc_before=before)
            images = [str(make_image(session, mounted, f"{self.spec.name}-{i}", self.spec.size))
                      for i in range(build.devices)]
            log = str(make_image(session, mounted, f"{self.spec.name}-log", build.log_size)) \
                if build.log_size else ""
            cache = attach_loop(session, mounted, make_image(
                session, mounted, f"{self.spec.name}-cache", build.cache_size),
                direct_io=True) if build.cache_size else ""
            mounted.path = make_mountpoint(session, mounted, self.spec.name)
            pool = re.sub(r"[^A-Za-z0-9_.-]", "_", f"fslab_{session.dir.name}_{self.spec.name}")
            mounted.resources.append(session.record(
                "zpool", pool, daemon_pid=daemon.pid, mountpoint=str(mounted.path)))
            with stopwatch.step(stopwatch.MKFS):  # makes the pool and mounts it
                system.run(["zpool", "create", "-f", "-o", f"ashift={self.ashift}", "-o",
                            "cachefile=none", "-m", str(mounted.path), pool,
                            *build.vdevs(images, log, cache)], timeout=120)
            for key, value in self.properties.items():
                system.run(["zfs", "set", f"{key}={value}", pool])
        except BaseException:
            self.teardown(session, mounted)
            raise
        mounted.description = mounted.description.with_(
            pool=pool,
            fs_impl=self.implementation(_pool_version(pool)),
            daemon=daemon.to_json(),
            arc_max=daemon.arc_max or None,
            arc_source=_arc_source(daemon, build.arc_max),
            vdevs=_vdev_names(pool),
            properties=_properties(pool, self.properties),
        )
        return mounted

    def teardown(self, session: Session, mounted: Mounted) -> None:
        """Release the pool and its images; kernel OpenZFS gets its zfs_arc_max back."""
        release_all(session, mounted)
        before = mounted.description.details.get("kernel_arc_before")
        if isinstance(before, int) and kernel_zfs():
            set_kernel_arc(before)


def _arc_source(daemon: Daemon, asked: int) -> str:
    """Where the pool's ARC maximum comes from, in words."""
    if daemon.mode == "kernel":
        return "zfs_arc_max module parameter" + (" (set by fslab)" if asked else "")
    if daemon.arc_source == "--max-arc-size":
        return ("zfs-fuse --max-arc-size (fslab started it so)" if daemon.started_by_fslab
                else "zfs-fuse --max-arc-size (a daemon fslab did not start)")
    return daemon.arc_source


def _pool_version(pool: str) -> str:
    """'23' (zfs-fuse), '5000' (feature flags), or '' when it cannot be read."""
    fields = system.run(["zpool", "get", "version", pool], check=False).stdout.split()
    # Header NAME PROPERTY VALUE SOURCE, then the pool's row.
    value = fields[6] if len(fields) >= 8 else ""
    return "5000" if value == "-" else value


def _vdev_names(pool: str) -> str:
    """The pool's vdevs as zpool status lists them, one line ('raidz1-0: 3 devices; logs:
    1; cache: 1'): what was made, read back."""
    out = system.run(["zpool", "status", pool], check=False).stdout
    groups: dict[str, int] = {}
    current = ""
    for line in out.splitlines():
        depth = len(line) - len(line.lstrip("\t ")) if line.strip() else 0
        name = line.split()[0] if line.split() else ""
        if name in (pool, "NAME", "errors:", "config:", "pool:", "state:", "scrub:") \
                or not name or depth == 0:
            continue
        if name in ("logs", "cache", "spares") or re.fullmatch(r"(mirror|raidz\d?)-\d+", name):
            current = name
            groups.setdefault(current, 0)
        elif current:
            groups[current] += 1
        else:
            groups["data"] = groups.get("data", 0) + 1
    return "; ".join(f"{name}: {count}" for name, count in groups.items())


def _properties(pool: str, wanted: dict[str, str]) -> dict[str, str]:
    """The dataset properties as zfs reports them after setting."""
    names = ",".join(sorted({"recordsize", "compression", "primarycache", "secondarycache",
                             *wanted}))
    out = system.run(["zfs", "get", "-H", "-o", "property,value", names, pool],
                     check=False).stdout
    return dict(line.split("\t", 1) for line in out.splitlines() if "\t" in line)
