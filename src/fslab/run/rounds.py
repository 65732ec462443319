"""Every run is measured in rounds: one workload on every target, round after round.

A run measured in one piece (a workload that is not a time-based fio job, a campaign that
makes a fresh file system per run, a run on load nodes) is a group of one measured in one
round of one slice: the workload's whole run. Either way a target is provisioned, checked
for space and probed in one place (Steps.place_for) and saved in one (Steps.save).

Within an iteration, a sliceable fio job (workloads/fio/slices.py) is laid out on every
target first (every variant of a swept job too: each is one more participant); then,
round after round, each participant runs one short slice, in an order
shuffled afresh every round (seeded: campaign seed, iteration, workload, round). Slow and
fast moments of the disk so fall on every target alike instead of on whichever ran in a
bad minute (Abedi & Brecht, ICPE 2017: randomised multiple interleaved trials). A cell's
value for the iteration is the mean of its slices; the iteration — a fresh file system —
stays the unit of replication. The spread between a run's slices is kept as the
machine's short-term noise (`slice_cv` in the run record).

The default keeps the campaign's measuring time: `rounds` slices of runtime/rounds each,
the job's ramp split the same way; a job too short for slices of MIN_SLICE_MS, or for a
second of fio per start (MIN_START_MS), gets fewer.
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from fslab.core.errors import ToolError, UserError
from fslab.host import diskstats
from fslab.host.lab import Session
from fslab.host.witness import Watcher, Witness, judge
from fslab.plan.model import Campaign
from fslab.plan.order import RunSpec
from fslab.run.observing import observed
from fslab.targets import Mounted
from fslab.workloads.base import RunOutput, Where
from fslab.workloads.fio import FioWorkload, RunRefused, prepare
from fslab.workloads.fio import slices as fio_slices
from fslab.workloads.fio.jobfile import seconds
from fslab.workloads.process import HostCpu, keep_host_cpu

DEFAULT_ROUNDS = 6
# A slice measures at least this long, and each fio start carries at least a second of the
# job (its share of the ramp and of the measuring): fio's own start and stop cost about a
# quarter second each time (0.24-0.29 s here, 100 ms of it fio's wait for its jobs), so
# the default 2 s job with its 1 s ramp runs in 3 rounds (a 1 s job: 2; 3 s: 4; 5 s or
# more: the campaign's 6), about a fifth of fio's time spent starting, not a quarter.
MIN_SLICE_MS = 500
MIN_START_MS = 1000


def whole_because(run: RunSpec, campaign: Campaign, hosts: bool) -> str | None:
    """Why this run is measured in one piece, or None when it is sliced and interleaved
    with the job's runs on the other targets."""
    if campaign.fresh == "run":
        return "a fresh file system for every run"
    if campaign.rounds <= 1:
        return "rounds = 1"
    if hosts:
        return "runs on load nodes"
    if not isinstance(run.workload, FioWorkload):
        return f"{run.workload.family} is not a fio job"
    return fio_slices.whole_because(run.workload)


