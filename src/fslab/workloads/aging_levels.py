"""Aging levels: what a campaign's `age = [...]` factor names, and `fslab age
--as-published`'s settings. A level is an aging recipe with its settings, each value with
where it comes from (workloads/provenance.py), as every preset's are.

    fresh        no aging: a new file system, as every campaign makes
    interleaved  fslab's creation-order aging (aging/recipes.py)
    versioned    fslab's git-pull-like versions, until 3× the capacity is written
    mix          fslab's fs-drift-like operation mix at 80 % (aging/engine.py)
    large-80     fslab's large-file aging: files grown by appends to several MiB, at 80 %
    thesis-80    the aging of "The effects of age on file system performance" (Petrovič,
    thesis-99    2017): fs-drift's operation mix, a Gaussian file choice with a moving
                 centre, log-normal sizes, fstrim at each probe, at 80 % or 99 %

    twin-LEVEL   made by fslab, never named by a campaign: a fresh file system of the
                 same kind, size and options holding a copy of LEVEL's aged tree (the
                 same files copied in order, laid out fresh: Conway et al., FAST '17),
                 the fresh side of LEVEL for workloads that read or rewrite the aged
                 files (`reads_tree`: scan, agedfiles); workloads that need no tree keep
                 the plain `fresh` file system (runs_at)

A campaign changes a level's settings or adds levels of its own in `[age_levels.NAME]`
(keys: aging/config.AgingConfig's fields and the RELATIVE ones below); a value it sets is
the campaign's. The aging layer turns a level into an aging config for one file system
(aging/levels.py): the RELATIVE settings scale with its capacity there. This module is
data: the plan checks a campaign's levels against it before anything is formatted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fslab.core.age_factor import FRESH, TWIN, twin_level, twinned
from fslab.core.errors import UserError
from fslab.workloads.provenance import STUDIES, Param, campaign, fslab, study

RECIPES = ("mix", "interleaved", "versioned")  # aging/engine.py, aging/recipes.py
# A level's settings that scale with the file system aged (aging/levels.py resolves them).
RELATIVE = {
    "ops_per_gib": "the stop: this many operations per GiB of capacity",
    "files_per_gib": "the file indices (max_files) per GiB of capacity",
    "probes": "fragmentation probes over the run, evenly spaced (and one at the end)",
    "fstrim_at_probes": "fstrim at every probe",
}
# The aging config's own settings (aging/config.AgingConfig; a test holds them equal).
CONFIG_KEYS = frozenset({
    "seed", "ops", "duration_s", "bytes_limit", "stop_file", "pause_file", "mix",
    "fsync_probability", "fdatasync_probability", "max_files", "file_choice", "center",
    "stddev", "velocity", "sizes", "mu", "sigma", "pareto_alpha", "size", "size_max",
    "io_size", "levels", "dirs_per_level", "utilization", "low_water", "finish_full",
    "check_every",
    "fstrim_every", "fstrim_seconds", "probe_every", "recipe", "written", "layout_target",
    "plateau", "plateau_probes", "tree_files", "piece", "fill", "version_change",
    "version_add", "version_delete"})
SETTING_KEYS = CONFIG_KEYS | frozenset(RELATIVE)
PROBES = 20  # probes over a level's aging: the free-space heat map's columns


@dataclass(frozen=True)
class AgeLevel:
    """One level: its name, what it is, its settings with their sources, the study it
    reproduces and what this machine cannot reproduce of it (one line each)."""

    name: str
    description: str
    settings: dict[str, Param]
    study: str | None = None
    cannot: tuple[str, ...] = ()

    def values(self) -> dict[str, Any]:
        return {key: param.value for key, param in self.settings.items()}

    def to_json(self) -> dict[str, Any]:
        """The level for `fslab presets --json`: every setting with its source."""
        return {"description": self.description,
                **({"study": self.study, "cite": STUDIES[self.study].cite}
                   if self.study else {}),
                "settings": {key: param.to_json() for key, param in self.settings.items()},
                "cannot_here": list(self.cannot)}


_OURS = fslab("fslab's recipe at a campaign's scale")
_PROBED = Param(PROBES, fslab("enough columns for the free-space heat map"))
_FULL = Param(True, fslab(
    "equal fullness: after its operations, new files (the level's sizes) fill the file "
    "system up to the utilisation, so every file system ends the level equally full of "
    "the space root can write (a mix hovers between its low-water mark and the "
    "utilisation, and ends anywhere between)"))

T = "aging-thesis"
_CHOICE = "section 4.4: fs-drift's 'gaussian' file choice, centre at index 0"
_THESIS_MIX = {"create": 4, "append": 3, "random_write": 3, "truncate": 2, "delete": 2,
               "read": 1, "random_read": 1}


def _thesis(percent: int) -> AgeLevel:
    """The thesis's aging at one of its two utilisations (section 7.4)."""
    share = percent / 100
    return AgeLevel(
        name=f"thesis-{percent}",
        description=(f"the aging thesis's fs-drift aging at {percent} % utilisation: its "
                     "seven operations, layout-changing ones weighed more, a Gaussian file "
                     "choice whose centre moves, log-normal file sizes, random deletions "
                     "above the utilisation, fstrim and a probe at each pause, stopped by an "
                     "operation count"),
        study=T,
        settings={
            "recipe": Param("mix", study(T, "section 5.1: 'fs-drift was used as a mean of "
                                            "bringing file systems to an aged, fragmented "
                                            "state'")),
            "mix": Param(dict(_THESIS_MIX), fslab(
                "section 5.1: 'all available file operations are used, with more weight "
                "placed on layout alternating operations (create, delete, truncate, "
                "append, random write)' — the seven of its Table 7.1; it gives no weights")),
            "file_choice": Param("gaussian", study(T, _CHOICE + "; section 6.1: 'reset to "
                                                      "gauss, so the distribution of file "
                                                      "access is more similar to file "
                                                      "system aging test'")),
            "center": Param(0.0, study(T, _CHOICE + ", indices modulo the maximal number of "
                                                    "files (Figure 4.1)")),
            "stddev": Param(0.1, fslab("fs-drift's gaussian-stddev: the thesis gives none; a "
                                       "tenth of the file indices")),
            "velocity": Param(0.1, fslab("section 4.4: the centre moves by mean-velocity each "
                                         "tick ('moving random distribution'); the thesis "
                                         "gives no value: 0.1 file index per operation")),
            "sizes": Param("lognormal", study(T, "section 4.4.1: 'log-normal distribution "
                                                 "was modeled' after Agrawal et al.'s file "
                                                 "sizes")),
            "mu": Param(9.48, fslab("ln bytes: Agrawal et al. (FAST '07) as fslab's aged "
                                    "files; the thesis prints no parameters")),
            "sigma": Param(2.46, fslab("as mu")),
            "size_max": Param(16 * 1024**2, fslab("a cap on one file: 16 MiB")),
            "utilization": Param(share, study(T, f"section 7.4: "
                                                 f"{'medium' if percent < 90 else 'high'} "
                                                 f"file system utilisation ({percent}%)")),
            "low_water": Param(round(share - 0.03, 2), fslab(
                "section 5.3: above the limit 'specified amount of space is randomly "
                "released', the amount not given: 3 % of the capacity")),
            "finish_full": _FULL,
            "ops_per_gib": Param(100_000, fslab(
                "section 5.1: 'testing length by operation count is used', the count not "
                "given: 100,000 per GiB fill the file system in about a third of the run")),
            "files_per_gib": Param(10_000, study(T, "section 5.1: 'maximum number of files "
                                                    "and mean size of file should be defined "
                                                    "such that the product is greater than "
                                                    "the available space' (about twice)")),
            "probes": Param(PROBES, study(T, "section 5.3: the worker 'wakes up at specified "
                                             "intervals', pauses fs-drift and logs free space "
                                             "fragmentation and usage (20: fslab's count)")),
            "fstrim_at_probes": Param(True, study(T, "section 5.3: 'If the test runs on an "
                                                     "SSD, fstrim can be optionally called'; "
                                                     "7.7: every SSD result 'had regular "
                                                     "trimming scheduled'")),
            "fsync_probability": Param(0.01, fslab("section 6.1: the aging test fsyncs 'from "
                                                   "time to time', no rate given")),
            "levels": Param(2, fslab("fs-drift's directory levels: the thesis gives none")),
            "dirs_per_level": Param(10, fslab("as levels")),
        },
        cannot=("the thesis aged HDDs and SSDs (section 7.1); here a loop image on this "
                "machine's virtual disk, whose speed and layout costs are not theirs",
                "fs-drift ran paused for each probe and release (section 5.3); fslab's "
                "engine probes and releases between its operations, the same steps"),
    )


