"""Execute a plan: provision targets, run workloads, save each run as it finishes.

Guarantees: every resource goes through the lab session's ledger and is released on
success, error, Ctrl-C and SIGTERM; a failing workload or target is recorded with the
kind of its failure and its reason, and the campaign goes on; each finished run is saved
atomically, so a killed campaign loses at most the run in flight.
"""

from __future__ import annotations

import socket
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from fslab.core import stopwatch
from fslab.core.cell_keys import path_name
from fslab.core.errors import Shortage, ToolError, UserError
from fslab.core.failures import Failure, error_failure
from fslab.core.run_parts import TargetDescription
from fslab.host import system
from fslab.host.children import recorded_in, settle
from fslab.host.lab import Lab
from fslab.host.memlimit import memory_limited
from fslab.host.signals import signals_held, signals_unwind
from fslab.host.witness import Watcher
from fslab.plan.order import Plan, RunSpec
from fslab.results.store import ResultsDir
from fslab.run.aging_places import ager_of, aging_text, measured_together
from fslab.run.finished import RunFacts, finished_record, headline_text
from fslab.run.lab_space import campaign_need
from fslab.run.observing import observed
from fslab.run.option_check import Refused
from fslab.run.participants import Beside
from fslab.run.pieces import way_for
from fslab.run.places import Places, apart, release
from fslab.run.rounds import Participant, measure_in_rounds, whole_because
from fslab.targets import Target
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
    def note(self, line: str) -> None: ...


