"""Steps many targets share: sparse images, loop devices, mount points, mounts."""

from __future__ import annotations

import subprocess
from pathlib import Path

from fslab.core import stopwatch
from fslab.core.cell_keys import path_name
from fslab.core.errors import ToolError
from fslab.host import loops, system
from fslab.host.kernel_log import kernel_lines
from fslab.host.lab import Session
from fslab.targets.base import Mounted

# A target's name in the paths fslab makes for it, at most this long: the configuration
# is in the run's record, the path only has to be one every tool reads as it is.
NAME_MOST = 40


def path_of(name: str) -> str:
    """A target's name as a file name any tool reads as it is, whatever its options hold
    (':' is a list separator to fio, ',' to mount, ' ' and '=' to many): only letters,
    digits and '_.+-' (core/cell_keys.path_name), short; Session.new_path numbers
    those that read alike."""
    return path_name(name)[:NAME_MOST] or "target"


# What mkfs writes into a fresh sparse image, at most: measured here (2026-12, `du` of the
# image after mkfs on a loop device with direct I/O) ext4 with lazy init off wrote 25 MiB
# of 256 MiB, 49 of 1 GiB, 131 of 4 GiB, 389 of 16 GiB; xfs 65 MiB from 1 GiB (its log);
# btrfs 5 MiB; ntfs, exfat and fat32 (on the image file) at most 22 MiB of 4 GiB.
MKFS_SHARE, MKFS_LEAST = 1 / 16, 16 * 1024**2


def image_bytes(size: int, files: int) -> int:
    """The lab's disk a fresh image of `size` bytes takes with `files` bytes written into
    it: what mkfs writes, at most, and the files; never more than the image."""
    return min(size, int(size * MKFS_SHARE) + MKFS_LEAST + files)


def make_image(session: Session, mounted: Mounted, name: str, size: int) -> Path:
    """A sparse image file in the session's lab directory (blocks allocated as written)."""
    image = session.new_path("images", f"{path_of(name)}.img")
    image.parent.mkdir(parents=True, exist_ok=True)
    mounted.resources.append(session.record("file", image))
    with image.open("wb") as handle:
        handle.truncate(size)
    return image


def attach_loop(session: Session, mounted: Mounted, image: Path, direct_io: bool = False) -> str:
    """Attach an image to a free loop device (recorded first: by its image, so a node
    another process holds is never fslab's) and return the device (host/loops.py)."""
    mounted.resources.append(session.record("loop", image))
    return loops.attach(image, direct_io)


def make_mountpoint(session: Session, mounted: Mounted, name: str) -> Path:
    """An empty directory to mount on, removed at teardown."""
    mountpoint = session.new_path("mnt", path_of(name))
    mounted.resources.append(session.record("dir", mountpoint))
    mountpoint.mkdir(parents=True, exist_ok=True)
    return mountpoint


def mount(session: Session, mounted: Mounted, cmd: list[str], mountpoint: Path,
          fuse: bool = False) -> None:
    """Run a mount command, recording the mount point first so it is always unmounted."""
    mounted.resources.append(session.record("mount", mountpoint, fuse=fuse))
    device = next((arg for arg in cmd if arg.startswith("/dev/")), None)
    with kernel_lines() as said, stopwatch.step(stopwatch.MOUNT):
        try:
            system.run(cmd, timeout=120)
        except ToolError as exc:
            reasons = said(device) if device else []
            if not reasons:
                raise
            # the kernel's reason last: a failed tool is named by its last lines
            raise ToolError(exc.cmd, exc.returncode, "\n".join(
                [exc.stderr.strip(), *(f"kernel: {line}" for line in reasons)])) from None


def loop_settings(device: str) -> dict[str, str | bool]:
    """Read a loop device's direct-I/O and block-size settings from sysfs."""
    name = Path(device).name
    queue = Path(f"/sys/block/{name}/queue")
    loop = Path(f"/sys/block/{name}/loop")
    if not loop.is_dir():
        return {}

    def read(path: Path) -> str:
        try:
            return path.read_text().strip()
        except OSError:
            return ""

    return {
        "device": device,
        "backing_file": read(loop / "backing_file"),
        "direct_io": read(loop / "dio") == "1",
        "logical_block_size": read(queue / "logical_block_size"),
        "scheduler": read(queue / "scheduler"),
    }


def package_version(package: str) -> str:
    """The Debian package version of a user-space file system, e.g. '1:2022.10.3-1'."""
    try:
        proc = subprocess.run(["dpkg-query", "-W", "-f=${Version}", package],
                              capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    version = proc.stdout.strip()
    if not version:
        return "unknown"
    return version.split(":", 1)[-1].split("-")[0].split("+")[0]


def kernel_has_fs(fstype: str) -> bool:
    """True when /proc/filesystems lists `fstype` (modules cannot be loaded here)."""
    try:
        listed = Path("/proc/filesystems").read_text().split()
    except OSError:
        return False
    return fstype in listed
