"""Turn a campaign's workload entries into runnable workload objects."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from fslab.workloads.base import Workload
from fslab.workloads.fio import job_file_workload, job_text_workload
from fslab.workloads.suites import get_suite

if TYPE_CHECKING:
    from fslab.plan.schema import Campaign, WorkloadEntry


def build_workloads(campaign: Campaign) -> list[Workload]:
    """Every workload of the campaign, suites expanded, job files loaded (no sweep: the
    plan's workloads are plan.sweep.workload_variants)."""
    return [w for entry in campaign.workloads for w in build_entry(campaign, entry)]


def build_entry(campaign: Campaign, entry: WorkloadEntry) -> list[Workload]:
    """The workloads one [[workload]] entry expands to."""
    if entry.preset:
        suite = get_suite(entry.preset)
        return suite.build(entry.only or suite.job_names(entry.options), campaign.runtime,
                           campaign.file_size, dict(entry.options), campaign.seed,
                           campaign.scale == "published")
    if entry.job_text is not None:  # a resolved campaign keeps the file's text
        name = entry.name or "job"
        return [job_text_workload(name, entry.job_text, entry.job_file or name)]
    return [job_file_workload(entry.name or "job", Path(entry.job_file or ""))]
