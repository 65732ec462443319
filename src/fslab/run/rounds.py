"""Every run is measured in rounds: one workload on every target, round after round.

A run measured in one piece (a workload that is not a time-based fio job, a campaign that
makes a fresh file system per run, a run on load nodes) is a group of one measured in one
round of one slice: the workload's whole run. Either way the runs take one path: a target
provisioned, checked for space and probed in one place (Steps.place_for), the rounds, and
the finish (Steps.save); what one slice is, and the output the slices make, is the group's
Way (run/pieces.py).

Within an iteration, a sliceable fio job (workloads/fio/slices.py) is laid out on every
target first (every variant of a swept job too: each is one more participant); then,
round after round, each participant runs one short slice, in an order
shuffled afresh every round (seeded: campaign seed, iteration, workload, round). Slow and
fast moments of the disk so fall on every target alike instead of on whichever ran in a
bad minute (Abedi & Brecht, ICPE 2017: randomised multiple interleaved trials). A cell's
value for the iteration is the mean of its slices; the iteration — a fresh file system —
stays the unit of replication. The spread between a run's slices is kept as the
machine's short-term noise (`slice_cv` in the run record).

The default keeps the campaign's measuring time: `rounds` slices of runtime/rounds each;
the job's ramp goes where the job starts cold, in each run's first slice (pieces.py:
COLD_RAMP_MS, measured); a job too short for slices of MIN_SLICE_MS, or for a second of
fio per start (MIN_START_MS), gets fewer.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from fslab.core.errors import ToolError, UserError
from fslab.core.failures import Failure, error_failure
from fslab.core.run_parts import TargetDescription, Witness
from fslab.core.stopwatch import Stopwatch, timing
from fslab.host.diskstats import DiskStats
from fslab.plan.order import RunSpec
from fslab.plan.schema import Campaign
from fslab.workloads.base import RunOutput, Where
from fslab.workloads.fio import FioWorkload, RunRefused
from fslab.workloads.fio import slices as fio_slices


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


def round_order(seed: int, iteration: int, workload: str, number: int,
                names: list[str]) -> list[str]:
    """The participants' order in one round: a fresh shuffle, reproducible from the seed."""
    shuffled = list(names)
    random.Random(f"{seed}/{iteration}/{workload}/{number}").shuffle(shuffled)
    return shuffled


class NotReady(Exception):
    """A target could not be given to a run (not provisioned, no room, not a workload for
    load nodes): the reason, the target's description, the run's status, the kind of
    failure and what a refusing tool said."""

    def __init__(self, reason: str, description: TargetDescription, status: str = "failed",
                 failure: Failure = Failure.PROVISION, tool_said: str = ""):
        super().__init__(reason)
        self.description = description
        self.status = status
        self.failure = failure
        self.tool_said = tool_said

    def again(self) -> NotReady:
        """The same refusal for another run (a target not made is not tried again)."""
        return NotReady(str(self), self.description, self.status, self.failure,
                        self.tool_said)

    def output(self) -> RunOutput:
        return RunOutput(status=self.status, reason=str(self), failure=self.failure,
                         tool_said=self.tool_said)


class Steps(Protocol):
    """What rounds need from the runner: a place to run, a run in one piece, saving."""

    def place_for(self, run: RunSpec) -> tuple[Where, TargetDescription]:
        """(where the workload runs, the target's description), the target provisioned,
        checked for space and probed; raises NotReady."""

    def release_place(self, where: Where) -> None:
        """Remove the run's working files."""

    def run_whole(self, part: Participant) -> None:
        """Measure a run in one piece: its output and whether caches were dropped."""

    def save(self, part: Participant, output: RunOutput) -> None:
        """Record the run as finished (its working files released first)."""


class Way(Protocol):
    """How a group's runs are measured (run/pieces.py): in slices of a fio job, or each
    in one piece."""

    @property
    def rounds(self) -> int: ...

    def prepare(self, part: Participant) -> None:
        """Ready a placed participant for its first slice (a fio job's files laid out)."""

    def measure(self, part: Participant, number: int, position: int) -> None:
        """Its slice of round `number`, at `position` in the round's order."""

    def output(self, part: Participant) -> RunOutput:
        """What it produced, once every round is done."""


@dataclass
class Participant:
    """One target's run of the workload across the rounds."""

    run: RunSpec
    run_dir: Path
    started: float
    watch: Stopwatch = field(default_factory=Stopwatch)  # its steps (core/stopwatch.py)
    where: Where | None = None
    description: TargetDescription = field(default_factory=TargetDescription)
    metadata: dict[str, object] = field(default_factory=dict)
    failed: RunOutput | None = None  # why it takes no further part, when it does not
    slices: list[dict[str, object]] = field(default_factory=list)
    witnesses: list[Witness] = field(default_factory=list)
    disks: list[DiskStats] = field(default_factory=list)  # diskstats per slice
    cpu_seconds: float = 0.0
    wall: float = 0.0
    once: bool = False  # takes part in one round only (drawn from the seed)
    output: RunOutput | None = None  # a run measured in one piece: what it produced
    caches_dropped: bool = False
    status: str = ""  # once saved: its record's status and reason
    reason: str = ""


def measure_in_rounds(steps: Steps, way: Way, runs: list[tuple[RunSpec, Path]], seed: int,
                      once: frozenset[str] = frozenset()) -> list[Participant]:
    """Place and prepare every run of one workload, measure them in interleaved rounds,
    save each. The runs named in `once` (a participant that samples the rounds) take part
    in one round each, drawn from the seed."""
    parts = [_placed(steps, way, run, run_dir, run.run_id in once) for run, run_dir in runs]
    try:
        _measure(way, parts, seed)
        for part in parts:
            with timing(part.watch):
                output = part.failed or way.output(part)
            steps.save(part, output)
            part.where = None
    except BaseException:  # Ctrl-C, SIGTERM: the runs in flight leave no working files
        for part in parts:
            if part.where is not None:
                steps.release_place(part.where)
        raise
    return parts


def _placed(steps: Steps, way: Way, run: RunSpec, run_dir: Path, once: bool) -> Participant:
    """A participant on its target, prepared, or with why it cannot take part."""
    part = Participant(run, run_dir, time.time(), once=once)
    with timing(part.watch):
        try:
            part.where, part.description = steps.place_for(run)
            way.prepare(part)
        except NotReady as exc:
            part.failed, part.description = exc.output(), exc.description
        except RunRefused as exc:
            part.failed = RunOutput(status="unsupported", reason=str(exc),
                                    failure=Failure.UNSUPPORTED)
        except (ToolError, OSError, UserError) as exc:
            part.failed = RunOutput(status="failed", reason=f"error: {exc}",
                                    failure=error_failure(exc))
    return part


def _measure(way: Way, parts: list[Participant], seed: int) -> None:
    """Round after round, each ready participant's slice, in a fresh order."""
    # Participants by name: the target's when the job has one variant (the order a
    # campaign without a sweep always had), else the run's.
    key = ((lambda p: p.run.target.name) if len({p.run.workload.name for p in parts}) == 1
           else (lambda p: p.run.run_id))
    by_name = {key(p): p for p in parts}
    first = parts[0].run
    drawn = random.Random(f"{seed}/{first.iteration}/{first.job_name}/once").randrange(
        way.rounds)
    for number in range(way.rounds):
        ready = [key(p) for p in parts if p.failed is None and (not p.once or number == drawn)]
        for position, name in enumerate(round_order(seed, first.iteration, first.job_name,
                                                    number, ready)):
            part = by_name[name]
            with timing(part.watch):
                way.measure(part, number, position)
