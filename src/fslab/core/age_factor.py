"""The `age` factor's names, which every stage reads: the factor itself, its level
without aging, and the fresh twins fslab makes of its aged levels.

A twin level (`twin-thesis-80`) is a fresh file system of the same kind, size and options
holding a copy of the aged level's tree: the fresh side of the aged level for workloads
that read or rewrite the aged files (workloads/aging_levels.py says which run where,
run/aging_places.py makes them, analysis/factors/aging_ranking.py compares against them).
"""

from __future__ import annotations

AGE = "age"  # the factor's name, in [sweep] and as a column of the tables
FRESH = "fresh"  # the level without aging: the reference of every age effect
TWIN = "twin-"  # a twin level's name: this, then the aged level whose tree it holds


def twin_level(level: str) -> str:
    """The name of `level`'s fresh twin ('thesis-80' -> 'twin-thesis-80')."""
    return f"{TWIN}{level}"


def twinned(level: str) -> str | None:
    """The aged level a twin level copies (None: not a twin)."""
    return level[len(TWIN):] if level.startswith(TWIN) and len(level) > len(TWIN) else None
