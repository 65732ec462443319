"""What the files of a tree occupy: their extents and layout (FIEMAP), and their sizes."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from fslab.core.aging_record import SizeBucket, UsedSpaceSeen
from fslab.probes.fiemap import NotMeasurable, extents, file_layout, layout_score
from fslab.probes.freespace import histogram_of


def used_space_probe(root: Path) -> UsedSpaceSeen:
    """Per-file FIEMAP extent counts, extent sizes and the layout score, or why not."""
    layouts, sizes, counts = [], [], []
    try:
        for path in root.rglob("f*"):
            if not path.is_file():
                continue
            records = extents(path)
            if not records:
                continue
            layouts.append(file_layout(records))
            counts.append(len(records))
            sizes += [e.length for e in records]
    except NotMeasurable as exc:
        return UsedSpaceSeen(measurable=False, reason=f"not measurable here: FIEMAP {exc}")
    optimal = sum(1 for f in layouts if f.contiguous_pairs == max(0, f.blocks - 1))
    return UsedSpaceSeen(measurable=True, files=len(layouts),
                         layout_score=layout_score(layouts),
                         optimal_share=optimal / len(layouts) if layouts else float("nan"),
                         extents_per_file=counts, extent_sizes=sizes)


def file_size_distribution(root: Path) -> list[SizeBucket]:
    """The files' sizes in power-of-two buckets (from, to, files, bytes): what a study of
    aging reports beside fragmentation (seed 004). Empty files count in 0–0."""
    sizes = []
    for directory, _, names in os.walk(root):
        for name in names:
            info = os.lstat(os.path.join(directory, name))
            if stat.S_ISREG(info.st_mode):
                sizes.append(info.st_size)
    empty = [SizeBucket(from_bytes=0, to_bytes=0, files=sizes.count(0), bytes=0)]
    return empty * (0 in sizes) + [
        SizeBucket(from_bytes=low, to_bytes=high, files=count, bytes=total)
        for low, high, count, total in histogram_of([size for size in sizes if size > 0])]
