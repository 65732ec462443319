"""Where a run happens: a target provisioned for the runs that follow (a fresh file
system, pool or directory, stamped with when it was made) and, for each run, a working
directory on it with room for the run's files. The runner and the interleaved rounds
take their places here."""

from __future__ import annotations

import re
import shutil
import time
from pathlib import Path
from typing import Any

from fslab.core.units import format_bytes
from fslab.host.lab import Session
from fslab.plan.levels import workdir_name
from fslab.plan.order import RunSpec
from fslab.targets import Mounted, Target
from fslab.workloads.base import Where

NO_SPACE = "needs"  # how a failed free-space check's reason begins
# A run's reason when mkfs or mount refused its target (a tuner reads it back:
# tune/stages.py), the tool's own line in group 1.
REFUSED_BY_TOOL = re.compile(r"provisioning .* failed: ((?:mount|mkfs\S*) exited with .*)",
                             re.S)


def unprovisioned(name: str, exc: Exception) -> str:
    """Why a run had no target: it could not be made (REFUSED_BY_TOOL reads it back)."""
    return f"provisioning {name} failed: {exc}"


def provisioned(target: Target, session: Session, number: int) -> Mounted:
    """A fresh place for the runs that follow, stamped with when it was made and its
    number in the campaign: a run.json tells which runs shared one."""
    place = target.provision(session)
    place.description["provisioned"] = {"at": time.time(), "number": number}
    return place


def working_place(place: Mounted, run: RunSpec, hosts: tuple[Any, ...],
                  run_timeout: int) -> Where:
    """The run's working directory on `place` (emptied first unless the place keeps its
    files between runs) and all a workload needs to know of where it runs."""
    workdir = place.path / workdir_name(run.workload.name) if place.path else None
    if workdir is not None:
        if not place.keep_files:
            shutil.rmtree(workdir, ignore_errors=True)
        workdir.mkdir(exist_ok=True)
    return Where(directory=workdir, device=place.device, layout_first=place.layout_first,
                 cgroup=place.cgroup, quirk=str(place.description.get("quirk", "")),
                 hosts=hosts, run_timeout=run_timeout, keep_files=place.keep_files,
                 root=Path(run.target.path) if hosts and run.target.path else place.path)


def lacks_space(place: Mounted, run: RunSpec) -> str:
    """Why the run's files do not fit on `place` ('' when they do)."""
    need = run.workload.required_bytes()
    free = place.wait_for_space(need)
    if free is not None and need > free:
        return (f"{NO_SPACE} {format_bytes(need)} but {run.target.name} has "
                f"{format_bytes(free)} free")
    return ""


def release(where: Where) -> None:
    """Remove the run's working directory, unless its place keeps files between runs."""
    if where.directory is not None and not where.keep_files:
        shutil.rmtree(where.directory, ignore_errors=True)
