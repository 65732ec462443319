"""Where a run happens: a target provisioned for the runs that follow (a fresh file
system, pool or directory, stamped with when it was made) and, for each run, a working
directory on it with room for the run's files. The runner and the interleaved rounds
take their places here (Places.place_for), and a place's making and release are timed
into the run it was made for (core/stopwatch.py)."""

from __future__ import annotations

import contextlib
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from fslab.core import stopwatch
from fslab.core.cell_keys import workdir_name
from fslab.core.errors import Shortage, ToolError, UserError
from fslab.core.failures import Failure, provision_failure
from fslab.core.run_parts import TargetDescription
from fslab.core.units import format_bytes
from fslab.host.children import settle
from fslab.host.lab import Session
from fslab.host.space import fresh_capacity
from fslab.plan.order import TREE_OPTIONS, RunSpec
from fslab.run.aging_places import Ager, twin_of
from fslab.run.around_run import AroundRun, after_run, before_run
from fslab.run.lab_space import (
    filled_while_made,
    free_once_released,
    held_by,
    lab_free,
    short_of_room,
)
from fslab.run.option_check import Refused
from fslab.run.rounds import NotReady
from fslab.targets import Mounted, Target
from fslab.workloads.base import Where


def unprovisioned(name: str, exc: Exception) -> str:
    """Why a run had no target: it could not be made."""
    return f"provisioning {name} failed: {exc}"


def provisioned(target: Target, session: Session, number: int) -> Mounted:
    """A fresh place for the runs that follow, stamped with when it was made and its
    number in the campaign: a run.json tells which runs shared one."""
    place = target.provision(session)
    place.description = place.description.with_(
        provisioned={"at": time.time(), "number": number})
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
                 cgroup=place.cgroup, quirk=place.description.quirk,
                 hosts=hosts, run_timeout=run_timeout, keep_files=place.keep_files,
                 root=Path(run.target.path) if hosts and run.target.path else place.path)


def lacks_space(place: Mounted, run: RunSpec) -> str:
    """Why the run's files do not fit on `place` ('' when they do)."""
    need = run.workload.required_bytes()
    with stopwatch.step(stopwatch.SPACE):
        free = place.wait_for_space(need)
    if free is not None and need > free:
        return (f"needs {format_bytes(need)} but {run.target.name} has "
                f"{format_bytes(free)} free")
    return ""


def apart(groups: list[list[RunSpec]],
          shares: Callable[[RunSpec], tuple[str, str]]) -> list[list[RunSpec]]:
    """The groups with no two runs whose targets share one thing at different levels (a
    zfs-fuse daemon's ARC: targets/zfs.py): each split by level, runs on targets that
    share nothing joining its first part; then in the order of the levels as the plan
    first reaches them, so that the shared thing changes as seldom as it must (once per
    level and iteration). Runs at different levels of it are never in one round."""
    parts: list[tuple[int, list[RunSpec]]] = []
    rank: dict[tuple[str, str], int] = {}
    for group in groups:
        by_level: dict[tuple[str, str], list[RunSpec]] = {}
        free = []
        for run in group:
            key = shares(run)
            if key[0]:
                by_level.setdefault(key, []).append(run)
                rank.setdefault(key, len(rank))
            else:
                free.append(run)
        if not by_level:
            parts.append((0, free))
            continue
        for number, (key, runs) in enumerate(by_level.items()):
            parts.append((rank[key], free + runs if number == 0 else runs))
    return [runs for _, runs in sorted(parts, key=lambda part: part[0])]


def release(where: Where) -> None:
    """Remove the run's working directory, unless its place keeps files between runs."""
    if where.directory is not None and not where.keep_files:
        shutil.rmtree(where.directory, ignore_errors=True)


