"""The ceiling: what the device under the loop images delivers for each fio job, measured
per campaign and device, so that a result above it is called what it is.

A file system on a loop image cannot be faster than the disk the image lives on; a
result that is, came from a cache (the page cache, the host's or the hypervisor's).
Before the campaign's runs, each of its fio preset jobs runs twice, with O_DIRECT, on a
`raw` target: a loop device with direct I/O over an image filled just before, large
enough for the job's regions, in the lab directory (so on the same disk as the images);
the larger result is the ceiling. The runs are kept in DIR/ceiling/ (a results
directory of its own: raw output beside parsed values) and their IOPS and bandwidth in
environment.json under "ceilings", keyed by the lab's device.

A job measured in interleaved rounds (rounds.py) has its ceiling measured in the same
rounds instead: the raw device is one more participant (run/participants.py), in each
round of the first CEILING_ITERATIONS iterations, so each cell is compared with what the
disk delivered in the same moments, not minutes earlier (one measurement at the start is
as noisy as the cells). Those values are kept per
iteration ("ceilings_by_iteration": {workload: {op: {metric: {iteration: value}}}}) and
analysis.cells.cachebound pairs them with the cells' values of the same iteration.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from fslab.core.environment_record import ByIteration, Ceilings
from fslab.host import system
from fslab.host.lab import Lab
from fslab.plan.order import Plan, RunSpec, make_plan
from fslab.plan.schema import Campaign
from fslab.results.store import ResultsDir
from fslab.run.ceiling_cache import job_key, remember, reusable
from fslab.run.rounds import whole_because
from fslab.run.runner import Runner
from fslab.targets import IMAGE_LESS, Target, TargetSpec, make_target
from fslab.workloads.fio import FioWorkload

CEILING_DIR = "ceiling"
CEILING_TARGET = "ceiling-raw"
CEILING_METRICS = ("iops", "bw_bytes")
CEILING_REPEATS = 2
# The ceiling joins the rounds of the first iterations only. It answers a coarse question
# (is a cell above 1.25x the disk?) from each iteration's ratio to it, and paired in the
# same rounds two iterations answer it; in all five of the default campaign it took 99 s
# of its 451 s of machine time (2026-11-27), more than any step but the measuring.
CEILING_ITERATIONS = 2


def lab_device(lab: Lab) -> str:
    """The device (or file system source) that holds the lab directory."""
    _, source, _ = system.containing_mount(lab.root)
    return source if source and source != "unknown" else str(lab.root)


def ceiling_workloads(plan: Plan) -> list[FioWorkload]:
    """The fio preset jobs whose results a ceiling can bound: those run on loop images in
    the lab (not on real devices or directories, whose disk fslab does not measure)."""
    on_images = any(t.fs not in IMAGE_LESS and t.fs != "raw" and not t.device
                    for t in plan.campaign.targets)
    if not on_images or plan.campaign.hosts:
        return []
    found: dict[str, FioWorkload] = {}
    for run in plan.runs:
        workload = run.workload
        if isinstance(workload, FioWorkload) and workload.raw_job_text is None:
            found.setdefault(workload.name, workload)
    return list(found.values())


def in_rounds(plan: Plan, workload: FioWorkload) -> bool:
    """Whether this job's ceiling is measured in its rounds (not before the campaign)."""
    runs = [run for run in plan.runs if run.workload.name == workload.name]
    return bool(runs) and whole_because(runs[0], plan.campaign, bool(plan.campaign.hosts)) \
        is None


@dataclass
class CeilingBeside:
    """The raw device as a participant of the campaign (run/participants.py): one more
    participant in each sliced job's rounds, and before the campaign the two runs of each
    job not measured in rounds; at its end, what it measured joins environment.json."""

    spec: TargetSpec
    target: Target
    store: ResultsDir
    workloads: dict[str, FioWorkload]  # the jobs measured in rounds, by name, direct I/O
    plan: Plan
    results: ResultsDir
    lab: Lab
    resume: bool
    # In every round, as a target: one slice of this disk swings too much (a sampled
    # ceiling marked direct-I/O cells cache-bound on a busy machine).
    every_round: bool = True

    @property
    def name(self) -> str:
        return self.spec.name

    def runs_beside(self, group: list[RunSpec]) -> list[RunSpec]:
        """The ceiling's runs for the rounds `group` is measured in: one per variant of
        the job (a swept iodepth has a ceiling of its own at each level), in the first
        CEILING_ITERATIONS iterations. A tuner's race measures each round as a campaign of
        its own from iteration N on: a configuration first measured after the second
        round is held against the largest ceiling measured in rounds (cachebound)."""
        out: list[RunSpec] = []
        if min(run.iteration for run in group) > CEILING_ITERATIONS:
            return out
        for run in {run.workload.name: run for run in group}.values():
            workload = self.workloads.get(run.workload.name)
            if workload is not None:
                out.append(RunSpec(run.iteration, -1, self.spec, workload,
                                   run.workload_levels, run.job))
        return out

    def before(self) -> None:
        """The ceiling of each job not measured in rounds, measured now (or reused)."""
        if not [w for w in ceiling_workloads(self.plan) if not in_rounds(self.plan, w)]:
            return
        environment = self.results.environment()
        environment.ceilings, reused = measure_ceilings(
            self.plan, self.lab, self.results, environment.ceilings if self.resume else None)
        if reused:  # from the lab's ceilings.json: named, so a reader knows
            environment.ceilings_reused = sorted({*environment.ceilings_reused, *reused})
        self.results.write_environment(environment)

    def finish(self) -> None:
        record_round_ceilings(self.results, self.store, self.lab)