_LARGE = fslab("fslab's large-file level: files a sequential O_DIRECT pass reaches "
               "(agedfiles' aged_largeread, aged_largerewrite)")


def _large(percent: int) -> AgeLevel:
    """Files of several MiB, grown by appends among their neighbours: layout that a
    sequential read of whole files reaches, aged with the thesis's engine."""
    share = percent / 100
    return AgeLevel(
        name=f"large-{percent}",
        description=(f"fslab's large-file aging at {percent} % utilisation: about a hundred "
                     "files per 512 MiB, created at 256 KiB–1 MiB and grown by 64 KiB "
                     "appends (fsynced one time in ten) among their neighbours to several "
                     "MiB, rewritten, truncated and deleted now and then, under a Gaussian "
                     "file choice whose centre moves; fstrim and a probe at each pause"),
        settings={
            "recipe": Param("mix", _LARGE),
            "mix": Param({"create": 2, "append": 14, "random_write": 2, "truncate": 1,
                          "delete": 1, "read": 1}, _LARGE),
            "file_choice": Param("gaussian", _LARGE), "center": Param(0.0, _LARGE),
            "stddev": Param(0.1, _LARGE), "velocity": Param(0.01, _LARGE),
            "sizes": Param("uniform", _LARGE), "size": Param(256 * 1024, _LARGE),
            "size_max": Param(1024 * 1024, _LARGE),
            "utilization": Param(share, _LARGE),
            "low_water": Param(round(share - 0.03, 2), _LARGE), "finish_full": _FULL,
            "ops_per_gib": Param(24_000, _LARGE), "files_per_gib": Param(200, _LARGE),
            "probes": _PROBED, "fstrim_at_probes": Param(True, _LARGE),
            "fsync_probability": Param(0.1, _LARGE)})


