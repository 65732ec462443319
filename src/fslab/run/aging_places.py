"""Age as a factor (`[sweep] age = ["fresh", "thesis-80", …]`): a target variant at an
aged level is aged after it is made and before its runs, as one more step of making it.

- By default each place is aged on its own (a fresh file system per iteration, each aged
  anew): the aging's randomness is part of what the iterations vary, so an interval over
  them includes it. The seed is the campaign's, the level's and the iteration's: every
  file system of one iteration gets the same operations (their contrast is about the
  file systems, not about two draws of the aging), another iteration other ones.
- With `age_reuse = true`, each target × level is aged once before the runs (its image
  kept in DIR/aged/<target>/, as a target's `age = {...}` is) and every place restores a
  private copy of it: quick, and its intervals hold for that one aged image.

- An aged level's fresh twin (`twin-LEVEL`, made when a workload reads the aged tree:
  workloads/aging_levels.py) is a fresh file system of the same kind, size and options
  holding a copy of that iteration's aged tree, copied as `fresh_copy_of` copies
  (targets/loopfs.copy_tree: Conway et al., FAST '17) right after the aging, before any
  run touches it: the aged place and its twin are made together, whichever of their runs
  comes first (its run carries both makings' seconds). With age_reuse the twin is a
  fresh copy of the image aged once.
- The `fstrim` factor (`[sweep] fstrim = [true, false]`) trims the aging at its probes
  (the thesis's section 7.7) or not at all, whatever the level says, and the runs before
  each run (run/around_run.py).

The aging's seconds are a step of the run the place was made for (core/stopwatch.AGE), so
machine time, `needs … about N s` and the progress lines include them; what the aging did
goes into that run's metadata (`aging`: the figures' summary) and, in short, into the
description of the place every run on it records. An aging that stopped short of its
level's utilisation fails its place's runs (core/failures.AGING) with the reason and the
campaign goes on; one that ran out of space before it is measured as full, and says so.
"""

from __future__ import annotations

import dataclasses
import hashlib
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from fslab.aging.age import age, run_dir
from fslab.aging.levels import level_config, parameters, with_fstrim
from fslab.aging.per_place import age_place
from fslab.core import stopwatch
from fslab.core.age_factor import AGE, FRESH, twin_level, twinned
from fslab.core.cell_keys import cell_name, path_name
from fslab.core.failures import Failure
from fslab.host import system
from fslab.host.space import root_space
from fslab.parsers.aging_kind import AGING
from fslab.parsers.raw_files import DirFiles
from fslab.run.rounds import NotReady
from fslab.targets import Mounted, TargetSpec
from fslab.targets.base import AGE_LEVEL
from fslab.targets.images import FILE_NAMES
from fslab.targets.loopfs import copy_tree
from fslab.workloads.agedfiles import AGED_TREE
from fslab.workloads.aging_levels import AgeLevel, age_levels

if TYPE_CHECKING:
    from fslab.core.record import RunRecord
    from fslab.host.lab import Lab
    from fslab.plan.order import Plan, RunSpec
    from fslab.plan.schema import Campaign
    from fslab.results.store import ResultsDir

AGED_DIR = "aged"  # DIR/aged/<target>/i<iteration>/ (reused: DIR/aged/<target>/)


def aging_seed(seed: int, level: str, iteration: int) -> int:
    """The aging's seed: the campaign's, the level's and the iteration's (0: once)."""
    digest = hashlib.blake2b(f"{seed}/{level}/{iteration}".encode(), digest_size=4).digest()
    return int.from_bytes(digest, "little") % 2**31


def aged_level(spec: TargetSpec, levels: dict[str, AgeLevel]) -> AgeLevel | None:
    """The level a target is aged to (None: fresh, a twin, the simulator, no `age`
    factor)."""
    name = str(spec.options.get(AGE_LEVEL, ""))
    if not name or name == FRESH or twinned(name) or spec.fs == "null":
        return None
    return levels[name]


def twin_of(spec: TargetSpec) -> str:
    """The aged level whose tree a twin holds ('' : not a twin, or the simulator's)."""
    return "" if spec.fs == "null" else twinned(str(spec.options.get(AGE_LEVEL, ""))) or ""


def fstrim_factor(spec: TargetSpec) -> bool | None:
    """The `fstrim` factor's level of a target (None: not swept, the level decides)."""
    found = spec.options.get("fstrim")
    return None if found is None else bool(found)