class NoProgress:
    """A progress display that shows nothing (library use, tests)."""

    def start(self, runs: Sequence[RunSpec], done: int) -> None: ...
    def run_started(self, run: RunSpec) -> None: ...
    def run_finished(self, run: RunSpec, status: str, reason: str,
                     headline: str = "") -> None: ...
    def note(self, line: str) -> None: ...


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
    _rows: list[dict[str, object]] = field(default_factory=list)
    rerun_disturbed: bool = False  # measure disturbed runs again at their iteration's end
    rerun_unsteady: bool = False  # ... and runs whose throughput stepped or trended
    _metrics_written: float = 0.0  # monotonic time of the last metrics.parquet rewrite
    _metrics_stale: bool = False
    _watcher: Watcher | None = None
    beside: tuple[Beside, ...] = ()  # participants of the rounds (run/participants.py)
    before: list[Callable[[], None]] = field(default_factory=list)  # once, before any run
    _places: Places | None = None  # the session's targets, provisioned (run/places.py)
    refused: dict[str, Refused] = field(default_factory=dict)  # never made: why (option_check)

    def execute(self) -> RunnerResult:
        for step in self.before:  # aging, environment, participants (run/campaign_run.py)
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
            self._places = Places(self.targets, session, self.hosts,
                                  self.plan.campaign.run_timeout, ager=ager_of(
                                      self.plan, self.results), refused=self.refused,
                                  least_need=campaign_need(self.plan.runs,
                                                           self.targets).least)
            try:
                with recorded_in(session):  # fio and bonnie++ go in its ledger (children.py)
                    self._execute_iterations(done, outcome)
            except Shortage as exc:  # no run is recorded for it: --resume takes them up
                raise Shortage(f"{exc}. The runs that finished are kept: run the same "
                               "command with --resume to go on") from None
            finally:
                unwinding = sys.exc_info()[1] is not None
                with signals_held():
                    unwritten = self._write_tables()  # the lab is released whatever it says
                    for name in list(self._places.mounted):
                        self._teardown(name, outcome)
                    report = session.close()
                    outcome.warnings += report.errors
                    if report.errors and unwinding:  # said now or never
                        for line in report.errors:
                            self.progress.note(f"{line}; `fslab cleanup` releases it once "
                                               "nothing holds it")
                if unwritten is not None and not unwinding:
                    raise unwritten
        return outcome

    def _write_tables(self) -> UserError | None:
        """The metrics tables, rewritten at the end; a results directory that cannot take
        them any more is the error to raise once the lab is released (each run's record
        holds its rows: a resume rebuilds them), never a reason to keep the lab."""
        try:
            with self.results.room():
                self._write_metrics()
            for participant in self.beside:
                with participant.store.room():
                    participant.store.rebuild_metrics()
        except UserError as exc:
            return exc
        return None

    @property
    def places(self) -> Places:
        assert self._places is not None, "places exist while the runner executes"
        return self._places

    def _execute_iterations(self, done: set[str], outcome: RunnerResult) -> None:
        fresh = self.plan.campaign.fresh
        for iteration in range(1, self.plan.campaign.iterations + 1):
            self.places.fresh_start()
            runs = [run for run in self.plan.iteration(iteration) if run.run_id not in done]
            for group in self._groups(runs):
                for run, status, reason in self._execute_group(group):
                    outcome.ok += status == "ok"
                    outcome.failed += status != "ok"
                    self.progress.run_finished(run, status, reason, self._headline(run))
                    # After a failure the target may be broken (a dead FUSE daemon, a full
                    # fs): the next run on it gets a fresh one.
                    if fresh == "run" or status == "failed":
                        self._teardown(run.target.name, outcome)
            if self.rerun_disturbed or self.rerun_unsteady:
                self._rerun_disturbed(runs, outcome)
            if fresh == "iteration":  # a place nothing makes fresh (dir:) is kept
                for name in [n for n, place in self.places.mounted.items()
                             if not place.keep_files]:
                    self._teardown(name, outcome)

    def _groups(self, runs: list[RunSpec]) -> list[list[RunSpec]]:
        """The iteration's runs in plan order, a sliced job's runs on every target (and
        every variant of a sweep) gathered where its first one stands, and so a tree
        workload's runs on an aged level and its twin (run/aging_places.py); any other
        run measured in one piece is a group of its own (rounds.py); runs on targets
        that share something at different levels (a zfs-fuse daemon's ARC) apart
        (places.apart)."""
        groups: list[list[RunSpec]] = []
        gathered: dict[object, list[RunSpec]] = {}
        for run in runs:
            key: object = run.job_name
            if whole_because(run, self.plan.campaign, bool(self.hosts)) is not None:
                key = measured_together(run)  # an aged tree's runs and its twin's
            if key is None:
                groups.append([run])
            elif key in gathered:
                gathered[key].append(run)
            else:
                gathered[key] = [run]
                groups.append(gathered[key])
        return apart(groups, lambda run: self.targets[run.target.name].shares())

    def _execute_group(self, group: list[RunSpec]) -> list[tuple[RunSpec, str, str]]:
        """Measure one group in rounds (a run in one piece: one round of one slice) and
        save each run; (run, status, reason) for each."""
        campaign = self.plan.campaign
        runs = []
        for run in group:
            self.progress.run_started(run)
            with self.results.room():
                runs.append((run, self.results.fresh_run_dir(run.run_id)))
        beside, once = set(), set()
        for participant in self.beside:
            for run in participant.runs_beside(group):
                beside.add(run.run_id)
                runs.append((run, participant.store.fresh_run_dir(run.run_id)))
                if not participant.every_round:
                    once.add(run.run_id)
        assert self._watcher is not None
        way = way_for(self, group[0], campaign, bool(self.hosts), self._watcher)
        with self.results.room():  # a slice writes into its run's directory too
            parts = measure_in_rounds(self, way, runs, campaign.seed, frozenset(once))
        return [(p.run, p.status, p.reason) for p in parts if p.run.run_id not in beside]

    def _rerun_disturbed(self, runs: list[RunSpec], outcome: RunnerResult) -> None:
        """Measure the iteration's disturbed runs once more, replacing them (the first
        witness is kept in the new record)."""
        disturbed = {}
        for run in runs:
            record = self.results.run_record(run.run_id)
            if record is not None and ((self.rerun_disturbed and record.disturbed) or (
                    self.rerun_unsteady and record.steady is False)):
                disturbed[run.run_id] = replace(record.witness,
                                                unsteady=record.unsteady_because)
        if not disturbed:
            return
        self._rows = [row for row in self._rows if row["run_id"] not in disturbed]
        for group in self._groups([run for run in runs if run.run_id in disturbed]):
            for run, status, reason in self._execute_group(group):
                record = self.results.run_record(run.run_id)
                if record is not None:
                    record.witness = replace(record.witness,
                                             rerun_of=disturbed.get(run.run_id))
                    with self.results.room():
                        self.results.save_run(record)
                outcome.reruns += 1
                self.progress.run_finished(run, status, f"measured again: {reason}".strip())

    def _headline(self, run: RunSpec) -> str:
        """The finished run's primary value, for the progress lines (run/finished.py), and
        the aging of the place made for it (aging time is machine time)."""
        metric = run.workload.primary_metric
        record = self.results.run_record(run.run_id)
        return headline_text(record if metric else None, metric) + aging_text(record)

    def place_for(self, run: RunSpec) -> tuple[Where, TargetDescription]:
        return self.places.place_for(run)

    def run_whole(self, part: Participant) -> None:
        """A run in one piece (rounds.Steps): caches dropped, in its memory cgroup,
        watched."""
        try:
            self._run_once(part)
        except (ToolError, OSError, UserError) as exc:
            kind = type(exc).__name__ if isinstance(exc, OSError) else "error"
            part.output = RunOutput(status="failed", reason=f"{kind}: {exc}",
                                    failure=error_failure(exc))

    def _run_once(self, part: Participant) -> None:
        run, where = part.run, part.where
        assert where is not None
        settle()  # a workload may measure in fslab's own process: nothing else beside it
        part.caches_dropped = run.workload.drops_caches and system.sync_and_drop_caches()
        if not run.workload.watched:  # the simulator's draw: nothing to watch
            with stopwatch.step(stopwatch.MEASURE):
                part.output = run.workload.run(where, part.run_dir)
            part.output.metadata.setdefault("primary_metric", run.workload.primary_metric)
            return
        with (memory_limited(self.places.session,
                             path_name(f"{run.target.name}-{run.workload.name}"),
                             run.workload.memory_limit) as memory_cgroup,
              observed(self._watcher_now(), part.description) as seen,
              stopwatch.step(stopwatch.MEASURE)):  # a workload's own steps apart (fio's)
            output = run.workload.run(replace(where, memory_cgroup=memory_cgroup),
                                      part.run_dir)
        output.metadata.setdefault("primary_metric", run.workload.primary_metric)
        seen.record(output, part.run_dir,
                    host=not self.hosts and run.workload.measures_host_cpu)
        part.output = output

    def _watcher_now(self) -> Watcher:
        assert self._watcher is not None
        return self._watcher

    def release_place(self, where: Where) -> None:
        release(where)

    def save(self, part: Participant, output: RunOutput) -> None:
        """The run's probes after it, its working files released, its record (parsed
        from what it left) written: the record step in its steps."""
        run = part.run
        store = self._store_of(run.target.name)
        if why := self.places.hung(run.target.name, part.started):  # the cause, not fio's
            output = RunOutput(status="failed", reason=why, metadata=output.metadata,
                               failure=Failure.HUNG)
        with stopwatch.timing(part.watch), stopwatch.step(stopwatch.RECORD):
            self.places.after(run.run_id, output.metadata)
            if part.where is not None:
                release(part.where)
            record = finished_record(self.plan.campaign, run, output, RunFacts(
                part.description, part.started, part.caches_dropped,
                store.run_dir(run.run_id), self.host))
        record.steps = part.watch.rounded()
        part.status, part.reason = record.status, record.reason
        if store is not self.results:  # a participant's run: saved in its own results
            with store.room():
                store.save_run(record)
            return
        with self.results.room():
            self.results.save_run(record)
            self._rows += record.metrics
            self._metrics_stale = True
            if time.monotonic() - self._metrics_written >= METRICS_EVERY_S:
                self._write_metrics()

    def _store_of(self, target: str) -> ResultsDir:
        """Where runs on `target` are saved: a participant's own results, or the campaign's."""
        return next((p.store for p in self.beside if p.name == target), self.results)

    def _write_metrics(self) -> None:
        if self._metrics_stale:
            self.results.rebuild_metrics(self._rows)
            self._metrics_stale = False
            self._metrics_written = time.monotonic()

    def _teardown(self, name: str, outcome: RunnerResult) -> None:
        """Release `name`'s place; its time joins the steps of the run it was made for."""
        try:
            made = self.places.teardown(name)
        except (ToolError, OSError) as exc:
            outcome.warnings.append(f"teardown of {name}: {exc}")
            return
        if made is None or not made[0]:
            return
        run_id, seconds = made
        store = self._store_of(name)
        record = store.run_record(run_id)
        if record is not None:
            record.steps[stopwatch.TEARDOWN] = round(
                record.steps.get(stopwatch.TEARDOWN, 0.0) + seconds, 3)
            try:
                with store.room():
                    store.save_run(record)
            except UserError:  # the next write says so; nothing here may keep the lab
                outcome.warnings.append(f"the teardown time of {name} was not recorded")


__all__ = ["NoProgress", "Progress", "Runner", "RunnerResult"]
