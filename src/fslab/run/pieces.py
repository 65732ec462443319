"""What a participant does in one round (rounds.Way): a slice of a fio job, or its whole
run when the run is measured in one piece (one round of one slice).

A sliceable fio job (workloads/fio/slices.py) is laid out first, then runs a short slice
per round; what the slices measured, how the machine looked meanwhile (the witness, the
devices' counters, the host's CPU) and their spread become the run's output at the end.
A run in one piece is the workload's own run (Steps.run_whole: caches dropped, its memory
cgroup, watched), and its output is the workload's.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from fslab.core.run_parts import MEASURED_WHOLE, Busy, Witness
from fslab.host import diskstats
from fslab.host.witness import Watcher, judge
from fslab.plan.order import RunSpec
from fslab.plan.schema import Campaign
from fslab.run.observing import observed
from fslab.run.rounds import Participant, Steps, Way, whole_because
from fslab.workloads.base import RunOutput
from fslab.workloads.cpu_use import HostCpu, keep_host_cpu
from fslab.workloads.fio import FioWorkload, prepare
from fslab.workloads.fio import slices as fio_slices

# A slice measures at least this long, and each fio start carries at least a second of the
# job (its share of the ramp and of the measuring): fio's own start and stop cost about a
# quarter second each time (0.24-0.29 s here, 100 ms of it fio's wait for its jobs), so
# the default 2 s job with its 1 s ramp runs in 3 rounds (a 1 s job: 2; 3 s: 4; 5 s or
# more: the campaign's 6), about a fifth of fio's time spent starting, not a quarter.
MIN_SLICE_MS = 500
MIN_START_MS = 1000
# A run's first slice starts cold (its caches just dropped) and ramps; the later slices
# start warm and ramp none. Measured here (2026-11-27, fio logs at 20 ms, ext4, xfs and
# btrfs, the default five jobs, 4 repetitions; a busy machine): the first 100 and 200 ms
# of a cold start ran at 0.93x and 0.94x of its steady rate (the 70/30 mix 0.86x until
# 400 ms), 1.01x from 400 ms on; a later slice's first 100 ms ran at 1.00x (95 % CI
# 0.96-1.04, 117 slices), so its ramp measured nothing fio did not do just as well after.
# The first slice ramps at least this long (never longer than the job's own ramp_time).
COLD_RAMP_MS = 500


def way_for(steps: Steps, run: RunSpec, campaign: Campaign, hosts: bool,
            watcher: Watcher) -> Way:
    """How the group `run` heads is measured: in slices, or each run in one piece (and
    why, said in its record)."""
    if (why := whole_because(run, campaign, hosts)) is not None:
        return InOnePiece(steps, why)
    assert isinstance(run.workload, FioWorkload)
    return InSlices.of(run.workload, campaign.rounds, watcher)


def rounds_for(workload: FioWorkload, rounds: int) -> int:
    """How many rounds a job is measured in: the campaign's, fewer where its runtime
    would make slices shorter than MIN_SLICE_MS or a fio start carry less than
    MIN_START_MS of ramp and runtime (never more time than the job asks). A job of
    several sections (stonewalled or not): its shortest section decides the slices, all
    of them together a fio start."""
    times = fio_slices.section_times(workload)
    shortest_ms = int(1000 * min(runtime for runtime, _ in times))
    per_start = int(1000 * sum(runtime + ramp for runtime, ramp in times)) // MIN_START_MS
    return max(1, min(rounds, shortest_ms // MIN_SLICE_MS, per_start))


Shares = tuple[tuple[int, int], ...]  # each job section's (ms measured, ms of ramp)


def slice_shares(workload: FioWorkload, rounds: int) -> tuple[Shares, Shares]:
    """(a run's first slice, its later ones): each job section's runtime split over the
    rounds; its ramp where it starts cold, in the first slice (its share of the section's
    ramp, at least COLD_RAMP_MS, at most the whole ramp), none in the later ones."""
    times = fio_slices.section_times(workload)
    measured = [int(1000 * runtime / rounds) for runtime, _ in times]
    ramps = [min(int(1000 * ramp), max(int(1000 * ramp) // rounds, COLD_RAMP_MS))
             for _, ramp in times]
    return (tuple(zip(measured, ramps, strict=True)),
            tuple((ms, 0) for ms in measured))


def measured_how(run: RunSpec, campaign: Campaign) -> str:
    """How a workload's runs are measured, in words for the plan: in how many interleaved
    slices, or whole and why."""
    if (why := whole_because(run, campaign, bool(campaign.hosts))) is not None:
        return f"measured whole, not in interleaved slices: {why}"
    assert isinstance(run.workload, FioWorkload)
    rounds = rounds_for(run.workload, campaign.rounds)
    first, later = slice_shares(run.workload, rounds)
    each = "+".join(f"{ms / 1000:g}" for ms, _ in later)
    ramp = sum(r for _, r in first) / 1000
    own = "; its times are the job file's own" if run.workload.raw_job_text else ""
    return (f"in {rounds} interleaved slices of {each} s"
            + (f" ({len(later)} job sections in each, as fio runs them)"
               if len(later) > 1 else "")
            + ", laid out once; "
            + (f"the first slice ramps {ramp:g} s" if ramp else "no ramp") + own)


@dataclass(frozen=True)
class InOnePiece:
    """Each run measured whole: one round, its one slice the workload's own run."""

    steps: Steps
    why: str  # why not in slices (rounds.whole_because), kept in the run's record
    rounds: int = 1

    def prepare(self, part: Participant) -> None:
        """Nothing: the workload prepares its own run."""

    def measure(self, part: Participant, number: int, position: int) -> None:
        self.steps.run_whole(part)

    def output(self, part: Participant) -> RunOutput:
        assert part.output is not None
        if isinstance(part.run.workload, FioWorkload):  # others have no slices to lose
            part.output.metadata.setdefault(MEASURED_WHOLE, {"why": self.why})
        return part.output


@dataclass(frozen=True)
class InSlices:
    """A fio job's runs laid out, then measured a slice per round."""

    workload: FioWorkload
    rounds: int
    first: Shares  # a participant's first slice, which ramps
    later: Shares  # its later slices, which ramp none
    watcher: Watcher

    @classmethod
    def of(cls, workload: FioWorkload, rounds: int, watcher: Watcher) -> InSlices:
        rounds = rounds_for(workload, rounds)
        return cls(workload, rounds, *slice_shares(workload, rounds), watcher)

    def prepare(self, part: Participant) -> None:
        assert part.where is not None and isinstance(part.run.workload, FioWorkload)
        part.metadata = prepare(part.run.workload, part.where, part.run_dir)

    def measure(self, part: Participant, number: int, position: int) -> None:
        assert part.where is not None and isinstance(part.run.workload, FioWorkload)
        shares = self.later if part.slices else self.first  # warm after its first slice
        with observed(self.watcher, part.description) as seen:
            done = fio_slices.run_slice(part.run.workload, part.where, part.run_dir,
                                        number, list(shares))
        part.slices.append({"round": number, "position": position,
                            "seconds": round(done.seconds, 3), "exit_code": done.returncode})
        part.witnesses.append(seen.witness)
        part.disks.append(seen.disks)
        if seen.cpu.seconds == seen.cpu.seconds:
            part.cpu_seconds += seen.cpu.seconds
            part.wall += done.seconds
        if done.returncode != 0:
            part.failed = RunOutput(
                status="failed", reason=fio_slices.failure_line(done, number),
                failure=fio_slices.slice_failure(done, part.run_dir, number))

    def output(self, part: Participant) -> RunOutput:
        """The run's output from its slices: a failed slice's kind and reason, or what
        they measured (the parse stage reads their outputs), and how they ran."""
        failed = part.failed
        output = fio_slices.finish(part.metadata, failed.failure if failed else None,
                                   failed.reason if failed else "")
        if output.status == "ok" and part.wall > 0:
            use = HostCpu(pct=100.0 * part.cpu_seconds / part.wall, seconds=part.cpu_seconds)
            output.metadata["host_cpu"] = keep_host_cpu(use, part.run_dir)
        output.metadata["slices"] = {
            "rounds": self.rounds, "slice_ms": sum(ms for ms, _ in self.later),
            "ramp_ms": sum(ramp for _, ramp in self.first),
            "sections_ms": [ms for ms, _ in self.later],
            "ramp": "in its first slice, where it starts cold; none in the later ones",
            "runs": part.slices,
            "why": "measured in rounds interleaved with the other targets (rounds.py)"}
        output.metadata["primary_metric"] = part.run.workload.primary_metric
        if part.witnesses:
            output.metadata["witness"] = combine(part.witnesses).to_json()
        if disks := diskstats.add_up(part.disks).to_json():
            output.metadata["disk_stats"] = disks
        layout = part.metadata.get("layout_pass")
        part.caches_dropped = isinstance(layout, dict) and bool(layout.get("caches_dropped"))
        return output


def combine(witnesses: list[Witness]) -> Witness:
    """One witness for a run measured in slices: time-weighted over the slices."""
    total = sum(w.seconds for w in witnesses) or 1e-9

    def mean(key: str) -> float:
        values = [(getattr(w, key), w.seconds) for w in witnesses
                  if getattr(w, key) == getattr(w, key)]
        return sum(v * s for v, s in values) / total if values else math.nan

    shares: dict[str, float] = {}  # each slice's busiest process -> its CPU-seconds
    for w in witnesses:
        for busy in w.busiest:
            shares[busy.name] = shares.get(busy.name, 0.0) + busy.cpu_pct * w.seconds / 100
    busiest = [Busy(name, 100 * seconds / total) for name, seconds in
               sorted(shares.items(), key=lambda item: -item[1])[:3]]
    found = Witness(seconds=total, others_cpu_pct=mean("others_cpu_pct"), busiest=busiest,
                    steal_pct=mean("steal_pct"), psi_cpu_pct=mean("psi_cpu_pct"),
                    psi_io_pct=mean("psi_io_pct"), psi_memory_pct=mean("psi_memory_pct"),
                    other_io_bytes_s=mean("other_io_bytes_s"), disk=witnesses[0].disk)
    judge(found)
    return found
