"""The plan: which run happens when. Pure: campaign in, ordered run specs out."""

from __future__ import annotations

import random
from dataclasses import dataclass

from fslab.plan.campaign import Campaign
from fslab.plan.workloads import build_workloads
from fslab.targets import TargetSpec
from fslab.workloads.base import Workload


@dataclass(frozen=True)
class RunSpec:
    """One run: a workload on a target in one iteration, at a place in the order."""

    iteration: int
    position: int
    target: TargetSpec
    workload: Workload

    @property
    def run_id(self) -> str:
        """Stable across re-plans of the same campaign, so resume can match runs."""
        return f"i{self.iteration:03d}-{self.target.name}-{self.workload.name}"


@dataclass
class Plan:
    """All runs of a campaign in execution order, grouped by iteration."""

    campaign: Campaign
    runs: list[RunSpec]

    def iteration(self, number: int) -> list[RunSpec]:
        return [run for run in self.runs if run.iteration == number]


def make_plan(campaign: Campaign, workloads: list[Workload] | None = None) -> Plan:
    """Shuffle (target, workload) pairs within each iteration with the campaign's seed.

    The shuffle spreads slow drifts of the machine (thermal, background work, a filling
    disk) over all cells instead of letting them land on whichever target runs last.
    """
    workloads = workloads if workloads is not None else build_workloads(campaign)
    rng = random.Random(campaign.seed)
    runs: list[RunSpec] = []
    for iteration in range(1, campaign.iterations + 1):
        pairs = [(target, workload) for target in campaign.targets for workload in workloads]
        rng.shuffle(pairs)
        runs += [RunSpec(iteration, position, target, workload)
                 for position, (target, workload) in enumerate(pairs)]
    return Plan(campaign, runs)


def check_space(plan: Plan) -> None:
    """Refuse, before formatting anything, a workload whose files cannot fit an image."""
    from fslab.core.errors import UserError
    from fslab.core.units import format_bytes
    from fslab.plan.campaign import MAX_FILL
    from fslab.targets import IMAGE_LESS

    checked: set[tuple[str, str]] = set()
    for run in plan.runs:
        key = (run.target.name, run.workload.name)
        if key in checked or run.target.fs in IMAGE_LESS or run.target.device:
            continue
        checked.add(key)
        need = run.workload.required_bytes()
        room = int(run.target.size * MAX_FILL)
        if need > room:
            raise UserError(
                f"workload {run.workload.name} needs {format_bytes(need)} but target "
                f"{run.target.name} ({format_bytes(run.target.size)} image) leaves about "
                f"{format_bytes(room)} for files: raise --size or lower --file-size"
            )
