"""A zfs target's pool as the ZFS server study built it: its layout over N images, a
separate intent-log (ZIL) device, an L2ARC cache device and the ARC's maximum size.

Each is a field of the [[target]] table and a factor of targets (plan/target_factors.py):

    layout      "single" (one image), "mirror" (N-way, N >= 2), "raidz1" (N >= 3)
    devices     how many images the layout spans (default: 1, 2, 3)
    log_size    a log vdev on an image of its own ("0": none)
    cache_size  a cache (L2ARC) vdev; zfs-fuse takes a cache vdev only on a block device
                ("cache device must be a disk or disk slice"), so its image is a loop device
    arc_max     the ARC's maximum: zfs-fuse's daemon option --max-arc-size MB (16..16384,
                whole MiB; one daemon serves every pool, so pools share one ARC), the
                module parameter zfs_arc_max on kernel OpenZFS

Pure: options in, a checked PoolBuild (or one line naming what is wrong) out; the pool is
made by targets/zfs.py.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fslab.core.errors import UserError
from fslab.core.units import format_bytes, parse_size

MiB = 1024**2
MIN_VDEV = 64 * MiB  # zpool refuses vdevs below 64 MiB
# layout -> (fewest devices, devices when not given)
LAYOUTS: dict[str, tuple[int, int]] = {"single": (1, 1), "mirror": (2, 2), "raidz1": (3, 3)}
# zfs-fuse's --max-arc-size range, in MiB (zfs-fuse --help: "Range: 16 to 16384")
ARC_MIN_MIB, ARC_MAX_MIB = 16, 16384
POOL_FIELDS = ("layout", "devices", "log_size", "cache_size", "arc_max")
NONE_LEVELS = ("0", "none", "")  # a log or cache device level meaning "no such device"


@dataclass(frozen=True)
class PoolBuild:
    """How one pool is made: its layout and device count, its log and cache devices'
    sizes (0: none) and its ARC's maximum in bytes (0: the daemon's or module's own)."""

    layout: str = "single"
    devices: int = 1
    log_size: int = 0
    cache_size: int = 0
    arc_max: int = 0

    @property
    def arc_mib(self) -> int:
        return self.arc_max // MiB

    def vdevs(self, images: list[str], log: str = "", cache: str = "") -> list[str]:
        """zpool create's vdev arguments: the data images in their layout, then the log
        and cache devices."""
        data = images if self.layout == "single" else [self.layout, *images]
        return [*data, *(["log", log] if log else []), *(["cache", cache] if cache else [])]

    def describe(self) -> dict[str, object]:
        """The pool as the target description records it."""
        return {"layout": self.layout, "devices": self.devices,
                "log_size": self.log_size or None, "cache_size": self.cache_size or None}

    def shown(self) -> str:
        """'raidz1 of 3 images, a 128 MiB log, a 128 MiB cache' (plans, descriptions)."""
        parts = [f"{self.layout} of {self.devices} image{'s' * (self.devices != 1)}"]
        parts += [f"a {format_bytes(size)} {what}" for size, what in (
            (self.log_size, "log"), (self.cache_size, "cache")) if size]
        return ", ".join(parts)


def pool_build(options: dict[str, Any], fs: str, target: str) -> PoolBuild:
    """The pool a zfs target's options ask for, checked: one line naming the first thing
    that cannot be built (an unknown layout, too few devices for it, a device below
    zpool's 64 MiB, an ARC outside zfs-fuse's range)."""
    where = f"target {target}"
    layout = str(options.get("layout") or ("mirror" if fs == "zfs-mirror" else "single"))
    if layout not in LAYOUTS:
        raise UserError(f"{where}: unknown zfs layout {layout!r} (known: "
                        f"{', '.join(LAYOUTS)})")
    if fs == "zfs-mirror" and layout != "mirror":
        raise UserError(f"{where}: fs = \"zfs-mirror\" is a mirror; for layout = "
                        f"{layout!r} use fs = \"zfs\"")
    fewest, default = LAYOUTS[layout]
    devices = _count(options.get("devices"), default, where)
    if devices < fewest:
        raise UserError(f"{where}: layout {layout} needs at least {fewest} devices, "
                        f"not {devices}")
    if layout == "single" and devices != 1:
        raise UserError(f"{where}: layout single is one image, not {devices} (a pool "
                        "striped over several images is not a layout fslab makes)")
    return PoolBuild(layout, devices, _device_size(options.get("log_size"), "log_size", where),
                     _device_size(options.get("cache_size"), "cache_size", where),
                     arc_bytes(options.get("arc_max"), where))


def _count(value: Any, default: int, where: str) -> int:
    if value is None or str(value).strip() == "":
        return default
    try:
        count = int(str(value))
    except ValueError:
        raise UserError(f"{where}: devices must be a whole number, not {value!r}") from None
    if count < 1:
        raise UserError(f"{where}: devices must be at least 1")
    return count


def _device_size(value: Any, name: str, where: str) -> int:
    if value is None or str(value).strip().lower() in NONE_LEVELS:
        return 0
    size = parse_size(value if isinstance(value, int) else str(value))
    if size < MIN_VDEV:
        raise UserError(f"{where}: {name} {value} is below zpool's smallest device "
                        f"(64 MiB); \"0\" for none")
    return size


def arc_bytes(value: Any, where: str) -> int:
    """arc_max in bytes (0 when not given): whole MiB within zfs-fuse's 16..16384."""
    if value is None or str(value).strip() == "":
        return 0
    size = parse_size(value if isinstance(value, int) else str(value))
    if size % MiB or not ARC_MIN_MIB <= size // MiB <= ARC_MAX_MIB:
        raise UserError(f"{where}: arc_max {value} must be whole MiB from {ARC_MIN_MIB}M to "
                        f"{ARC_MAX_MIB}M (zfs-fuse's --max-arc-size range)")
    return size
