"""Per-file extent maps from the FIEMAP ioctl, counted record by record.

filefrag merges physically adjacent records into one "extent" (on ext4 it can say 1
where FIEMAP lists hundreds), so fslab reads the records itself. FUSE file systems answer
EOPNOTSUPP: their layout is "not measurable here", never "unfragmented".
"""

from __future__ import annotations

import errno
import fcntl
import itertools
import os
import struct
from dataclasses import dataclass
from pathlib import Path

FS_IOC_FIEMAP = 0xC020660B
FIEMAP_FLAG_SYNC = 0x1  # flush dirty data first, so delayed allocation has happened
FIEMAP_EXTENT_LAST = 0x1
_HEADER = struct.Struct("=QQLLLL")  # fm_start, fm_length, flags, mapped, count, reserved
_EXTENT = struct.Struct("=QQQQQLLLL")  # logical, physical, length, 2 reserved, flags, 3 res
BATCH = 256


class NotMeasurable(Exception):
    """This file system does not report extents (FUSE: EOPNOTSUPP)."""


@dataclass(frozen=True)
class Extent:
    """One FIEMAP record: logical and physical offsets and length, in bytes."""

    logical: int
    physical: int
    length: int


def extents(path: Path) -> list[Extent]:
    """Every FIEMAP record of a file, in logical order."""
    found: list[Extent] = []
    start = 0
    fd = os.open(path, os.O_RDONLY)
    try:
        while True:
            buffer = bytearray(_HEADER.size + BATCH * _EXTENT.size)
            _HEADER.pack_into(buffer, 0, start, 2**64 - 1 - start, FIEMAP_FLAG_SYNC, 0,
                              BATCH, 0)
            try:
                fcntl.ioctl(fd, FS_IOC_FIEMAP, buffer, True)
            except OSError as exc:
                if exc.errno in (errno.EOPNOTSUPP, errno.ENOTTY, errno.EINVAL):
                    raise NotMeasurable(os.strerror(exc.errno)) from exc
                raise
            mapped = _HEADER.unpack_from(buffer, 0)[3]
            last = False
            for index in range(mapped):
                logical, physical, length, _, _, flags, *_ = _EXTENT.unpack_from(
                    buffer, _HEADER.size + index * _EXTENT.size)
                found.append(Extent(logical, physical, length))
                last = bool(flags & FIEMAP_EXTENT_LAST)
            if last or mapped == 0:
                return found
            start = found[-1].logical + found[-1].length
    finally:
        os.close(fd)


@dataclass(frozen=True)
class FileLayout:
    """How one file sits on disk."""

    extents: int
    blocks: int
    contiguous_pairs: int  # consecutive blocks that are also physically consecutive


def file_layout(records: list[Extent], block: int = 4096) -> FileLayout:
    """Blocks and physical contiguity of a file, for the layout score."""
    blocks = sum(-(-e.length // block) for e in records)
    breaks = sum(1 for a, b in itertools.pairwise(records)
                 if b.physical != a.physical + a.length)
    return FileLayout(len(records), blocks, max(0, blocks - 1 - breaks))


def layout_score(layouts: list[FileLayout]) -> float:
    """Smith–Seltzer layout score: the share of a file's blocks (after its first) that
    follow the previous block physically; 1.0 is perfectly contiguous (Smith & Seltzer
    1997). Files of one block carry no information and are left out; NaN when none."""
    pairs = sum(max(0, f.blocks - 1) for f in layouts)
    if not pairs:
        return float("nan")
    return sum(f.contiguous_pairs for f in layouts) / pairs
