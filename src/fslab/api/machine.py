"""The machine and the catalogues of what fslab knows, as plain functions the CLI calls:
the lab, the doctor, the fio server, the aging flags, the lists of targets and presets."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from fslab.aging.flags import aging_request as aging_request_of
from fslab.aging.flags import aging_target
from fslab.host.doctor import (
    CHECKS,
    QUICK,
    examine,
    examine_beside,
    free_space,
    lab_space,
    tune,
    untune,
)
from fslab.host.lab import Lab
from fslab.plan import listings
from fslab.plan.order import make_plan
from fslab.plan.preflight import build_targets
from fslab.run.lab_space import campaign_need
from fslab.workloads.fio.distributed import exposure, run_server

if TYPE_CHECKING:
    import threading
    from collections.abc import Callable

    from rich.console import Group

    from fslab.aging.flags import AgingFlags, AgingRequest
    from fslab.host.doctor import Finding
    from fslab.plan.schema import Campaign


def make_lab(path: Path | None = None) -> Lab:
    """The lab directory (default $FSLAB_LAB or /var/lib/fslab)."""
    return Lab(path)


def doctor(lab: Path | None = None, campaign: Campaign | None = None) -> list[Finding]:
    """`fslab doctor`: is this machine fit to measure on (host/doctor.py); with a
    campaign, its lab's free space against what the campaign's images take
    (run/lab_space.py)."""
    checks = CHECKS
    if campaign is not None:
        plan = make_plan(campaign)
        need = campaign_need(plan.runs, build_targets(plan, frozenset(), False))
        checks = [lab_space(need.total, need.least) if check is free_space else check
                  for check in CHECKS]
    return examine(make_lab(lab).root, checks)


def doctor_tune(lab: Path | None = None, undo: bool = False) -> list[str]:
    """`fslab doctor --tune` (or `--untune`): what was set (or restored)."""
    root = make_lab(lab).root
    return untune(root) if undo else tune(root)


def quick_check(lab: Lab, note: Callable[[str], None]) -> threading.Thread:
    """The doctor's quick look beside a campaign (a thread: `.join()` it after)."""
    return examine_beside(lab.root, QUICK, note)


def serve_exposure(bind: str, port: int) -> str:
    """Who can reach `fslab serve --bind BIND` and what they can do ('' on loopback)."""
    return exposure(bind, port)


def serve(bind: str, port: int) -> bool:
    """`fslab serve`: a fio server for a controller's `fslab run --hosts`."""
    return run_server(bind, port)


def aging_request(flags: AgingFlags, fs: str, size: str, mkfs_options: str | None,
                  mount_options: str | None, direct_io: bool | None, device: str | None,
                  image: str | None = None) -> AgingRequest:
    """`fslab age` flags as what it runs (the target to age, the aging settings and, with
    --as-published, the thesis's with every parameter's source): aging/flags.py."""
    spec = aging_target(fs, size, mkfs_options, mount_options, direct_io, device)
    return aging_request_of(flags, spec, image)


def targets_table() -> Group:
    """`fslab targets`: every kind of target and whether it runs here (plan/listings.py)."""
    return listings.targets_table()


def presets_tables() -> Group:
    """`fslab presets`: every preset, every parameter with its source."""
    return listings.presets_tables()


def presets_json() -> str:
    return listings.presets_json()
