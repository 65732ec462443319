"""What the reader of "does the ranking survive aging?" must know of the agings behind
it, one line each (the verdicts' rows of kind aging_label): images aged once and reused,
a level a file system could not reach (said, never measured as reached), room made for
the runs' files and the fill they began at, the twins the tree workloads were compared
with, and what this machine cannot reproduce of a published aging. Read off each run's
record: its place's `aging` (run/aging_places.py) and, for the fill, `around_run`."""

from __future__ import annotations

from typing import Any

from fslab.core.campaign_settings import CampaignSettings


def described_aging(description: Any) -> dict[str, Any] | None:
    """A place's `aging` as its description holds it (run/aging_places.py: the level, the
    seed, how it went), a dict or a record with `details`; None for any other place."""
    found = description.get("aging") if isinstance(description, dict) else \
        (getattr(description, "details", None) or {}).get("aging")
    return found if isinstance(found, dict) else None


def run_fill(record: Any) -> float | None:
    """The fill of the space root can write at the run's start (run/around_run.py), as a
    share; None where it was not recorded (a place neither aged nor a level of `age`)."""
    around = record.workload_metadata.section("around_run")
    fill = around.get("fill") if isinstance(around, dict) else None
    return float(fill) if isinstance(fill, int | float) else None


def aging_labels(records: list[Any], settings: CampaignSettings) -> list[str]:
    """The lines (module doc), in the order a reader needs them."""
    places: dict[tuple[str, int], dict[str, Any]] = {}
    failed: dict[str, list[str]] = {}
    for record in records:
        aging = described_aging(record.target_description)
        if isinstance(aging, dict):
            places.setdefault((record.target, record.iteration), aging)
        if record.failure == "aging":
            failed.setdefault(record.target, [])
            if record.iteration not in failed[record.target]:
                failed[record.target].append(record.iteration)
    lines = []
    if settings.table.get("age_reuse"):
        lines.append("Aged images reused (age_reuse = true): each file system × level was "
                     "aged once and every run started from a copy of that image, so these "
                     "intervals hold for those aged images only, not for another aging of "
                     "the same level.")
    elif settings.fresh == "campaign" and places:
        lines.append("One file system per target × level for the whole campaign (fresh = "
                     "\"campaign\"): each was aged once, so these intervals hold for those "
                     "agings only.")
    twins = sorted({str(a["level"]) for a in places.values() if a.get("twin_of")})
    if twins:
        lines.append(f"{', '.join(twins)}: the fresh twin of each aged file system, made "
                     "right after its aging — a fresh file system of the same kind, size "
                     "and options holding a copy of the aged tree (cp -a: Conway et al., "
                     "FAST '17) — is the fresh side for the workloads that read or rewrite "
                     "the aged files; the others ran against a plain fresh file system.")
    for target, iterations in sorted(failed.items()):
        reasons = {str(r.reason) for r in records if r.target == target
                   and r.failure == "aging"}
        why = min(reasons, key=len) if reasons else ""
        lines.append(f"{target}: not measured in {len(iterations)} iteration"
                     f"{'s' * (len(iterations) != 1)} (failure kind aging): {why}")
    lines += _fills(records)
    said: dict[str, list[str]] = {}  # what cannot be reproduced here -> the levels
    for aging in places.values():
        for line in aging.get("not_here") or []:
            levels = said.setdefault(str(line), [])
            if aging.get("level") not in levels:
                levels.append(str(aging.get("level")))
    return lines + [f"{', '.join(levels)}: {line}" for line, levels in said.items()]


def _fills(records: list[Any]) -> list[str]:
    """Where room was made for the runs (random aged files deleted: the thesis's
    protocol), the fill their runs began at, per target."""
    room: dict[str, list[float]] = {}
    for record in records:
        aging = described_aging(record.target_description) or {}
        fill = run_fill(record)
        if aging.get("released") and fill is not None:
            room.setdefault(record.target, []).append(fill)
    lines = []
    for target, fills in sorted(room.items()):
        low, high = min(fills), max(fills)
        span = f"{low:.1%}" if round(low, 3) == round(high, 3) else f"{low:.1%}–{high:.1%}"
        lines.append(f"{target}: random aged files were deleted to make room for the runs' "
                     "files (the thesis's protocol, section 6.2), counted as root writes: "
                     f"its runs began at {span} of the space root can write.")
    return lines
