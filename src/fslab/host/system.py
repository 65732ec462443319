"""Running external commands and asking the host simple questions.

Commands always run from argument lists, never from a shell string, so nothing a user
typed is ever interpreted by a shell.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import shutil
import signal
import subprocess
from pathlib import Path
from typing import Any

from fslab.core.errors import ToolError, UserError
from fslab.core.plugins import declared
from fslab.core.stopwatch import CACHE_DROP, step
from fslab.host.resident import keep_tools_resident

# Where each external tool comes from, for the one-line "missing tool" message
# (file-system profiles add their mkfs and FUSE mount program).
TOOL_PACKAGES = {
    "fio": "fio",
    "losetup": "util-linux",
    "mount": "mount",
    "umount": "mount",
    "blkid": "util-linux",
    "wipefs": "util-linux",
    "findmnt": "util-linux",
    "zstd": "zstd",
    "e2image": "e2fsprogs",
    "xfs_metadump": "xfsprogs",
    "xfs_mdrestore": "xfsprogs",
    "btrfs-image": "btrfs-progs",
}


def run(
    cmd: list[str],
    *,
    check: bool = True,
    timeout: float | None = None,
    input_text: str | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run a command, capture its output as text, and raise ToolError on failure."""
    try:
        proc = subprocess.run(
            cmd,
            capture_output=True,
            text=True,
            timeout=timeout,
            input=input_text,
            check=False,
        )
    except FileNotFoundError as exc:
        raise UserError(missing_tool_message(cmd[0])) from exc
    if check and proc.returncode != 0:
        raise ToolError(cmd, proc.returncode, proc.stderr or proc.stdout)
    return proc


def tool_packages() -> dict[str, str]:
    """TOOL_PACKAGES and the plug-ins' own tools (core/plugins.py: PACKAGES)."""
    return {k: v for packages in [TOOL_PACKAGES, *declared("PACKAGES")]
            for k, v in packages.items()}


def missing_tool_message(tool: str) -> str:
    """Say which tool is missing and how to install it."""
    package = tool_packages().get(tool)
    hint = f"apt-get install {package}" if package else "install it"
    return f"{tool} not found: {hint} (or run `make run`, which installs what fslab needs)"


def require_tool(tool: str) -> str:
    """Return the path of `tool` or raise a one-line UserError naming the package."""
    path = which(tool)
    if path is None:
        raise UserError(missing_tool_message(tool))
    return path


def which(tool: str) -> str | None:
    """Find a tool on PATH, also in the sbin directories a non-login root shell may lack."""
    extra = "/usr/local/sbin:/usr/sbin:/sbin"
    return shutil.which(tool, path=os.environ.get("PATH", "") + ":" + extra)


def is_root() -> bool:
    """True when running with root privileges (mkfs, losetup and mount need them)."""
    return os.geteuid() == 0


# How a tool prints its version, where not --version (file-system profiles add theirs).
VERSION_FLAGS: dict[str, list[str]] = {}


