"""A cell's identity as fields, and the one place its name is rendered.

A cell is what a campaign measures repeatedly: a target (as the campaign declared it:
"ext4"), the levels of the target's factors, a job ("randread"; "hpc/hpc-read", one
section of a job file) and the levels of the job's factors. The plan makes the key
(plan/sweep.py), the runner records it (run.json: target_base, job, levels) and every row
of the metrics table carries it as columns (target_base, job, one column per factor), so
the analysis, the history and the report read the fields and never take a name apart.

Names are rendering: `cell_name` gives the full one (what the `target` and `workload`
columns and run ids hold: "ext4 mount_options=noatime", "randread iodepth=16");
`short_names` gives the shortest that still tells the cells of one context apart: where
every cell is ext4 and only a mount option varies, "data=journal" (at the longest, every
field's label: `CellKey.label`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from fslab.core.errors import UserError
from fslab.core.units import parse_size

Level = tuple[str, str]  # (factor, level)
NONE_SHOWN = "(none)"  # an empty level (the file system's defaults), as printed
# Factors whose levels are option strings, shown as themselves ("noatime", "-I 256"): the
# whole option lists, and one option each (mount_options.KEY, mkfs_options.KEY).
OPTION_FACTORS = ("mount_options", "mkfs_options")


@dataclass(frozen=True, order=True)
class CellKey:
    """One cell: the target as declared, the job, and every factor's level (the
    target's, then the job's, in the campaign's order)."""

    target: str
    job: str
    levels: tuple[Level, ...] = ()

    @property
    def level_dict(self) -> dict[str, str]:
        return dict(self.levels)

    @property
    def unordered(self) -> tuple[str, str, frozenset[Level]]:
        """The cell whatever order its levels were listed in (a tuner lists them in its
        space's order, the plan the target's first)."""
        return self.target, self.job, frozenset(self.levels)

    def to_dict(self) -> dict[str, object]:
        """As campaign.toml's `cells` holds it."""
        return {"target": self.target, "job": self.job, "levels": dict(self.levels)}

    def label(self) -> str:
        """Every field as its label, target, levels, job ('ext4 noatime randread'): the
        longest of short_names' names (cell_name writes a variant's own name)."""
        return " ".join([self.target, *(level_label(f, v) for f, v in self.levels),
                         self.job])


def cell_name(base: str, levels: Iterable[Level]) -> str:
    """The full name of a target or job variant ('ext4 mount_options=noatime',
    'randread iodepth=16'): what run ids and the metrics table's target and workload
    columns hold. The one function that writes a variant's name."""
    return " ".join([base, *(f"{name}={shown(level)}" for name, level in levels)])


def shown(level: str) -> str:
    return level if level else NONE_SHOWN


def is_option_factor(factor: str) -> bool:
    """Whether a factor's levels are option strings that read on their own."""
    return factor in OPTION_FACTORS or factor.startswith(
        tuple(f"{name}." for name in OPTION_FACTORS))


def level_label(factor: str, level: str) -> str:
    """How one level reads in a short name: an option string as itself ('noatime',
    'data=journal', '-I 256'), any other with its factor ('iodepth=16')."""
    if is_option_factor(factor):
        return shown(level)
    return f"{factor.rpartition('.')[2] if factor.startswith('zfs.') else factor}={level}"


def short_names(keys: Sequence[CellKey]) -> list[str]:
    """Each key's name, as short as this context allows: the target where targets
    differ, the levels of the factors that vary, the job where jobs differ — 'data=journal'
    where every cell is ext4 and only a mount option varies. Keys that would read alike
    get their full names."""
    if not keys:
        return []
    targets = {key.target for key in keys}
    jobs = {key.job for key in keys}
    varying = {factor for factor in {f for key in keys for f, _ in key.levels}
               if len({key.level_dict.get(factor) for key in keys}) > 1}
    names = []
    for key in keys:
        parts = [key.target] if len(targets) > 1 else []
        parts += [level_label(f, v) for f, v in key.levels if f in varying]
        parts += [key.job] if len(jobs) > 1 else []
        names.append(" ".join(parts) or (key.target if len(keys) == 1 else key.label()))
    if len(set(names)) < len(set(keys)):
        return [key.label() for key in keys]
    return names


def keys_of(frame: Any, factors: Sequence[str]) -> list[CellKey]:
    """The key of each row of a table with the columns target_base, job and `factors`
    (a factor's empty cell: it does not apply to that row)."""
    out = []
    columns = [frame[f].tolist() for f in factors]
    for index, (target, job) in enumerate(zip(frame["target_base"].astype(str),
                                              frame["job"].astype(str), strict=True)):
        levels = tuple((f, str(values[index])) for f, values in zip(factors, columns,
                                                                     strict=True)
                       if _present(values[index]))
        out.append(CellKey(target, job, levels))
    return out


def _present(value: Any) -> bool:
    return value is not None and not (isinstance(value, float) and math.isnan(value))


