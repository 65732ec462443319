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
"""

from __future__ import annotations

import dataclasses
from typing import Any

from fslab import system
from fslab.campaign import Campaign
from fslab.lab import Lab
from fslab.plan import Plan, make_plan
from fslab.store import ResultsDir
from fslab.targets import IMAGE_LESS, TargetSpec, make_target
from fslab.workloads.fio import FioWorkload

CEILING_DIR = "ceiling"
CEILING_TARGET = "ceiling-raw"
CEILING_METRICS = ("iops", "bw_bytes")
CEILING_REPEATS = 2


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


def measure_ceilings(plan: Plan, lab: Lab, results: ResultsDir,
                     known: dict[str, Any] | None = None) -> dict[str, Any]:
    """{device: {workload: {op: {metric: value}}}}: measured now for the jobs without one."""
    workloads = ceiling_workloads(plan)
    device = lab_device(lab)
    ceilings = {k: dict(v) for k, v in (known or {}).items()}
    have = ceilings.setdefault(device, {})
    missing = [w for w in workloads if w.name not in have]
    if not missing:
        return ceilings
    spec = TargetSpec(name=CEILING_TARGET, fs="raw", size=ceiling_size(plan, missing),
                      options={"direct_io": True})
    # Twice, each on a freshly filled image (the data just written, as a file system's
    # files are just laid out before its run), and the larger kept: one measurement of
    # this disk swings enough to mark sound results cache-bound.
    campaign: Campaign = dataclasses.replace(plan.campaign, targets=[spec],
                                             iterations=CEILING_REPEATS, fresh="run")
    # What the device delivers: O_DIRECT always (a buffered job on the raw device would
    # measure the block device's own page cache).
    direct = [dataclasses.replace(w, global_options={**w.global_options, "direct": 1})
              for w in missing]
    sub_plan = make_plan(campaign, list(direct))
    path = results.path / CEILING_DIR
    store = ResultsDir.open(path) if (path / "format.json").exists() else ResultsDir.create(path)
    from fslab.runner import Runner

    Runner(sub_plan, store, lab, {CEILING_TARGET: make_target(spec)}).execute()
    metrics = store.load_metrics()
    for row in metrics[metrics["metric"].isin(CEILING_METRICS)].itertuples():
        cell = have.setdefault(str(row.workload), {}).setdefault(str(row.op), {})
        cell[str(row.metric)] = max(float(row.value), cell.get(str(row.metric), 0.0))
    return ceilings


MIN_CEILING_IMAGE = 64 * 1024**2


def ceiling_size(plan: Plan, workloads: list[FioWorkload]) -> int:
    """The raw image: room for the largest job's regions (each job gets its own region of
    the device, as it gets its own file on a file system), at most the campaign's image."""
    need = max((w.required_bytes() for w in workloads), default=0)
    size = max(MIN_CEILING_IMAGE, need + need // 8)
    return min(plan.campaign.image_size, -(-size // 2**20) * 2**20)


def ceiling_of(ceilings: dict[str, Any], workload: str, op: str, metric: str) -> float | None:
    """The largest ceiling measured for a workload's op and metric on any device (None if
    none). Sections of a job (`<job>/<section>`) were measured as such."""
    values = [ops.get(workload, {}).get(op, {}).get(metric)
              for ops in ceilings.values() if isinstance(ops, dict)]
    values = [float(v) for v in values if isinstance(v, (int, float))]
    return max(values) if values else None
