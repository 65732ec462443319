"""Before anything is touched: plan the campaign and check every target and workload
(tools present, devices confirmed, space on the lab's disk, remote hosts reachable)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from fslab.core.errors import UserError
from fslab.plan.order import check_space, check_trees, make_plan
from fslab.targets import make_target
from fslab.workloads.fio.distributed import LOOPBACK, preflight

if TYPE_CHECKING:
    from fslab.plan.order import Plan
    from fslab.plan.schema import Campaign
    from fslab.targets import Target
    from fslab.workloads.fio.distributed import Host


def prepare(
    campaign: Campaign,
    *,
    confirmed_devices: frozenset[str] = frozenset(),
    force_device: bool = False,
    problems: list[str] | None = None,
    plan: Plan | None = None,
) -> tuple[Plan, dict[str, Target]]:
    """Plan a campaign and check every target and workload, touching nothing.

    Each problem raises a UserError, or is appended to `problems` when a list is given
    (a dry run shows the plan and what would stop it). `plan`: the campaign's, when the
    caller made it already.
    """
    plan = plan or make_plan(campaign)
    targets = build_targets(plan, confirmed_devices, force_device)
    checks = [target.check for target in targets.values()]
    checks += list({run.workload.name: run.workload.check for run in plan.runs}.values())
    checks.append(lambda: check_space(plan))
    checks.append(lambda: check_trees(plan))
    checks.append(lambda: one_device_each(plan))
    if campaign.hosts:
        checks.append(lambda: preflight_campaign(campaign.hosts, targets))
    for check in checks:
        try:
            check()
        except UserError as exc:
            if problems is None:
                raise
            problems.append(str(exc))
    return plan, targets


def one_device_each(plan: Plan) -> None:
    """A real device holds one target's file system at a time: every target's file system
    stays mounted through its iteration (its job's rounds interleave them), so a second
    mkfs on the device would meet the first one mounted. `fresh = "run"` makes and
    releases one file system per run, one after another, and may share a device."""
    if plan.campaign.fresh == "run":
        return
    named: dict[str, str] = {}
    for spec in plan.targets:
        if spec.device:
            key = str(Path(spec.device).resolve())
            if key in named and named[key] != spec.name:
                raise UserError(
                    f"targets {named[key]} and {spec.name} both name {spec.device}: each "
                    "needs a device of its own, as every target's file system stays mounted "
                    'through its iteration (fresh = "run": one at a time, measured whole)')
            named.setdefault(key, spec.name)


def build_targets(
    plan: Plan, confirmed_devices: frozenset[str], force_device: bool
) -> dict[str, Target]:
    """Make every target of the plan (checking them is the caller's step)."""
    return {
        spec.name: make_target(spec, confirmed_devices=confirmed_devices, force_device=force_device)
        for spec in plan.targets
    }


def preflight_campaign(hosts: list[Host], targets: dict[str, Target]) -> None:
    """Every host reachable, on the controller's fio version, with the target path."""
    remote = [h for h in hosts if not h.address.startswith(LOOPBACK)]
    problems: list[str] = []
    for name, target in targets.items():
        if target.spec.fs == "dir":
            problems += preflight(hosts, Path(target.spec.path))
        elif remote:
            raise UserError(f"target {name}: with remote hosts ({remote[0]}), targets must be "
                            "dir:PATH, a path that exists on every host")
        else:
            problems += preflight(hosts, Path("/"))
    if problems:
        raise UserError("preflight failed:\n  " + "\n  ".join(dict.fromkeys(problems)))