# What a factor varies: a target's (a fresh file system each level) or a job's (measured
# in the same rounds). The plan records each in campaign.toml's [factors]; a campaign from
# before that table has its target options known by their names.
TARGET, JOB = "target", "job"
LEGACY_TARGET_FACTORS = ("mount_options", "mkfs_options", "scale")


def factor_scopes(recorded: Mapping[str, str], factors: Sequence[str]) -> dict[str, str]:
    """{factor: 'target' or 'job'} as the campaign recorded it (campaign.toml's
    [factors]: core.campaign_settings.CampaignSettings.scopes)."""
    return {f: str(recorded[f]) if f in recorded else
            (TARGET if f in LEGACY_TARGET_FACTORS or f.startswith("zfs.") else JOB)
            for f in factors}


def target_names(cells: Any, scopes: dict[str, str]) -> dict[str, str]:
    """{target: its name as short as the campaign's targets allow} from a table of cells
    (columns target, target_base, job and the factors of `scopes`): 'data=journal' where
    every target is ext4 and only a mount option varies; 'xfs' where targets differ and
    nothing varies."""
    if len(cells) == 0:
        return {}
    targets = cells.drop_duplicates("target")
    own = [f for f, scope in scopes.items() if scope == TARGET and f in targets]
    found = [CellKey(key.target, "", key.levels) for key in keys_of(targets, own)]
    return dict(zip(targets["target"].astype(str), short_names(found), strict=True))


def path_name(name: str) -> str:
    """A cell's name as a file name (run ids, work directories): spaces and '=' spelled
    with characters every tool takes ('ext4 mount_options=noatime' ->
    'ext4_mount_options-noatime'); a name without levels is its own."""
    return re.sub(r"[^A-Za-z0-9_.+-]", "-", name.replace(" ", "_"))


def workdir_name(workload: str) -> str:
    """The directory a run's files lie in on its target ('fslab-randread_iodepth-8')."""
    return f"fslab-{path_name(workload)}"


# Levels in order ------------------------------------------------------------------------


def declared_levels(settings: Mapping[str, object]) -> dict[str, list[str]]:
    """{factor: levels in the campaign's order} from the resolved campaign.toml: its
    [sweep] table and the lists its [[target]] tables give (plan/sweep.py wrote both as
    the text that names each level)."""
    out: dict[str, list[str]] = {}

    def add(name: str, levels: list[Any]) -> None:
        have = out.setdefault(name, [])
        have += [text for text in map(_text, levels) if text not in have]

    sweep, targets = settings.get("sweep"), settings.get("target")
    for name, levels in (sweep.items() if isinstance(sweep, dict) else ()):
        if isinstance(levels, list) and len(levels) > 1:
            add(str(name), levels)
    for entry in (targets if isinstance(targets, list) else ()):
        if not isinstance(entry, dict):
            continue
        for key in TABLE_FACTORS:
            if isinstance(entry.get(key), list):
                add(key, entry[key])
        mkfs = entry.get("mkfs_options")
        if isinstance(mkfs, list) and any(isinstance(v, list) for v in mkfs):
            add("mkfs_options", mkfs)
        options = entry.get("options")
        for key, value in (options.items() if isinstance(options, dict) else ()):
            if isinstance(value, list):
                add(f"zfs.{key}", value)
    return out


# The [[target]] fields whose list of levels is a factor of that name (plan/target_entries:
# the zfs pool's fields are targets/zfs_pool.POOL_FIELDS).
TABLE_FACTORS = ("mount_options", "scale", "layout", "devices", "log_size", "cache_size",
                 "arc_max")


def _text(value: Any) -> str:
    if isinstance(value, list):
        return " ".join(map(_text, value))
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def ordered(levels: list[str], declared: list[str] | None) -> list[str]:
    """The levels present, in the campaign's order; others after, numbers ascending."""
    present = list(dict.fromkeys(str(v) for v in levels))
    first = [v for v in (declared or []) if v in present]
    rest = sorted((v for v in present if v not in first), key=_sort_key)
    return first + rest


def levels_key(levels: Iterable[Level]) -> tuple[tuple[int, float, str], ...]:
    """A cell's levels as a sort key: numbers ascending (4 before 16), words
    alphabetically."""
    return tuple(_sort_key(level) for _, level in levels)


def _sort_key(text: str) -> tuple[int, float, str]:
    number = numeric(text)
    return (0, number, "") if math.isfinite(number) else (1, 0.0, text)


def numeric(text: str) -> float:
    """A level as a number ('8' -> 8.0, '16k' -> 16384.0), NaN when it is not one."""
    try:
        return float(text)
    except (TypeError, ValueError):
        pass
    try:
        return float(parse_size(str(text)))
    except UserError:
        return math.nan


def is_numeric(levels: list[str]) -> bool:
    """Whether every level is a number (a factor drawn on an axis, not as categories)."""
    return bool(levels) and all(math.isfinite(numeric(v)) for v in levels)