def measured_together(run: RunSpec) -> tuple[str, str, tuple[tuple[str, str], ...]] | None:
    """What gathers a tree workload's runs on an aged level and on its twin, every file
    system's, into one group (None for any other run): their places are made first (the
    agings, the twins), then the runs follow one another in a shuffled order, so the runs
    one answer compares share the disk's moment, not an iteration's drift — runs measured
    in one piece cannot be interleaved in rounds as a fio job's slices are."""
    level = str(run.target.options.get(AGE_LEVEL, ""))
    if not (run.workload.reads_tree and level and level != FRESH):
        return None
    return (run.job_name, twinned(level) or level,
            tuple(lv for lv in run.target.levels if lv[0] != AGE))


def room_for(runs: list[RunSpec], spec: TargetSpec) -> int:
    """The most the runs on an aged place and on its twin need at once (a job's variants
    lie on it together): the room made right after its aging (aging/room.py)."""
    names = {spec.name, partner_name(spec)}
    together: dict[tuple[str, str], dict[str, int]] = {}
    for run in runs:
        if run.target.name in names:
            job = together.setdefault((run.target.name, run.job_name), {})
            job[run.workload.name] = run.workload.required_bytes()
    return max((sum(job.values()) for job in together.values()), default=0)


def partner_name(spec: TargetSpec) -> str:
    """An aged variant's twin, or a twin's aged variant: the same target and levels, its
    level of `age` the other side ('' for anything else)."""
    level = str(spec.options.get(AGE_LEVEL, ""))
    other = twinned(level) or (twin_level(level) if level and level != FRESH else "")
    if not other:
        return ""
    return cell_name(spec.base, [(factor, other if factor == AGE else value)
                                 for factor, value in spec.levels])


def check_levels(targets: list[TargetSpec], campaign: Campaign) -> None:
    """Every aged level's settings, as an aging config of each target (one line each;
    before anything is formatted)."""
    levels = age_levels(campaign.age_levels)
    for spec in targets:
        level = aged_level(spec, levels)
        if level is not None:
            level_config(level, spec.size, 0)


@dataclass
class Ager:
    """Ages the places of a campaign's aged target variants and fills their twins
    (module doc)."""

    campaign: Campaign
    results: ResultsDir
    runs: list[RunSpec] = field(default_factory=list)  # the plan's
    levels: dict[str, AgeLevel] = field(default_factory=dict)
    # run_id -> (the place's `aging` description, the figures' summary of its aging)
    summaries: dict[str, tuple[dict[str, object], Mapping[str, object]]] = field(
        default_factory=dict)
    reused: set[str] = field(default_factory=set)  # targets whose one aging was recorded
    _first: dict[tuple[int, str], RunSpec] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.levels = age_levels(self.campaign.age_levels)
        for run in self.runs:
            self._first.setdefault((run.iteration, run.target.name), run)


    def partner(self, run: RunSpec) -> RunSpec | None:
        """The first run, in `run`'s iteration, on the other one of an aged place and its
        twin, when the two are made together (not with age_reuse: the twin then copies
        the image aged once)."""
        if self.campaign.age_reuse:
            return None
        name = partner_name(run.target)
        return self._first.get((run.iteration, name)) if name else None

    def fill_twin(self, run: RunSpec, place: Mounted, aged: Mounted) -> None:
        """Copy the aged place's tree, as its aging left it, into its twin just made."""
        assert place.path is not None and aged.path is not None

        start = time.perf_counter()
        with stopwatch.step(stopwatch.AGE):
            copy_tree(aged.path / AGED_TREE, place.path)
            system.sync_file_system(place.path)
        capacity = place.description.details.get("root_capacity")
        found = root_space(place.path, capacity if isinstance(capacity, int) else None)
        place.description = place.description.with_(aging={
            "level": str(run.target.options.get(AGE_LEVEL, "")),
            "twin_of": partner_name(run.target), "copied_from": str(aged.path / AGED_TREE),
            "copy_seconds": round(time.perf_counter() - start, 3),
            "used_end": found.fill if found is not None else None,
            "how": "cp -a of the aged tree onto a fresh file system (Conway et al., FAST "
                   "'17): the same files in the same directories, laid out fresh"})

    def age(self, run: RunSpec, place: Mounted) -> None:
        """Age the place just made for `run` at its target's level (nothing for a fresh
        one, or one restored from an image aged once); NotReady when the aging stopped
        short of its level."""
        spec = run.target
        level = aged_level(spec, self.levels)
        if level is None or place.path is None:
            return
        if spec.options.get("image"):  # age_reuse: a copy of the image aged once
            described: dict[str, object] = {
                "level": level.name, "reused": True, "image": spec.options["image"],
                "not_here": list(level.cannot)}
            place.description = place.description.with_(aging=described)
            if spec.name not in self.reused:  # its figures once, with its first place
                self.reused.add(spec.name)
                self.summaries[run.run_id] = (described,
                                              reused_summary(Path(spec.options["image"])))
            return

        out = self.results.path / AGED_DIR / path_name(spec.name) / f"i{run.iteration:03d}"
        with stopwatch.step(stopwatch.AGE):
            aged = age_place(place, level, spec.size,
                             aging_seed(self.campaign.seed, level.name, run.iteration), out,
                             fstrim_factor(spec), room_for(self.runs, spec))
        described = aged.to_json()
        place.description = place.description.with_(aging=described)
        self.summaries[run.run_id] = (described, {"iteration": run.iteration,
                                                  **aged.figures})
        if aged.short:  # a level it cannot reach is said, never measured as reached
            raise NotReady(f"aging {spec.name}: {aged.why}", place.description,
                           failure=Failure.AGING)

    def summary_of(self, run_id: str) -> dict[str, object] | None:
        """What the aging of the place made for `run_id` did (its metadata `aging`): the
        place's description of it as it is now (room made since included) and the
        figures' summary."""
        found = self.summaries.pop(run_id, None)
        return {**found[0], **found[1]} if found is not None else None