@functools.cache
def tool_version(tool: str) -> str:
    """Return a tool's version string, or 'missing' / 'unknown'."""
    flags = VERSION_FLAGS.get(tool, ["--version"])
    path = which(tool)
    if path is None:
        return "missing"
    try:
        proc = subprocess.run([path, *flags], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    text = (proc.stdout + proc.stderr).strip()
    match = re.search(r"\d+\.\d+(?:\.\d+)?(?:-\w+)?", text)
    return match.group(0) if match else (text.splitlines()[0] if text else "unknown")


def memory_bytes() -> int:
    """The machine's RAM (MemTotal), in bytes; 0 when /proc/meminfo is unreadable."""
    try:
        with open("/proc/meminfo") as handle:
            for line in handle:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def kernel_release() -> str:
    """Return the running kernel release, e.g. '6.18.2'."""
    return os.uname().release


@functools.cache
def _libc() -> Any:
    import ctypes

    return ctypes.CDLL(None, use_errno=True)


def sync_file_system(path: Path) -> None:
    """Flush the file system holding `path` (and its device), not the whole machine's
    (syncfs(2)): what aging's rounds and the probes around a run need, without writing
    out every other process's dirty pages each time. sync(2) where syncfs is refused."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        os.sync()
        return
    try:
        if _libc().syncfs(fd) != 0:
            os.sync()
    finally:
        os.close(fd)


def sync_and_drop_caches() -> bool:
    """Flush dirty data and drop the page, dentry and inode caches; False when not allowed.
    The measuring tools' own files stay cached (resident.py)."""
    keep_tools_resident()
    with step(CACHE_DROP):
        os.sync()
        try:
            Path("/proc/sys/vm/drop_caches").write_text("3\n")
        except OSError:
            return False
    return True


def process_start_time(pid: int) -> int | None:
    """Return a process's start time in clock ticks since boot, or None if it is gone.

    Together with the PID this identifies a process even after its PID is reused, so
    fslab can tell its own live sessions from dead ones and never touch another's.
    """
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may contain spaces and parentheses: split after the last ')'.
    fields = stat[stat.rindex(")") + 2 :].split()
    return int(fields[19])


def group_members(pgid: int) -> list[tuple[int, int | None]]:
    """(pid, start time) of every live process in process group `pgid`."""
    found: list[tuple[int, int | None]] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            found.append((int(entry.name), int(fields[19])))
    return found


def serving(path: Path) -> list[tuple[int, int | None]]:
    """(pid, start time) of live processes with `path` as one of their arguments: the
    daemon behind a FUSE mount (its command line names the mountpoint), which outlives
    the unmount briefly. The start time tells it from a later process with its PID."""
    wanted = str(path).encode()
    found: list[tuple[int, int | None]] = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            words = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if wanted in words and process_state(int(entry.name)) not in ("", "Z", "X"):
            found.append((int(entry.name), process_start_time(int(entry.name))))
    return found


def process_state(pid: int) -> str:
    """Return a process's state letter (R, S, D, Z, ...), or '' if it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    return stat[stat.rindex(")") + 2 :].split()[0]


def is_mountpoint(path: Path) -> bool:
    """True when `path` is currently a mount point (read from /proc/self/mountinfo).

    Never stats the mount itself: a FUSE mount whose daemon died answers every stat with
    ENOTCONN, and must still be found (and released)."""
    import os

    try:
        target = str(path.parent.resolve() / path.name)
    except OSError:
        target = os.path.abspath(path)
    return target in mounted_paths()


def mounted_paths() -> set[str]:
    """Return every mount point of this mount namespace."""
    points = set()
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields = line.split()
        points.add(unescape_mount_path(fields[4]))
    return points


def mount_options(path: Path) -> str:
    """Return the options a mount point is really mounted with (VFS and fs-specific)."""
    target = str(path.resolve())
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        left, _, right = line.partition(" - ")
        fields = left.split()
        if unescape_mount_path(fields[4]) == target:
            super_opts = right.split()[2] if len(right.split()) > 2 else ""
            return f"{fields[5]},{super_opts}".strip(",")
    return ""


def containing_mount(path: Path) -> tuple[str, str, str]:
    """Return (fstype, source, options) of the mount that holds `path` (or its parent)."""
    probe = Path(path)
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    target = str(probe.resolve())
    best = ("unknown", "unknown", "")
    best_len = -1
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        left, _, right = line.partition(" - ")
        fields = left.split()
        point = unescape_mount_path(fields[4])
        inside = target == point or target.startswith(point.rstrip("/") + "/")
        if inside and len(point) > best_len:
            parts = right.split()
            best = (parts[0], parts[1] if len(parts) > 1 else "", fields[5])
            best_len = len(point)
    return best


def unescape_mount_path(text: str) -> str:
    """A path as /proc/self/mountinfo writes it (a space as \\040), as it is."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), text)


def end_stragglers(pgid: int, started: int, until: int) -> list[int]:
    """SIGKILL what is left of a group fslab made after its leader ended: the members of
    group `pgid` that started between the leader's start and the group's deadline (clock
    ticks since boot). A group's number is not reused while a member lives; one reused
    after they all ended belongs to processes born after that window, left alone."""
    ended = []
    for pid, start_time in group_members(pgid):
        if start_time is None or not started <= start_time <= until:
            continue
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
            ended.append(pid)
    return ended