@dataclass
class Places:
    """The places of one lab session: a target is provisioned when a run first needs it,
    serves the runs after it until it is torn down, and one that could not be made is
    not tried again until `fresh_start` (the next iteration)."""

    targets: dict[str, Target]
    session: Session
    hosts: tuple[Any, ...] = ()
    run_timeout: int = 0
    mounted: dict[str, Mounted] = field(default_factory=dict)
    made_for: dict[str, str] = field(default_factory=dict)  # target -> the run it was made for
    _broken: dict[str, NotReady] = field(default_factory=dict)  # target -> why not made
    # run_id -> (its place, what run_probes recorded before it), until the run is saved
    _around: dict[str, tuple[Mounted, AroundRun | None]] = field(default_factory=dict)
    _provisions: int = 0
    ager: Ager | None = None  # ages the places of an `age` factor's aged levels
    refused: dict[str, Refused] = field(default_factory=dict)  # never made: why (option_check)
    least_need: int = 0  # bytes of the lab's disk the campaign's smallest run needs

    def fresh_start(self) -> None:
        """A target that could not be made is tried again."""
        self._broken.clear()

    def place_for(self, run: RunSpec) -> tuple[Where, TargetDescription]:
        """A provisioned target, checked for space and probed, and a fresh working
        directory on it: the one place every run gets its target. A reused file system
        short of space is made afresh once, if no other run is on it: earlier runs'
        deleted files were not given back yet (zfs-fuse is slow to)."""
        name, target = run.target.name, self.targets[run.target.name]
        if self.hosts and not run.workload.runs_on_load_nodes:
            raise NotReady(f"{run.workload.family} runs on this machine only; with hosts, "
                           "only fio workloads run on the load nodes", target.describe(),
                           "unsupported", Failure.UNSUPPORTED)
        if name in self.refused:  # the file system refuses it: never made
            why = self.refused[name]
            raise NotReady(why.reason, target.describe(), failure=Failure.REFUSED,
                           tool_said=why.said)
        if name in self._broken:
            raise self._broken[name].again()
        reused = name in self.mounted
        if not reused:
            self._apart_from(name)
        place = self.mounted.get(name) or self._provision(run)
        where = working_place(place, run, self.hosts, self.run_timeout)
        short = lacks_space(place, run)  # an aged place made room when it was aged
        if short and reused and not self._in_use(name):
            release(where)
            with stopwatch.step(stopwatch.TEARDOWN):
                self.teardown(name)
            place = self._provision(run)
            place.description = place.description.with_(
                reprovisioned="space not reclaimed after earlier runs")
            where = working_place(place, run, self.hosts, self.run_timeout)
            short = lacks_space(place, run)
        if short:
            raise NotReady(short, place.description, failure=Failure.NO_SPACE)
        with stopwatch.step(stopwatch.PROBE):
            self._around[run.run_id] = (place, before_run(place, run.target.options))
        return where, place.description

    def after(self, run_id: str, metadata: dict[str, object]) -> None:
        """A run's probes once it is over (its files still there), and what the aging of
        the place made for it did."""
        summary = self.ager.summary_of(run_id) if self.ager is not None else None
        if summary:
            metadata["aging"] = summary
        if run_id in self._around:
            place, around = self._around.pop(run_id)
            with stopwatch.step(stopwatch.PROBE), contextlib.suppress(OSError):
                after_run(place, around, metadata)  # a mount aborted under it: no probe

    def hung(self, name: str, started: float) -> str:
        """Why `name`'s FUSE daemon hung while a run that began at `started` was on it
        ('' when it did not, or `name` is no FUSE mount): that run's cause."""
        place = self.mounted.get(name)
        return place.watch.hung_during(started) if place and place.watch else ""

    def teardown(self, name: str) -> tuple[str, float] | None:
        """Release `name`'s place: (the run it was made for, seconds it took), None when
        it had none; ToolError or OSError when a release failed."""
        place = self.mounted.pop(name, None)
        if place is None:
            return None
        start = time.perf_counter()
        try:
            self.targets[name].teardown(self.session, place)
        finally:
            made_for = self.made_for.pop(name, "")
        return made_for, time.perf_counter() - start

    def _provision(self, run: RunSpec) -> Mounted:
        """The run's target made, if the lab's disk has room for it (run/lab_space.py):
        without, or when it filled while the target was made, the target's runs fail
        for want of space this iteration, and the campaign stops (Shortage) when no
        target of it could be made in what is left."""
        name = run.target.name
        partner = self.ager.partner(run) if self.ager is not None else None
        if partner is not None and twin_of(run.target) and \
                partner.target.name not in self.mounted:
            self._partner(partner, run)  # the aged place first: it makes its twin too
            if name in self.mounted:
                return self.mounted[name]
        need = self.targets[name].lab_bytes(run.workload.required_bytes())
        root = self.session.lab.root
        had = lab_free(root) if need else 0
        if need > had:
            settle()  # images of places torn down are on their way out: wait for them
            had = free_once_released(root, need)
        if need > had:
            self._out_of_room(name, short_of_room(name, need, had, root), had)
        self._provisions += 1
        try:
            with stopwatch.step(stopwatch.PROVISION):
                place = provisioned(self.targets[name], self.session, self._provisions)
        except (ToolError, OSError, UserError) as exc:
            failure, said = provision_failure(exc)
            if need:
                settle()  # the image it began is removed before the disk is read again
                if need > (now := lab_free(root)):
                    self._out_of_room(name, filled_while_made(name, need, had, now, root),
                                      now, str(exc))
            self._broken[name] = NotReady(unprovisioned(name, exc),
                                          self.targets[name].describe(), failure=failure,
                                          tool_said=said)
            raise self._broken[name].again() from exc
        if place.path is not None and not any(key in run.target.options for key in TREE_OPTIONS):
            # a fresh file system: what root can write on it is the whole its fills are of
            place.description = place.description.with_(
                root_capacity=fresh_capacity(place.path))
        self.mounted[name] = place
        self.made_for[name] = run.run_id
        if self.ager is not None:
            self._aged(run, place, partner)
        return place

    def _partner(self, partner: RunSpec, run: RunSpec) -> None:
        """Make a twin's aged place (for its own first run); a twin whose aged place
        cannot be made cannot be either, for the same reason."""
        try:
            self._provision(partner)
        except NotReady as exc:
            name = run.target.name
            self._broken[name] = NotReady(f"its aged twin {partner.target.name} could not "
                                          f"be made: {exc}", self.targets[name].describe(),
                                          failure=exc.failure)
            raise self._broken[name].again() from exc

    def _out_of_room(self, name: str, reason: str, free: int, said: str = "") -> NoReturn:
        """Target `name` does not fit the lab's disk: its runs fail this iteration, or,
        when the campaign's smallest target would not fit even once this session's own
        images are gone (they go at the iteration's end), the campaign stops."""
        if free + held_by(self.session.path_for("images")) < self.least_need:
            raise Shortage(f"{reason}; with {format_bytes(free)} free no target of the "
                           "campaign can be made: free some space there, or use --lab DIR "
                           "on a larger disk")
        self._broken[name] = NotReady(reason, self.targets[name].describe(),
                                      failure=Failure.NO_SPACE, tool_said=said)
        raise self._broken[name].again()

    def _aged(self, run: RunSpec, place: Mounted, partner: RunSpec | None) -> None:
        """Age a place just made at its target's level and make its twin now, before any
        run touches its tree (or fill a twin from its aged place); one that cannot be is
        released and not tried again this iteration (its runs fail with the reason)."""
        assert self.ager is not None
        name = run.target.name
        try:
            if partner is not None and twin_of(run.target):
                self.ager.fill_twin(run, place, self.mounted[partner.target.name])
            else:
                self.ager.age(run, place)
        except (NotReady, ToolError, OSError, UserError) as exc:
            found = exc if isinstance(exc, NotReady) else NotReady(
                f"aging {name} failed: {exc}", place.description, failure=Failure.AGING)
            self._broken[name] = found
            with stopwatch.step(stopwatch.TEARDOWN):
                self.teardown(name)
            raise found.again() from exc
        if partner is not None and not twin_of(run.target) and \
                partner.target.name not in self.mounted:
            with contextlib.suppress(NotReady):  # the twin's runs say why it was not made
                self._provision(partner)

    def _apart_from(self, name: str) -> None:
        """Release the places that share something with `name` at another level (a
        zfs-fuse daemon's ARC: BaseTarget.shares) before `name` is made; the runner
        groups runs so that this happens once per level and iteration (apart)."""
        what, level = self.targets[name].shares()
        if not what:
            return
        for other in list(self.mounted):
            theirs = self.targets[other].shares()
            if theirs[0] == what and theirs[1] != level and not self._in_use(other):
                with stopwatch.step(stopwatch.TEARDOWN):
                    self.teardown(other)

    def _in_use(self, name: str) -> bool:
        """Whether a run placed on `name` is still to be saved (its files are there)."""
        return any(place is self.mounted.get(name) for place, _ in self._around.values())
