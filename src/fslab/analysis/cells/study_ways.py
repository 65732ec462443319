"""How each study put an interval on its own figures, and what it concluded from its own
table: data, each with its place in the study, read by analysis/cells/study_intervals.py.

Only the studies whose text gives an interval have a way here: the USB-stick course
report (a z interval over each cell's dd samples) and the fio notebook (a Student t
interval over its rows, one per fio job). The ZFS server paper, the RAID-1 article and
the aging thesis print single runs (and the thesis medians and means): no interval.
"""

from __future__ import annotations

from dataclasses import dataclass

USB_Z = 1.96  # the USB-stick report's critical value ("I am using a 95% confidence
# interval, so my critical value will be 1.96")


@dataclass(frozen=True)
class Way:
    """How one study's text puts an interval on a cell: its critical value (a z of 1.96,
    or Student's t at n − 1), what its n counts, the unit it prints, and where it says so."""

    study: str
    critical: str  # "z" | "t"
    rows: str  # what the study's n counts: "samples" (each timed sample) or "fio jobs"
    unit: str  # the unit it printed: "MB/s" (10^6 bytes/s) or "" (fslab's own display)
    formula: str  # as the study wrote it, and where


WAYS: dict[str, Way] = {
    "usb-files": Way(
        "usb-files", "z", "samples", "MB/s",
        "mean ± 1.96·s/√n over every sample of a cell, in MB/s (Test Results: 'my critical "
        "value will be 1.96', 'E = z_c σ / √n')"),
    "desktop-fio": Way(
        "desktop-fio", "t", "fio jobs", "",
        "mean ± t(0.975, n−1)·s/√n over a cell's rows, one per fio job of every run "
        "(workload_summary: stats.t.ppf((1 + confidence) / 2., n - 1); it computed it for "
        "read IOPS)"),
}


@dataclass(frozen=True)
class Claim:
    """A study's stated conclusion beside its own table: what it crowned, on which
    figures, in which direction those figures are better, and the table (file system,
    file size, mean, 95 % interval low and high) as printed."""

    study: str
    says: str  # the conclusion, quoted
    crowned: str  # the file system it named best
    metric: str  # what its table measures
    higher_is_better: bool
    table: tuple[tuple[str, str, float, float, float], ...]
    where: str


CLAIMS: dict[str, Claim] = {
    "usb-files": Claim(
        "usb-files", "Ext4 performed the best for large files ... Ext4 performed the best "
        "for small files", "ext4", "MB/s", True,
        (("ext2", "large", 56.336, 56.19733, 56.47467),
         ("ext2", "small", 56.5224, 56.35147, 56.69333),
         ("ext4", "large", 5.9484, 5.80441, 6.09239),
         ("ext4", "small", 7.675, 7.327837, 8.022163),
         ("fat32", "large", 55.6568, 55.49935, 55.81425),
         ("fat32", "small", 57.684, 57.49184, 57.87616),
         ("ntfs", "large", 29.89, 28.10673, 31.67327),
         ("ntfs", "small", 11.0018, 10.44982, 11.55378),
         ("xfs", "large", 12.5504, 10.63517, 14.46563),
         ("xfs", "small", 8.887518, 8.448967, 9.326069)),
        "Conclusion, against its 'Statistics Chart for Speed (MB/s)'"),
}


def contradiction(claim: Claim) -> str:
    """A sentence when the claim's crowned file system is not the best of its own table
    in the table's own direction at some size ('' when the table bears it out)."""
    parts, last = [], True
    for size in dict.fromkeys(row[1] for row in claim.table):
        rows = sorted((r for r in claim.table if r[1] == size), key=lambda r: r[2],
                      reverse=claim.higher_is_better)
        if rows[0][0] == claim.crowned:
            continue
        place = [r[0] for r in rows].index(claim.crowned) + 1
        last &= place == len(rows)
        own = next(r for r in rows if r[0] == claim.crowned)
        parts.append(f"{size} files: {claim.crowned} {own[2]:g} {claim.metric}, "
                     f"{_ordinal(place)} of {len(rows)}, against {rows[0][0]}'s "
                     f"{rows[0][2]:g} (intervals {own[3]:g}–{own[4]:g} and "
                     f"{rows[0][3]:g}–{rows[0][4]:g})")
    if not parts:
        return ""
    direction = "higher" if claim.higher_is_better else "lower"
    return (f"The study concluded '{claim.says}', but its own table says otherwise "
            f"({claim.where}): {'; '.join(parts)}. {direction.capitalize()} "
            f"{claim.metric} is better, so its table ranks {claim.crowned} "
            f"{'last' if last else 'below others'}: the "
            "conclusion read the speeds as if lower were faster.")


def _ordinal(place: int) -> str:
    return {1: "first", 2: "second", 3: "third", 4: "fourth", 5: "fifth"}.get(
        place, f"{place}th")
