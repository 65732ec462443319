"""Safety checks before fslab formats a real block device.

A device is used only when the campaign names it AND the user confirms that exact path.
It is refused when it (or a partition of it) is mounted, used as swap, held by another
device (md, dm), or when it carries a partition table or file-system signature, unless
the user also passes the separate force flag for signatures.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from fslab.core.errors import UserError
from fslab.host import system


def check_block_device(device: str, *, confirmed: bool, force_signature: bool = False) -> None:
    """Raise a one-line UserError unless `device` is safe to format."""
    path = Path(device)
    if not confirmed:
        raise UserError(
            f"{device} is a real device: fslab formats it only when you confirm with "
            f"--confirm-device {device} (all data on it will be lost)"
        )
    try:
        st = path.stat()
    except OSError as exc:
        raise UserError(f"device {device}: {exc.strerror}") from exc
    if not stat.S_ISBLK(st.st_mode):
        raise UserError(f"{device} is not a block device")
    numbers = _device_numbers(path.resolve(), st.st_rdev)
    mounted = _mounted_numbers()
    for number in numbers:
        if number in mounted:
            raise UserError(f"refusing {device}: it is mounted at {mounted[number]}")
    swaps = Path("/proc/swaps").read_text().split() if Path("/proc/swaps").exists() else []
    if str(path.resolve()) in swaps:
        raise UserError(f"refusing {device}: it is in use as swap")
    holders = Path(f"/sys/class/block/{path.resolve().name}/holders")
    if holders.is_dir() and any(holders.iterdir()):
        names = ", ".join(sorted(p.name for p in holders.iterdir()))
        raise UserError(f"refusing {device}: it is held by {names}")
    signature = _signature(str(path))
    if signature and not force_signature:
        raise UserError(
            f"refusing {device}: it carries a {signature} signature; pass --force-device "
            "as well to overwrite it"
        )


def _device_numbers(resolved: Path, rdev: int) -> set[str]:
    """Return 'major:minor' of the device and of each of its partitions."""
    numbers = {f"{os.major(rdev)}:{os.minor(rdev)}"}
    sys_dir = Path(f"/sys/class/block/{resolved.name}")
    if sys_dir.is_dir():
        for child in sys_dir.iterdir():
            dev_file = child / "dev"
            if (child / "partition").exists() and dev_file.exists():
                numbers.add(dev_file.read_text().strip())
    return numbers


def _mounted_numbers() -> dict[str, str]:
    """Map 'major:minor' of each mounted device to its mount point."""
    found: dict[str, str] = {}
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields = line.split()
        found.setdefault(fields[2], fields[4])
    return found


def _signature(device: str) -> str:
    """Return the partition-table or file-system type found on the device, or ''."""
    proc = system.run(["blkid", "-p", "-o", "export", device], check=False)
    values = dict(
        line.split("=", 1) for line in proc.stdout.splitlines() if "=" in line
    )
    if "PTTYPE" in values:
        return f"{values['PTTYPE']} partition table"
    if "TYPE" in values:
        return f"{values['TYPE']} file-system"
    return ""