def rounds_for(workload: FioWorkload, rounds: int) -> int:
    """How many rounds a job is measured in: the campaign's, fewer where its runtime
    would make slices shorter than MIN_SLICE_MS or a fio start carry less than
    MIN_START_MS of ramp and runtime (never more time than the job asks)."""
    runtime_ms = int(1000 * workload.runtime)
    per_start = (runtime_ms + int(1000 * _ramp_s(workload))) // MIN_START_MS
    return max(1, min(rounds, runtime_ms // MIN_SLICE_MS, per_start))


def _ramp_s(workload: FioWorkload) -> float:
    return seconds({**workload.global_options, **workload.options}.get("ramp_time", 0))


def slice_lengths(workload: FioWorkload, rounds: int) -> tuple[int, int]:
    """(slice ms, ramp ms per slice): the job's runtime and ramp split over the rounds."""
    return int(1000 * workload.runtime / rounds), int(1000 * _ramp_s(workload) / rounds)


def round_order(seed: int, iteration: int, workload: str, number: int,
                names: list[str]) -> list[str]:
    """The participants' order in one round: a fresh shuffle, reproducible from the seed."""
    shuffled = list(names)
    random.Random(f"{seed}/{iteration}/{workload}/{number}").shuffle(shuffled)
    return shuffled


class NotReady(Exception):
    """A target could not be given to a run (not provisioned, no room, not a workload for
    load nodes): the reason, the target's description and the run's status."""

    def __init__(self, reason: str, description: dict[str, Any], status: str = "failed"):
        super().__init__(reason)
        self.description = description
        self.status = status


class Steps(Protocol):
    """What rounds need from the runner: a place to run, a run in one piece, saving."""

    def place_for(self, session: Session, mounted: dict[str, Mounted],
                  broken: dict[str, str], run: RunSpec, run_dir: Path) -> tuple[Where, Any]:
        """(where the workload runs, the target's description), the target provisioned,
        checked for space and probed; raises NotReady."""

    def release_place(self, where: Where) -> None:
        """Remove the run's working files."""

    def run_whole(self, session: Session, mounted: dict[str, Mounted],
                  broken: dict[str, str], part: Participant, watcher: Watcher) -> None:
        """Measure a run in one piece: its output and whether caches were dropped."""

    def save(self, run: RunSpec, output: RunOutput, description: dict[str, Any],
             started: float, caches_dropped: bool) -> None:
        """Record the run as finished."""


@dataclass
class Participant:
    """One target's run of the workload across the rounds."""

    run: RunSpec
    run_dir: Path
    started: float
    where: Where | None = None
    description: dict[str, Any] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    failure: str = ""
    slices: list[dict[str, Any]] = field(default_factory=list)
    witnesses: list[Witness] = field(default_factory=list)
    disks: list[dict[str, Any]] = field(default_factory=list)  # diskstats per slice
    cpu_seconds: float = 0.0
    wall: float = 0.0
    once: bool = False  # takes part in one round only (drawn from the seed)
    status: str = "failed"  # what a failure is recorded as
    output: RunOutput | None = None  # a run measured in one piece: what it produced
    caches_dropped: bool = False


def measure_in_rounds(steps: Steps, session: Session, mounted: dict[str, Mounted],
                      broken: dict[str, str], runs: list[tuple[RunSpec, Path]],
                      rounds: int, seed: int, watcher: Watcher,
                      once: frozenset[str] = frozenset(), whole: bool = False
                      ) -> list[Participant]:
    """Lay out, then measure every run of one workload in interleaved rounds; save each.
    The runs named in `once` (a participant that samples the rounds: the raw-device
    ceiling) take part in one round each, drawn from the seed. `whole`: one run measured
    in one piece, one round of one slice (Steps.run_whole)."""
    parts = []
    for run, run_dir in runs:
        part = Participant(run, run_dir, time.time(), once=run.run_id in once)
        try:
            part.where, part.description = steps.place_for(session, mounted, broken, run,
                                                           run_dir)
            if not whole:
                assert isinstance(run.workload, FioWorkload)
                part.metadata = prepare(run.workload, part.where, run_dir)
        except NotReady as exc:
            part.failure, part.description, part.status = str(exc), exc.description, \
                exc.status
        except RunRefused as exc:
            part.failure = str(exc)
        except (ToolError, OSError, UserError) as exc:
            part.failure = f"error: {exc}"
        parts.append(part)
    try:
        _measure(steps, session, mounted, broken, parts, rounds, seed, watcher, whole)
    except BaseException:  # Ctrl-C, SIGTERM: the runs in flight leave no working files
        for part in parts:
            if part.where is not None:
                steps.release_place(part.where)
        raise
    return parts


def _measure(steps: Steps, session: Session, mounted: dict[str, Mounted],
             broken: dict[str, str], parts: list[Participant], rounds: int, seed: int,
             watcher: Watcher, whole: bool) -> None:
    """Measure the placed participants, round after round, and save each (its place
    released once saved)."""
    if whole:
        (part,) = parts
        if not part.failure:
            steps.run_whole(session, mounted, broken, part, watcher)
        _finish_whole(steps, part)
        return
    workload = parts[0].run.workload
    assert isinstance(workload, FioWorkload)
    rounds = rounds_for(workload, rounds)
    slice_ms, ramp_ms = slice_lengths(workload, rounds)
    # Participants by name: the target's when the job has one variant (the order a
    # campaign without a sweep always had), else the run's.
    key = ((lambda p: p.run.target.name) if len({p.run.workload.name for p in parts}) == 1
           else (lambda p: p.run.run_id))
    by_name = {key(p): p for p in parts}
    first = parts[0].run
    drawn = random.Random(f"{seed}/{first.iteration}/{first.job_name}/once").randrange(rounds)
    for number in range(rounds):
        ready = [key(p) for p in parts if not p.failure and (not p.once or number == drawn)]
        for position, name in enumerate(round_order(seed, first.iteration, first.job_name,
                                                    number, ready)):
            _one_slice(by_name[name], number, position, slice_ms, ramp_ms, watcher)
    for part in parts:
        _finish(steps, part, rounds, slice_ms, ramp_ms)


def _one_slice(part: Participant, number: int, position: int, slice_ms: int, ramp_ms: int,
               watcher: Watcher) -> None:
    assert part.where is not None and isinstance(part.run.workload, FioWorkload)
    with observed(watcher, part.description) as seen:
        code, stderr, seconds = fio_slices.run_slice(part.run.workload, part.where,
                                                     part.run_dir, number, slice_ms, ramp_ms)
    part.slices.append({"round": number, "position": position, "seconds": round(seconds, 3),
                        "exit_code": code})
    part.witnesses.append(seen.witness)
    part.disks.append(seen.disks)
    if seen.cpu.seconds == seen.cpu.seconds:
        part.cpu_seconds += seen.cpu.seconds
        part.wall += seconds
    if code != 0:
        part.failure = fio_slices.failure_line(stderr, number, code)


def _finish_whole(steps: Steps, part: Participant) -> None:
    output = part.output or RunOutput(status=part.status, reason=part.failure)
    steps.save(part.run, output, part.description, part.started, part.caches_dropped)
    if part.where is not None:
        steps.release_place(part.where)
        part.where = None


def _finish(steps: Steps, part: Participant, rounds: int, slice_ms: int, ramp_ms: int) -> None:
    output = fio_slices.finish(part.metadata, [part.failure] if part.failure else [])
    if output.status == "ok" and part.wall > 0:
        use = HostCpu(pct=100.0 * part.cpu_seconds / part.wall, seconds=part.cpu_seconds)
        output.metadata["host_cpu"] = keep_host_cpu(use, part.run_dir)
    output.metadata["slices"] = {
        "rounds": rounds, "slice_ms": slice_ms, "ramp_ms": ramp_ms, "runs": part.slices,
        "why": "measured in rounds interleaved with the other targets (rounds.py)"}
    output.metadata["primary_metric"] = part.run.workload.primary_metric
    if part.witnesses:
        output.metadata["witness"] = combine(part.witnesses).to_json()
    if disks := diskstats.add_up(part.disks):
        output.metadata["disk_stats"] = disks
    dropped = bool(part.metadata.get("layout_pass", {}).get("caches_dropped", False))
    steps.save(part.run, output, part.description, part.started, dropped)
    if part.where is not None:
        steps.release_place(part.where)
        part.where = None


def combine(witnesses: list[Witness]) -> Witness:
    """One witness for a run measured in slices: time-weighted over the slices."""
    total = sum(w.seconds for w in witnesses) or 1e-9

    def mean(key: str) -> float:
        values = [(getattr(w, key), w.seconds) for w in witnesses
                  if getattr(w, key) == getattr(w, key)]
        return sum(v * s for v, s in values) / total if values else math.nan

    shares: dict[str, float] = {}  # "name N %" of each slice -> CPU-seconds of that name
    for w in witnesses:
        for entry in w.busiest:
            name, _, pct = entry.rpartition(" ")[0].rpartition(" ")
            shares[name] = shares.get(name, 0.0) + float(pct or 0) * w.seconds / 100
    busiest = [f"{name} {100 * seconds / total:.0f} %" for name, seconds in
               sorted(shares.items(), key=lambda item: -item[1])[:3]]
    found = Witness(seconds=total, others_cpu_pct=mean("others_cpu_pct"), busiest=busiest,
                    steal_pct=mean("steal_pct"), psi_cpu_pct=mean("psi_cpu_pct"),
                    psi_io_pct=mean("psi_io_pct"), psi_memory_pct=mean("psi_memory_pct"),
                    other_io_bytes_s=mean("other_io_bytes_s"), disk=witnesses[0].disk)
    judge(found)
    return found
