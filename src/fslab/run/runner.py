"""Execute a plan: provision targets, run workloads, save each run as it finishes.

Guarantees: every resource goes through the lab session's ledger and is released on
success, error, Ctrl-C and SIGTERM; a failing workload or target is recorded with its
reason and the campaign goes on; each finished run is saved atomically, so a killed
campaign loses at most the run in flight.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from fslab.core.errors import ToolError, UserError
from fslab.core.record import RunRecord
from fslab.host import system
from fslab.host.children import recorded_in
from fslab.host.lab import Lab, Session
from fslab.host.memlimit import memory_limited
from fslab.host.signals import Interrupted, signals_held, signals_unwind
from fslab.host.witness import Watcher
from fslab.plan.levels import path_name
from fslab.plan.order import Plan, RunSpec
from fslab.results.store import ResultsDir
from fslab.run.observing import observed
from fslab.run.participants import Beside
from fslab.run.places import (
    NO_SPACE,
    lacks_space,
    provisioned,
    release,
    unprovisioned,
    working_place,
)
from fslab.run.probes import after_run, before_run
from fslab.run.record import Finished, finished_record, headline_text
from fslab.run.rounds import NotReady, Participant
from fslab.targets import Mounted, Target
from fslab.workloads.base import RunOutput, Where

# metrics.parquet is rewritten after a run at most this often (and always at the end): a
# rewrite grows with the campaign, and each run's run.json — written durably first —
# already holds its values, from which the table is rebuilt on resume.
METRICS_EVERY_S = 2.0


class Progress(Protocol):
    """What the runner tells a progress display."""

    def start(self, runs: Sequence[RunSpec], done: int) -> None: ...
    def run_started(self, run: RunSpec) -> None: ...
    def run_finished(self, run: RunSpec, status: str, reason: str,
                     headline: str = "") -> None: ...


class NoProgress:
    """A progress display that shows nothing (library use, tests)."""

    def start(self, runs: Sequence[RunSpec], done: int) -> None: ...
    def run_started(self, run: RunSpec) -> None: ...
    def run_finished(self, run: RunSpec, status: str, reason: str,
                     headline: str = "") -> None: ...


@dataclass
class RunnerResult:
    """Counts of what happened, and cleanup problems worth telling the user."""

    ok: int = 0
    failed: int = 0
    skipped: int = 0  # already complete (resume)
    reruns: int = 0  # disturbed runs measured again (--rerun-disturbed)
    warnings: list[str] = field(default_factory=list)


@dataclass
class Runner:
    """Runs one plan into one results directory."""

    plan: Plan
    results: ResultsDir
    lab: Lab
    targets: dict[str, Target]
    progress: Progress = field(default_factory=NoProgress)
    host: str = field(default_factory=socket.gethostname)
    hosts: tuple[Any, ...] = ()  # fio servers (distributed.Host) for fio workloads
    _rows: list[dict[str, Any]] = field(default_factory=list)
    _provisions: int = 0
    rerun_disturbed: bool = False  # measure disturbed runs again at their iteration's end
    rerun_unsteady: bool = False  # ... and runs whose throughput stepped or trended
    _metrics_written: float = 0.0  # monotonic time of the last metrics.parquet rewrite
    _metrics_stale: bool = False
    _watcher: Watcher | None = None
    beside: tuple[Beside, ...] = ()  # participants of the rounds (run/participants.py)
    before: list[Callable[[], None]] = field(default_factory=list)  # once, before any run
    # run_id -> (its place, what run_probes recorded before it): rounds save runs later
    _around: dict[str, tuple[Mounted, dict[str, Any] | None]] = field(default_factory=dict)
    _reused: set[str] = field(default_factory=set)  # runs given a file system used before

    def execute(self) -> RunnerResult:
        for step in self.before:  # aging, environment, participants (run/campaign.py)
            step()
        outcome = RunnerResult()
        self._watcher = Watcher(self.lab.root)
        done = self.results.completed_run_ids()
        self._rows = self.results.metric_rows()  # kept in memory: parquet rewritten per run
        outcome.skipped = sum(1 for run in self.plan.runs if run.run_id in done)
        self.progress.start(self.plan.runs, outcome.skipped)
        self.targets = {**self.targets, **{p.name: p.target for p in self.beside}}
        with signals_unwind():
            session = self.lab.open_session()
            mounted: dict[str, Mounted] = {}
            try:
                with recorded_in(session):  # fio and bonnie++ go in its ledger (children.py)
                    self._execute_iterations(session, mounted, done, outcome)
            finally:
                with signals_held():
                    self._write_metrics()
                    for participant in self.beside:
                        participant.store.rebuild_metrics()
                    self._teardown_all(session, mounted, outcome)
                    report = session.close()
                    outcome.warnings += report.errors
        return outcome

    def _execute_iterations(
        self, session: Session, mounted: dict[str, Mounted], done: set[str], outcome: RunnerResult
    ) -> None:
        fresh = self.plan.campaign.fresh
        for iteration in range(1, self.plan.campaign.iterations + 1):
            broken: dict[str, str] = {}  # target -> why it could not be provisioned
            runs = [run for run in self.plan.iteration(iteration) if run.run_id not in done]
            for group in self._groups(runs):
                for run, status, reason in self._execute_group(session, mounted, broken,
                                                               group):
                    outcome.ok += status == "ok"
                    outcome.failed += status != "ok"
                    self.progress.run_finished(run, status, reason, self._headline(run))
                    # After a failure the target may be broken (a dead FUSE daemon, a full
                    # fs): the next run on it gets a fresh one.
                    if fresh == "run" or status == "failed":
                        self._teardown(session, mounted, run.target.name, outcome)
            if self.rerun_disturbed or self.rerun_unsteady:
                self._rerun_disturbed(session, mounted, broken, runs, outcome)
            if fresh == "iteration":  # a place nothing makes fresh (dir:) is kept
                for name in [n for n, place in mounted.items() if not place.keep_files]:
                    self._teardown(session, mounted, name, outcome)

    def _groups(self, runs: list[RunSpec]) -> list[list[RunSpec]]:
        """The iteration's runs in plan order, a sliced job's runs on every target (and
        every variant of a sweep) gathered where its first one stands; a run measured in
        one piece is a group of its own (rounds.py)."""
        groups: list[list[RunSpec]] = []
        gathered: dict[str, list[RunSpec]] = {}
        for run in runs:
            if self._whole(run):
                groups.append([run])
            elif run.job_name in gathered:
                gathered[run.job_name].append(run)
            else:
                gathered[run.job_name] = [run]
                groups.append(gathered[run.job_name])
        return groups

    def _whole(self, run: RunSpec) -> bool:
        from fslab.run.rounds import whole_because

        return whole_because(run, self.plan.campaign, bool(self.hosts)) is not None

    def _execute_group(self, session: Session, mounted: dict[str, Mounted],
                       broken: dict[str, str], group: list[RunSpec]
                       ) -> list[tuple[RunSpec, str, str]]:
        """Measure one group in rounds (a run in one piece: one round of one slice) and
        save each run; (run, status, reason) for each."""
        from fslab.run.rounds import measure_in_rounds

        campaign = self.plan.campaign
        whole = self._whole(group[0])
        runs = []
        for run in group:
            self.progress.run_started(run)
            with self.results.room():
                runs.append((run, self.results.fresh_run_dir(run.run_id)))
        beside, once = {}, set()
        for participant in self.beside if not whole else ():
            for run in participant.runs_beside(group):
                beside[run.run_id] = run
                runs.append((run, participant.store.fresh_run_dir(run.run_id)))
                if not participant.every_round:
                    once.add(run.run_id)
        assert self._watcher is not None
        parts = measure_in_rounds(self, session, mounted, broken, runs, campaign.rounds,
                                  campaign.seed, self._watcher, frozenset(once), whole)
        return [(p.run, self._status_of(p), p.failure or (p.output.reason if p.output
                                                           else "")) for p in parts
                if p.run.run_id not in beside]

    @staticmethod
    def _status_of(part: Participant) -> str:
        if part.output is not None:
            return part.output.status
        return part.status if part.failure else "ok"

    def _rerun_disturbed(self, session: Session, mounted: dict[str, Mounted],
                         broken: dict[str, str], runs: list[RunSpec],
                         outcome: RunnerResult) -> None:
        """Measure the iteration's disturbed runs once more, replacing them (the first
        witness is kept in the new record)."""
        disturbed = {}
        for run in runs:
            record = self.results.run_record(run.run_id)
            if record is not None and ((self.rerun_disturbed and record.disturbed) or (
                    self.rerun_unsteady and record.steady is False)):
                disturbed[run.run_id] = {**record.witness,
                                         "unsteady": record.unsteady_because}
        if not disturbed:
            return
        self._rows = [row for row in self._rows if row["run_id"] not in disturbed]
        for group in self._groups([run for run in runs if run.run_id in disturbed]):
            for run, status, reason in self._execute_group(session, mounted, broken, group):
                record = self.results.run_record(run.run_id)
                if record is not None:
                    record.witness = {**record.witness,
                                      "rerun_of": disturbed.get(run.run_id, {})}
                    self.results.save_run(record)
                outcome.reruns += 1
                self.progress.run_finished(run, status, f"measured again: {reason}".strip())

    def _headline(self, run: RunSpec) -> str:
        """The finished run's primary value, for the progress lines (run/record.py)."""
        metric = run.workload.primary_metric
        return headline_text(self.results.run_record(run.run_id) if metric else None, metric)

    def _provision(self, target: Target, session: Session) -> Mounted:
        self._provisions += 1
        return provisioned(target, session, self._provisions)

    def place_for(self, session: Session, mounted: dict[str, Mounted],
                  broken: dict[str, str], run: RunSpec, run_dir: Path
                  ) -> tuple[Where, dict[str, Any]]:
        """A provisioned target, checked for space and probed, and a fresh working
        directory on it (rounds.Steps): the one place every run gets its target."""
        name, target = run.target.name, self.targets[run.target.name]
        if self.hosts and not run.workload.runs_on_load_nodes:
            raise NotReady(f"{run.workload.family} runs on this machine only; with hosts, "
                           "only fio workloads run on the load nodes", target.describe(),
                           "unsupported")
        if name in broken:
            raise NotReady(broken[name], target.describe())
        place = mounted.get(name)
        self._reused.discard(run.run_id)
        if place is None:
            try:
                place = mounted[name] = self._provision(target, session)
            except (ToolError, OSError, UserError) as exc:
                broken[name] = unprovisioned(name, exc)
                raise NotReady(broken[name], target.describe()) from exc
        else:
            self._reused.add(run.run_id)
        where = self._where(place, run)
        if short := lacks_space(place, run):
            raise NotReady(short, place.description)
        self._around[run.run_id] = (place, before_run(place, run.target.options))
        return where, place.description

    def run_whole(self, session: Session, mounted: dict[str, Mounted],
                  broken: dict[str, str], part: Participant, watcher: Watcher) -> None:
        """A run in one piece (rounds.Steps): caches dropped, in its memory cgroup,
        watched. A reused file system that ran out of space gets one fresh try: earlier
        runs' deleted files were not given back yet (zfs-fuse is slow to)."""
        run = part.run
        try:
            self._run_once(session, part, watcher)
            assert part.output is not None and part.where is not None
            if run.run_id in self._reused and part.output.reason.startswith(NO_SPACE):
                release(part.where)
                self._around.pop(run.run_id, None)
                self.targets[run.target.name].teardown(session, mounted.pop(run.target.name))
                part.where, description = self.place_for(session, mounted, broken, run,
                                                         part.run_dir)
                part.description = {**description,
                                    "reprovisioned": "space not reclaimed after earlier runs"}
                self._run_once(session, part, watcher)
        except NotReady as exc:
            part.output = RunOutput(status=exc.status, reason=str(exc))
            part.description = exc.description
        except (ToolError, OSError, UserError) as exc:
            kind = type(exc).__name__ if isinstance(exc, OSError) else "error"
            part.output = RunOutput(status="failed", reason=f"{kind}: {exc}")

    def _run_once(self, session: Session, part: Participant, watcher: Watcher) -> None:
        run, where = part.run, part.where
        assert where is not None
        part.caches_dropped = run.workload.drops_caches and system.sync_and_drop_caches()
        if not run.workload.watched:  # the simulator's draw: nothing to watch
            part.output = run.workload.run(where, part.run_dir)
            part.output.metadata.setdefault("primary_metric", run.workload.primary_metric)
            return
        with (memory_limited(session, path_name(f"{run.target.name}-{run.workload.name}"),
                             run.workload.memory_limit) as memory_cgroup,
              observed(watcher, part.description) as seen):
            output = run.workload.run(replace(where, memory_cgroup=memory_cgroup),
                                      part.run_dir)
        output.metadata.setdefault("primary_metric", run.workload.primary_metric)
        seen.record(output, part.run_dir,
                    host=not self.hosts and run.workload.measures_host_cpu)
        part.output = output

    def release_place(self, where: Where) -> None:
        release(where)

    def save(self, run: RunSpec, output: RunOutput, description: dict[str, Any],
             started: float, caches_dropped: bool) -> None:
        if run.run_id in self._around:  # the run's files are still there
            place, around = self._around.pop(run.run_id)
            after_run(place, around, output.metadata)
        store = next((p.store for p in self.beside if p.name == run.target.name), None)
        if store is not None:  # a participant's run: saved in its own results
            store.save_run(self._record(run, output, description, started, caches_dropped,
                                        store.run_dir(run.run_id)))
            return
        with self.results.room():
            self._save(run, output, description, started, caches_dropped)

    def _where(self, place: Mounted, run: RunSpec) -> Where:
        return working_place(place, run, self.hosts, self.plan.campaign.run_timeout)

    def _save(
        self, run: RunSpec, output: RunOutput, description: dict[str, Any],
        started: float, caches_dropped: bool,
    ) -> None:
        record = self._record(run, output, description, started, caches_dropped,
                              self.results.run_dir(run.run_id))
        self.results.save_run(record)
        self._rows += record.metrics
        self._metrics_stale = True
        if time.monotonic() - self._metrics_written >= METRICS_EVERY_S:
            self._write_metrics()

    def _record(self, run: RunSpec, output: RunOutput, description: dict[str, Any],
                started: float, caches_dropped: bool, run_dir: Path) -> RunRecord:
        return finished_record(self.plan.campaign, run, output, Finished(
            description, started, caches_dropped, run_dir, self.host))

    def _write_metrics(self) -> None:
        if self._metrics_stale:
            self.results.rebuild_metrics(self._rows)
            self._metrics_stale = False
            self._metrics_written = time.monotonic()

    def _teardown(
        self, session: Session, mounted: dict[str, Mounted], name: str, outcome: RunnerResult
    ) -> None:
        place = mounted.pop(name, None)
        if place is None:
            return
        try:
            self.targets[name].teardown(session, place)
        except (ToolError, OSError) as exc:
            outcome.warnings.append(f"teardown of {name}: {exc}")

    def _teardown_all(
        self, session: Session, mounted: dict[str, Mounted], outcome: RunnerResult
    ) -> None:
        for name in list(mounted):
            self._teardown(session, mounted, name, outcome)


__all__ = ["Interrupted", "NoProgress", "Progress", "Runner", "RunnerResult"]
