"""Device options of image-backed targets: loop direct I/O and slow-device emulation.

Slow-device emulation uses cgroup v1 blkio throttling on the target's loop device:
read/write IOPS and bytes/s caps for the workload processes, which join the cgroup.
cgroup v1 charges only I/O a process submits itself, so the caps bind direct I/O
(fio direct=1); buffered writes are flushed by kernel threads and escape them. That is
recorded with the target, and a buffered workload on a throttled target is flagged.
"""

from __future__ import annotations

import os
from typing import Any

from fslab.core.cell_keys import path_name
from fslab.core.errors import UserError
from fslab.core.units import parse_size
from fslab.host.cgroups import BLKIO_ROOT
from fslab.host.cgroups import PREFIX as CGROUP_PREFIX
from fslab.host.lab import Session
from fslab.targets.base import Mounted

THROTTLE_FILES = {
    "read_iops": "blkio.throttle.read_iops_device",
    "write_iops": "blkio.throttle.write_iops_device",
    "read_bps": "blkio.throttle.read_bps_device",
    "write_bps": "blkio.throttle.write_bps_device",
}
DEVICE_OPTIONS = frozenset({"direct_io", "throttle"})
# Loop devices do direct I/O to their image unless a target says direct_io = false:
# otherwise the host's page cache sits under every loop image, and a file system can
# "beat" the disk it lives on.
DEFAULT_LOOP_DIRECT_IO = True


def loop_direct_io(options: dict[str, object]) -> bool:
    """Whether a target's loop device does direct I/O to its image."""
    return bool(options.get("direct_io", DEFAULT_LOOP_DIRECT_IO))


def parse_throttle(value: Any, target: str) -> dict[str, int]:
    """Validate `throttle = {read_iops = 100, write_bps = "10M", ...}`."""
    if value is None:
        return {}
    if not isinstance(value, dict) or not value:
        raise UserError(f"target {target}: throttle must be a table like "
                        "{read_iops = 100, write_bps = \"10M\"}")
    unknown = sorted(set(value) - set(THROTTLE_FILES))
    if unknown:
        raise UserError(f"target {target}: unknown throttle key {', '.join(unknown)} "
                        f"(allowed: {', '.join(THROTTLE_FILES)})")
    limits = {}
    for key, raw in value.items():
        limits[key] = parse_size(raw) if key.endswith("_bps") else int(raw)
        if limits[key] <= 0:
            raise UserError(f"target {target}: throttle {key} must be positive")
    return limits


def throttle_support() -> str:
    """Why blkio throttling is unavailable here ('' when it is available)."""
    if not (BLKIO_ROOT / THROTTLE_FILES["read_iops"]).exists():
        return f"slow-device emulation needs the cgroup v1 blkio controller at {BLKIO_ROOT}"
    return ""


def apply_throttle(session: Session, mounted: Mounted, name: str, device: str,
                   limits: dict[str, int]) -> None:
    """Create a blkio cgroup capping `device`; workload processes will join it."""
    reason = throttle_support()
    if reason:
        raise UserError(reason)
    cgroup = BLKIO_ROOT / f"{CGROUP_PREFIX}{session.dir.name}-{path_name(name)}"
    mounted.resources.append(session.record("cgroup", cgroup))
    cgroup.mkdir()
    rdev = os.stat(device).st_rdev
    numbers = f"{os.major(rdev)}:{os.minor(rdev)}"
    for key, limit in limits.items():
        (cgroup / THROTTLE_FILES[key]).write_text(f"{numbers} {limit}\n")
    mounted.cgroup = str(cgroup)
    mounted.description = mounted.description.with_(throttle={
        **limits, "device": numbers, "binds": "direct I/O only (cgroup v1 blkio)"})
