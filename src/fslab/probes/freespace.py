"""Free-space fragmentation: histogram of free extents by size, count, largest.

ext2/3/4: e2freefrag; xfs: xfs_spaceman (online) 'freesp -s'. Other file systems are
reported as not measurable here (with the reason), never as unfragmented.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from fslab.core.aging_record import FreeSpaceSeen
from fslab.host import system
from fslab.parsers.aging_kind import power_buckets
from fslab.targets.profiles import PROFILES

if TYPE_CHECKING:
    from fslab.targets import Mounted


@dataclass
class FreeSpace:
    """Free extents of a file system, from its own tool."""

    tool: str
    free_bytes: int = 0
    free_extents: int = 0
    largest_bytes: int = 0
    histogram: list[tuple[int, int, int, int]] = field(default_factory=list)
    # (from_bytes, to_bytes, extents, free bytes in them)
    not_measurable: str = ""


UNITS = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4}


def _size(text: str) -> int:
    match = re.fullmatch(r"(\d+)([KMGT]?)", text.strip())
    return int(match.group(1)) * UNITS[match.group(2)] if match else 0


def parse_e2freefrag(text: str) -> FreeSpace:
    """e2freefrag DEV output -> FreeSpace (its histogram is in bytes with K/M/G units)."""
    info = FreeSpace("e2freefrag")
    block = int(re.search(r"Blocksize: (\d+) bytes", text).group(1))  # type: ignore[union-attr]
    info.free_bytes = int(re.search(r"Free blocks: (\d+)", text).group(1)) * block  # type: ignore[union-attr]
    count = re.search(r"(?:Num\. free extent|Total free extents): (\d+)", text)
    info.free_extents = int(count.group(1)) if count else 0
    largest = re.search(r"Max\. free extent: (\d+) ?KB", text)
    info.largest_bytes = int(largest.group(1)) * 1024 if largest else 0
    for match in re.finditer(r"^\s*(\d+[KMGT]?)\.\.\.\s*(\d+[KMGT]?)-?\s*:\s*(\d+)\s+(\d+)\s+",
                             text, re.MULTILINE):
        info.histogram.append((_size(match.group(1)), _size(match.group(2)),
                               int(match.group(3)), int(match.group(4)) * block))
    return info


def parse_xfs_freesp(text: str, block: int = 4096) -> FreeSpace:
    """xfs 'freesp -s' output (block counts) -> FreeSpace."""
    info = FreeSpace("xfs freesp")
    for match in re.finditer(r"^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+[\d.]+", text, re.MULTILINE):
        low, high, count, blocks = map(int, match.groups())
        info.histogram.append((low * block, high * block, count, blocks * block))
    info.free_extents = sum(h[2] for h in info.histogram)
    info.free_bytes = sum(h[3] for h in info.histogram)
    # freesp -s gives buckets, not the largest extent: its bucket's upper bound bounds it.
    info.largest_bytes = info.histogram[-1][1] if info.histogram else 0
    return info


def histogram_of(lengths: list[int]) -> list[tuple[int, int, int, int]]:
    """Power-of-two buckets (from, to, extents, bytes) like e2freefrag's."""
    return power_buckets(lengths)


def parse_btrfs_free_space_tree(text: str) -> FreeSpace:
    """`btrfs inspect-internal dump-tree -t 10` -> FreeSpace from FREE_SPACE_EXTENT keys."""
    lengths = [int(m.group(1)) for m in
               re.finditer(r"key \(\d+ FREE_SPACE_EXTENT (\d+)\)", text)]
    info = FreeSpace("btrfs free-space tree")
    if "FREE_SPACE_BITMAP" in text:
        info.not_measurable = ("part of the free space is stored as bitmaps, which fslab "
                               "does not decode yet")
        return info
    info.histogram = histogram_of(lengths)
    info.free_extents = len(lengths)
    info.free_bytes = sum(lengths)
    info.largest_bytes = max(lengths, default=0)
    return info


_ZDB_SIZE = re.compile(r"^([\d.]+)([KMGTP]?)$")


def _zdb_size(text: str) -> int:
    match = _ZDB_SIZE.match(text)
    if not match:
        return 0
    return int(float(match.group(1)) * {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3,
                                         "T": 1024**4, "P": 1024**5}[match.group(2)])