LEVELS: dict[str, AgeLevel] = {level.name: level for level in (
    AgeLevel(FRESH, "no aging: a new file system", {}),
    AgeLevel("interleaved", "a source-like tree grown 4 KiB per file per round, shuffled, "
             "synced each round (creation-order aging)",
             {"recipe": Param("interleaved", _OURS), "probes": _PROBED}),
    AgeLevel("versioned", "a tree written in order, then git-pull-like versions until 3× "
             "the capacity is written",
             {"recipe": Param("versioned", _OURS), "written": Param(3.0, _OURS),
              "probes": _PROBED}),
    AgeLevel("mix", "fslab's fs-drift-like operation mix at 80 % utilisation",
             {"recipe": Param("mix", _OURS), "utilization": Param(0.8, _OURS),
              "finish_full": _FULL,
              "ops_per_gib": Param(100_000, _OURS), "files_per_gib": Param(10_000, _OURS),
              "probes": _PROBED}),
    _thesis(80),
    _thesis(99),
    _large(80),
)}


def planned_ops(level: AgeLevel, capacity: int) -> int | None:
    """The operations a level's aging stops at on `capacity` bytes (None: its stop is
    not a count)."""
    values = level.values()
    if values.get("ops_per_gib"):
        return max(100, round(float(values["ops_per_gib"]) * capacity / 1024**3))
    return int(values["ops"]) if values.get("ops") else None