def ager_of(plan: Plan, results: ResultsDir) -> Ager | None:
    """The campaign's ager when a target of its plan is at an aged level."""
    levels = age_levels(plan.campaign.age_levels)
    if not any(aged_level(spec, levels) for spec in plan.targets):
        return None
    return Ager(plan.campaign, results, plan.runs)


def aging_text(record: RunRecord | None) -> str:
    """'; aged to thesis-80 in 12.3 s, 80.2 % used' for the run a place was aged for (the
    fill it ended at)."""
    aging = record.workload_metadata.section("aging") if record is not None else {}
    if aging.get("reused") or "seconds" not in aging:
        return ""
    used = aging.get("used_end", aging.get("used_max"))  # where it ended (its level)
    shown = f", {float(used):.1%} used" if isinstance(used, int | float) else ""
    return f"; aged to {aging.get('level')} in {float(aging['seconds']):.1f} s{shown}"


def reused_summary(image: Path) -> Mapping[str, object]:
    """The figures' summary of the aging that made a reused image (its directory's
    runs/aging/, parsed again: on a resume it was made by an earlier sitting)."""
    try:
        return dict(AGING.parse(DirFiles(run_dir(image.parent))).metadata.get("aging", {}))
    except (OSError, ValueError, KeyError):
        return {}


def age_once(targets: list[TargetSpec], campaign: Campaign, lab: Lab,
             results: ResultsDir, runs: list[RunSpec]) -> list[str]:
    """age_reuse: age each aged target variant once (or take its finished aging on a
    resume) and start its places from a copy of that image; one line per aging done."""
    if not campaign.age_reuse:
        return []

    levels = age_levels(campaign.age_levels)
    done = []
    for spec in targets:
        level = aged_level(spec, levels)
        if twin_of(spec):  # a fresh copy of the image its aged variant is aged into
            partner = partner_name(spec)
            spec.options["fresh_copy_of"] = str(results.path / AGED_DIR / path_name(partner)
                                                / FILE_NAMES["sparse"])
        if level is None:
            continue
        out = results.path / AGED_DIR / path_name(spec.name)
        image = out / FILE_NAMES["sparse"]
        if not (image.exists() and (out / "image.json").exists()):
            import shutil

            shutil.rmtree(out, ignore_errors=True)  # an interrupted aging starts over
            config = with_fstrim(level_config(level, spec.size,
                                              aging_seed(campaign.seed, level.name, 0)),
                                 fstrim_factor(spec))
            plain = dataclasses.replace(spec, options={k: v for k, v in spec.options.items()
                                                       if k != AGE_LEVEL})
            record = age(plain, config, out, lab, image="sparse",
                         parameters=parameters(level, config, fstrim_factor(spec)),
                         room=room_for(runs, spec))
            done.append(f"aged {spec.name} once ({level.name}): {record.ops_succeeded} "
                        f"operations, stopped by {record.stopped_by} ({out})")
        spec.options["image"] = str(image)
    return done