def parse_zdb_metaslabs(text: str) -> FreeSpace:
    """`zdb -mm` -> FreeSpace. zdb gives each metaslab's free bytes, free segments and
    largest segment, not every segment's size: the histogram buckets metaslabs by their
    mean segment size (stated in the tool name), the totals and the largest are exact."""
    info = FreeSpace("zdb -mm (histogram by metaslab mean segment size)")
    pattern = re.compile(r"free\s+(\S+)\s*\n\s*segments\s+(\d+)\s+maxsize\s+(\S+)")
    lengths: list[int] = []
    for free_text, segments_text, largest_text in pattern.findall(text):
        free, segments = _zdb_size(free_text), int(segments_text)
        info.free_bytes += free
        info.free_extents += segments
        info.largest_bytes = max(info.largest_bytes, _zdb_size(largest_text))
        if segments:
            lengths += [free // segments] * segments
    buckets = histogram_of(lengths)
    scale = info.free_bytes / max(1, sum(b[3] for b in buckets))
    info.histogram = [(low, high, count, round(total * scale))
                      for low, high, count, total in buckets]
    return info


def _e2freefrag(device: str, mountpoint: str, pool: str, search_dir: str) -> FreeSpace:
    if not device:
        return FreeSpace("e2freefrag", not_measurable="no device to read")
    proc = system.run(["e2freefrag", device], check=False)
    if proc.returncode == 0:
        return parse_e2freefrag(proc.stdout)
    return FreeSpace("e2freefrag", not_measurable=proc.stderr.strip()[:200])


def _xfs_spaceman(device: str, mountpoint: str, pool: str, search_dir: str) -> FreeSpace:
    proc = system.run(["xfs_spaceman", "-c", "freesp -s", mountpoint], check=False)
    if proc.returncode == 0 and proc.stdout.strip():
        return parse_xfs_freesp(proc.stdout)
    return FreeSpace("xfs freesp", not_measurable=proc.stderr.strip()[:200] or "no output")


def _btrfs_tree(device: str, mountpoint: str, pool: str, search_dir: str) -> FreeSpace:
    if not device:
        return FreeSpace("btrfs free-space tree", not_measurable="no device to read")
    proc = system.run(["btrfs", "inspect-internal", "dump-tree", "-t", "10", device],
                      check=False)
    if proc.returncode == 0:
        return parse_btrfs_free_space_tree(proc.stdout)
    return FreeSpace("btrfs free-space tree", not_measurable=proc.stderr.strip()[:200])


def _zdb(device: str, mountpoint: str, pool: str, search_dir: str) -> FreeSpace:
    if not pool:
        return FreeSpace("zdb -mm", not_measurable="no pool to read")
    # Pools are created without a cache file, so zdb searches the images' directory.
    proc = system.run(["zdb", "-e", "-p", search_dir, "-mm", pool], check=False, timeout=120)
    if proc.returncode == 0 and "metaslab" in proc.stdout:
        return parse_zdb_metaslabs(proc.stdout)
    return FreeSpace("zdb -mm", not_measurable=(proc.stderr or proc.stdout).strip()[:200])


# Each probe a profile can name (FsProfile.free_space; zfs: "zdb"), as one function of
# (device, mountpoint, pool, search_dir): a new probe is one function and one entry.
PROBES: dict[str, Callable[[str, str, str, str], FreeSpace]] = {
    "e2freefrag": _e2freefrag, "xfs_spaceman": _xfs_spaceman,
    "btrfs_free_space_tree": _btrfs_tree, "zdb": _zdb}


def _probe_of(fs: str) -> str:
    """The probe that reads `fs`: its profile's `free_space` (zfs: zdb); '' for none."""
    kind = "zdb" if fs == "zfs" else (PROFILES[fs].free_space if fs in PROFILES else "")
    return kind if kind in PROBES else ""


def probe(fs: str, device: str, mountpoint: str, pool: str = "",
          search_dir: str = "") -> FreeSpace:
    """Free-space fragmentation of a mounted file system, or why it cannot be measured."""
    kind = _probe_of(fs)
    if not kind:
        return FreeSpace("", not_measurable=f"no free-space probe for {fs} yet")
    return PROBES[kind](device, mountpoint, pool, search_dir)


def of_mounted(place: Mounted) -> FreeSpaceSeen:
    """A provisioned target's free extents now, as JSON (synced first: the probes read the
    device; a zfs pool is searched for in its images' directory). A file system no probe
    reads is not synced: a sync writes out every process's dirty data, and on a busy
    machine waits for it."""
    description = place.description
    if _probe_of(description.fs):
        os.sync()
    search_dir = next((str(Path(r.path).parent) for r in place.resources if r.kind == "file"),
                      "")
    found = probe(description.fs, description.device, str(place.path), description.pool,
                  search_dir)
    return FreeSpaceSeen(tool=found.tool, free_bytes=found.free_bytes,
                         free_extents=found.free_extents, largest_bytes=found.largest_bytes,
                         histogram=[list(bucket) for bucket in found.histogram],
                         not_measurable=found.not_measurable)
