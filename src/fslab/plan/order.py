"""The plan: which run happens when. Pure: campaign in, ordered run specs out."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from fslab.core.age_factor import FRESH, twinned
from fslab.core.campaign_settings import LookCell
from fslab.core.cell_keys import CellKey, Level, path_name
from fslab.core.errors import UserError
from fslab.core.units import format_bytes, format_duration
from fslab.plan.schema import MAX_FILL, Campaign
from fslab.plan.sweep import WorkloadVariant, target_variants, workload_variants
from fslab.targets import IMAGE_LESS, TargetSpec
from fslab.targets.base import AGE_LEVEL
from fslab.workloads.aging_levels import runs_at
from fslab.workloads.base import Workload
from fslab.workloads.fio import FioWorkload


@dataclass(frozen=True)
class RunSpec:
    """One run: a workload on a target in one iteration, at a place in the order."""

    iteration: int
    position: int
    target: TargetSpec
    workload: Workload
    # The workload's own levels (a sweep's fio options: plan/sweep.py; the target's are
    # its own) and the job they vary: runs of one job are measured in the same rounds.
    workload_levels: tuple[Level, ...] = ()
    job: str = ""  # "" only where a run is built by hand: then the workload is its job

    @property
    def run_id(self) -> str:
        """Stable across re-plans of the same campaign, so resume can match runs."""
        return (f"i{self.iteration:03d}-{path_name(self.target.name)}-"
                f"{path_name(self.workload.name)}")

    @property
    def levels(self) -> dict[str, str]:
        """Every factor's level of this run's cell: its target's, then its workload's."""
        return dict((*self.target.levels, *self.workload_levels))

    @property
    def job_name(self) -> str:
        """The run's job: what it is measured together with (every level of it)."""
        return self.job or self.workload.name

    @property
    def cell(self) -> CellKey:
        """The run's cell as fields (core/cell_keys.py)."""
        return CellKey(self.target.base, self.job_name,
                       (*self.target.levels, *self.workload_levels))


@dataclass
class Plan:
    """All runs of a campaign in execution order, grouped by iteration."""

    campaign: Campaign
    runs: list[RunSpec]
    targets: list[TargetSpec]  # every target the runs use (a sweep's variants each)
    workloads: list[str] = field(default_factory=list)  # every workload's name, in order

    @property
    def cells(self) -> list[tuple[str, str]]:
        """(target, workload) of every cell, in the campaign's order (a cell the plan
        does not run — a workload that reads the aged tree on a plain fresh file system
        its twins stand for — left out)."""
        ran = {(run.target.name, run.workload.name) for run in self.runs}
        return [(t.name, w) for t in self.targets for w in self.workloads
                if (t.name, w) in ran]

    def iteration(self, number: int) -> list[RunSpec]:
        return [run for run in self.runs if run.iteration == number]


def make_plan(campaign: Campaign, workloads: list[Workload] | None = None) -> Plan:
    """Shuffle (target, workload) pairs within each iteration with the campaign's seed.

    The shuffle spreads slow drifts of the machine (thermal, background work, a filling
    disk) over all cells instead of letting them land on whichever target runs last.
    A sweep's variants of targets and workloads are cells like any other (plan/sweep.py).
    """
    if workloads is None:
        variants = workload_variants(campaign)
        targets = target_variants(campaign, variants)
    else:  # a plan of its own (the ceiling's): these workloads on the targets as they are
        variants, targets = [WorkloadVariant(w, w.name) for w in workloads], campaign.targets
    chosen = {cell.unordered for cell in campaign.cells}  # a design's cells (tune/)
    if chosen:
        targets = [t for t in targets if any(_cell(t, v).unordered in chosen for v in variants)]
    rng = random.Random(campaign.seed)
    runs: list[RunSpec] = []
    twinned_targets = {t.base for t in targets
                       if twinned(str(t.options.get(AGE_LEVEL, "")))}
    for iteration in range(1, campaign.iterations + 1):
        pairs = [(target, variant) for target in targets for variant in variants
                 if (not chosen or _cell(target, variant).unordered in chosen)
                 and runs_at(str(target.options.get(AGE_LEVEL, "")),
                             variant.workload.reads_tree, target.base in twinned_targets)]
        rng.shuffle(pairs)
        if iteration < campaign.first_iteration:
            continue  # shuffled all the same: each iteration's order is the seed's
        wanted = resolving(campaign, iteration)
        if wanted is not None:  # a round of --resolve: only the cells it measures
            pairs = [(t, _at_length(campaign, v, wanted[(t.name, v.workload.name)].runtime))
                     for t, v in pairs if (t.name, v.workload.name) in wanted]
        runs += [RunSpec(iteration, position, target, variant.workload, variant.levels,
                         variant.job)
                 for position, (target, variant) in enumerate(pairs)]
    return Plan(campaign, runs, targets, [v.workload.name for v in variants])


def _cell(target: TargetSpec, variant: WorkloadVariant) -> CellKey:
    return CellKey(target.base, variant.job, (*target.levels, *variant.levels))