def ceiling_beside(plan: Plan, results: ResultsDir, lab: Lab,
                   resume: bool) -> CeilingBeside | None:
    """The ceiling participant (None: --no-ceiling, or no job it can bound)."""
    if not plan.campaign.ceiling:
        return None
    every = ceiling_workloads(plan)
    if not every:
        return None
    workloads = [w for w in every if in_rounds(plan, w)]
    spec = _raw_spec(plan, workloads or every)
    return CeilingBeside(spec, make_target(spec), _store(results),
                         {w.name: w for w in _direct(workloads)}, plan, results, lab, resume)


def by_iteration(store: ResultsDir) -> ByIteration:
    """{workload: {op: {metric: {iteration: value}}}} of the ceilings measured in rounds."""
    found: ByIteration = {}
    metrics = store.load_metrics()
    rounds = {record.run_id for record in store.run_records()
              if record.workload_metadata.sliced}
    rows = metrics[metrics["metric"].isin(CEILING_METRICS) & metrics["run_id"].isin(rounds)]
    for (workload, op, metric, iteration), value in rows.groupby(
            ["workload", "op", "metric", "iteration"], observed=True)["value"].mean().items():
        found.setdefault(str(workload), {}).setdefault(str(op), {}).setdefault(
            str(metric), {})[str(int(iteration))] = float(value)
    return found


def fold_in(ceilings: Ceilings, device: str, measured: ByIteration) -> None:
    """Add the ceilings measured in rounds to the per-device ones (the largest kept, as
    for the ceilings measured before the campaign)."""
    have = ceilings.setdefault(device, {})
    for workload, ops in measured.items():
        for op, metrics in ops.items():
            cell = have.setdefault(workload, {}).setdefault(op, {})
            for metric, values in metrics.items():
                cell[metric] = max([*values.values(), cell.get(metric, 0.0)])


def record_round_ceilings(results: ResultsDir, store: ResultsDir, lab: Lab) -> None:
    """environment.json with the ceilings measured in rounds: per iteration, and folded
    into the lab device's (the largest, as before the campaign)."""
    measured = by_iteration(store)
    if not measured:
        return
    environment = results.environment()
    environment.ceilings_by_iteration = measured
    fold_in(environment.ceilings, lab_device(lab), measured)
    results.write_environment(environment)


def measure_ceilings(plan: Plan, lab: Lab, results: ResultsDir,
                     known: Ceilings | None = None) -> tuple[Ceilings, list[str]]:
    """({device: {workload: {op: {metric: value}}}}, the jobs whose ceiling the lab's
    ceilings.json gave): measured now for the jobs without one (the jobs measured in
    rounds have theirs measured there; ceiling_cache: reused while device and job are
    the same)."""
    workloads = [w for w in ceiling_workloads(plan) if not in_rounds(plan, w)]
    device = lab_device(lab)
    ceilings = {k: dict(v) for k, v in (known or {}).items()}
    have = ceilings.setdefault(device, {})
    keys = {w.name: job_key(direct, ceiling_size(plan, [w]))
            for w, direct in zip(workloads, _direct(workloads), strict=True)}
    reused = []
    for workload in workloads:
        cached = None if workload.name in have else reusable(lab.root, device,
                                                             keys[workload.name])
        if cached is not None:
            have[workload.name] = cached
            reused.append(workload.name)
    missing = [w for w in workloads if w.name not in have]
    if not missing:
        return ceilings, reused
    spec = _raw_spec(plan, missing)
    # Twice, each on a freshly filled image (the data just written, as a file system's
    # files are just laid out before its run), and the larger kept: one measurement of
    # this disk swings enough to mark sound results cache-bound.
    campaign: Campaign = dataclasses.replace(plan.campaign, targets=[spec],
                                             iterations=CEILING_REPEATS, fresh="run")
    # What the device delivers: O_DIRECT always (a buffered job on the raw device would
    # measure the block device's own page cache).
    sub_plan = make_plan(campaign, list(_direct(missing)))
    store = _store(results)

    Runner(sub_plan, store, lab, {CEILING_TARGET: make_target(spec)}).execute()
    metrics = store.load_metrics()
    for row in metrics[metrics["metric"].isin(CEILING_METRICS)].itertuples():
        cell = have.setdefault(str(row.workload), {}).setdefault(str(row.op), {})
        cell[str(row.metric)] = max(float(row.value), cell.get(str(row.metric), 0.0))
    remember(lab.root, device, {keys[w.name]: (w.name, have[w.name])
                                for w in missing if have.get(w.name)})
    return ceilings, reused


def _raw_spec(plan: Plan, workloads: list[FioWorkload]) -> TargetSpec:
    return TargetSpec(name=CEILING_TARGET, fs="raw", size=ceiling_size(plan, workloads),
                      options={"direct_io": True})


def _direct(workloads: list[FioWorkload]) -> list[FioWorkload]:
    return [dataclasses.replace(w, global_options={**w.global_options, "direct": 1})
            for w in workloads]


def _store(results: ResultsDir) -> ResultsDir:
    path = results.path / CEILING_DIR
    return ResultsDir.open(path) if (path / "format.json").exists() else ResultsDir.create(path)


MIN_CEILING_IMAGE = 64 * 1024**2


def ceiling_size(plan: Plan, workloads: list[FioWorkload]) -> int:
    """The raw image: room for the largest job's regions (each job gets its own region of
    the device, as it gets its own file on a file system), at most the campaign's image."""
    need = max((w.required_bytes() for w in workloads), default=0)
    size = max(MIN_CEILING_IMAGE, need + need // 8)
    return min(plan.campaign.image_size, -(-size // 2**22) * 2**22)  # whole 4 MiB: fast fill
