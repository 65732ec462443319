"""Turn a campaign's workload entries into runnable workload objects."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from fslab.workloads.base import Workload
from fslab.workloads.fio import job_file_workload, job_text_workload
from fslab.workloads.suites import get_suite

if TYPE_CHECKING:
    from fslab.campaign import Campaign, WorkloadEntry


def build_workloads(campaign: Campaign) -> list[Workload]:
    """Every workload of the campaign, suites expanded, job files loaded."""
    workloads: list[Workload] = []
    for entry in campaign.workloads:
        if entry.preset:
            suite = get_suite(entry.preset)
            workloads += suite.build(entry.only or list(suite.jobs), campaign.runtime,
                                     campaign.file_size, dict(entry.options))
        elif entry.job_text is not None:  # a resolved campaign keeps the file's text
            name = entry.name or "job"
            workloads.append(job_text_workload(name, entry.job_text, entry.job_file or name))
        else:
            workloads.append(job_file_workload(entry.name or "job", Path(entry.job_file or "")))
    return workloads


def max_numjobs(entries: list[WorkloadEntry]) -> int:
    """The most processes any suite job runs (for sizing files to fit the images)."""
    largest = 1
    for entry in entries:
        if entry.preset:
            suite = get_suite(entry.preset)
            for name in entry.only or suite.jobs:
                largest = max(largest, suite.numjobs[name])
    return largest