def campaign_level(name: str, given: dict[str, Any]) -> AgeLevel:
    """A level as a campaign gives it (`[age_levels.NAME]`): a built-in level's settings
    with the campaign's over them, or a level of its own (default recipe: interleaved)."""
    where = f"age_levels.{name}"
    unknown = sorted(set(given) - SETTING_KEYS)
    if unknown:
        raise UserError(f"{where}: unknown aging setting {', '.join(unknown)} (known: an "
                        f"aging config's keys and {', '.join(RELATIVE)})")
    if name == FRESH:
        raise UserError(f"{where}: fresh is no aging and has no settings")
    if twinned(name):
        raise UserError(f"{where}: a level named {TWIN}… is the fresh twin fslab makes of "
                        "an aged level: name yours otherwise")
    recipe = given.get("recipe")
    if recipe is not None and recipe not in RECIPES:
        raise UserError(f"{where}: unknown aging recipe {recipe!r} (known: "
                        f"{', '.join(RECIPES)})")
    base = LEVELS.get(name)
    settings = dict(base.settings) if base else {
        "recipe": Param("interleaved", campaign("a level of the campaign's own, its recipe "
                                                "not given")), "probes": _PROBED}
    settings.update({key: Param(value, campaign("set in the campaign's [age_levels]"))
                     for key, value in given.items()})
    return AgeLevel(name, base.description if base else f"the campaign's own level {name}",
                    settings, base.study if base else None, base.cannot if base else ())


def age_levels(given: dict[str, dict[str, Any]]) -> dict[str, AgeLevel]:
    """Every level a campaign may name: the built-in ones and its own, its settings over
    theirs."""
    out = dict(LEVELS)
    for name, settings in given.items():
        if not isinstance(settings, dict):
            raise UserError(f"age_levels.{name}: a table of aging settings, e.g. "
                            "[age_levels.churn] recipe = \"mix\"")
        out[name] = campaign_level(name, settings)
    return out


def check_levels(levels: tuple[str, ...], given: dict[str, dict[str, Any]]) -> None:
    """Refuse, in one line, a level of `age` neither fslab nor the campaign defines."""
    known = age_levels(given)
    for level in levels:
        if twinned(level):
            raise UserError(f"--sweep age: {level!r} is the fresh twin fslab makes of "
                            f"{twinned(level)} when a workload reads the aged tree: sweep "
                            f"age = [\"fresh\", \"{twinned(level)}\"]")
        if level not in known:
            raise UserError(f"--sweep age: unknown level {level!r} (known: "
                            f"{', '.join(known)}; a level of your own: [age_levels.{level}] "
                            "with recipe = \"mix\", \"interleaved\" or \"versioned\" and its "
                            "settings)")


def with_twins(levels: tuple[str, ...], reads_tree: bool) -> tuple[str, ...]:
    """The levels a campaign's `age` factor runs: its own and, when a workload reads the
    aged tree and `fresh` is among them, each aged level's twin (after them, in order)."""
    if not reads_tree or FRESH not in levels:
        return levels
    return (*levels, *(twin_level(level) for level in levels if level != FRESH))


def runs_at(level: str, reads_tree: bool, twins: bool) -> bool:
    """Whether a workload runs on a file system at this level of `age` ('' : no level):
    one that reads the aged tree runs on aged levels and their twins, never on a plain
    fresh file system where twins stand for it; one that needs no tree runs on fresh
    and aged levels, never on a twin."""
    if twinned(level):
        return reads_tree
    return not (reads_tree and twins and level == FRESH)