def resolving(campaign: Campaign, iteration: int) -> dict[tuple[str, str], LookCell] | None:
    """The cells a round of --resolve measures in `iteration`, by (target, workload)
    (None: every cell, the campaign's own iterations up to its first look)."""
    looks = campaign.looks
    if not looks or iteration <= looks[0]:
        return None
    for number, cells in enumerate(campaign.look_cells):
        if looks[number] < iteration <= looks[min(number + 1, len(looks) - 1)]:
            return {(cell.target, cell.workload): cell for cell in cells
                    if iteration <= cell.last}
    return {}


def _at_length(campaign: Campaign, variant: WorkloadVariant, runtime: int) -> WorkloadVariant:
    """The variant as a round of --resolve measures it: at `runtime` seconds where the round
    chose a run length of its own (0: the campaign's)."""
    if not runtime or runtime == campaign.runtime:
        return variant
    longer = _variants_at(campaign, runtime)
    return longer.get(variant.workload.name, variant)


def _variants_at(campaign: Campaign, runtime: int) -> dict[str, WorkloadVariant]:
    import dataclasses

    return {v.workload.name: v for v in workload_variants(
        dataclasses.replace(campaign, runtime=runtime))}


def check_space(plan: Plan) -> None:
    """Refuse, before formatting anything, a workload whose files cannot fit an image."""
    # A job's variants lie on a target together (laid out before their rounds).
    together: dict[tuple[str, str], dict[str, int]] = {}
    for run in plan.iteration(1):
        if run.target.fs in IMAGE_LESS or run.target.device:
            continue
        cell = together.setdefault((run.target.name, run.job_name), {})
        cell[run.workload.name] = run.workload.required_bytes()
    for (target_name, job), needs in together.items():
        target = next(t for t in plan.targets if t.name == target_name)
        need = sum(needs.values())
        room = int(target.size * MAX_FILL)
        if need > room:
            what = (f"workload {job}" if len(needs) == 1 else
                    f"workload {job}'s {len(needs)} variants (laid out together)")
            raise UserError(
                f"{what} needs {format_bytes(need)} but target "
                f"{target_name} ({format_bytes(target.size)} image) leaves about "
                f"{format_bytes(room)} for files: raise --size or lower --file-size"
            )


# Where a target's files come from besides a fresh mkfs: an aged image, a fresh copy of
# one, an aging of its own (plan/target_entries.py); a directory or the simulator.
TREE_OPTIONS = ("image", "fresh_copy_of", "age")
HAS_TREE_KINDS = ("dir", "null")


def has_tree(target: TargetSpec) -> bool:
    """Whether the target holds files to read before any run writes some: an aged image,
    a fresh copy of one, its own aging, an aged level of `age` or its twin, a directory."""
    level = str(target.options.get(AGE_LEVEL, ""))
    return (any(key in target.options for key in TREE_OPTIONS)
            or target.fs.split(":")[0] in HAS_TREE_KINDS or (bool(level) and level != FRESH))


def check_trees(plan: Plan) -> None:
    """Refuse, before formatting anything, a workload that reads the target's aged tree
    on a target that will hold none (one line: what to give it)."""
    for run in plan.iteration(plan.runs[0].iteration if plan.runs else 1):
        if run.workload.reads_tree and not has_tree(run.target):
            raise UserError(
                f"workload {run.workload.name} reads the aged tree, but target "
                f"{run.target.name} is a fresh file system with no files: start it from "
                "an aged image (image = ...), give it fresh_copy_of = ..., age it (age = "
                "{...}) or sweep age = [\"fresh\", \"thesis-80\"] (each aged level "
                "gets a fresh twin holding its files)")


def measuring_seconds(runs: list[RunSpec]) -> tuple[float, int, int]:
    """(seconds fio measures over `runs`: each job's runtime and ramp, size-based jobs at
    their runtime cap; how many of those are capped; runs whose time only the disk decides:
    file workloads, bonnie++, fio jobs without a runtime)."""
    seconds, capped, unknown = 0.0, 0, 0
    for run in runs:
        workload = run.workload
        expected = workload.expected_seconds() if isinstance(workload, FioWorkload) else None
        if expected is None:
            unknown += 1
            continue
        seconds += expected
        assert isinstance(workload, FioWorkload)
        capped += not workload.global_options.get("time_based", True)
    return seconds, capped, unknown


DEFAULT_BUDGET_S = 2 * 3600


def check_budget(runs: list[RunSpec], budget_s: float) -> None:
    """Refuse a plan that measures for longer than the budget (say how to run it anyway)."""
    seconds, _, _ = measuring_seconds(runs)
    if seconds > budget_s:
        raise UserError(f"this plan measures for {format_duration(seconds)} ({len(runs)} runs), "
                        f"past the budget of {format_duration(budget_s)}: add --yes to run it, "
                        "raise --budget, or sweep fewer levels (--dry-run shows the cells)")
