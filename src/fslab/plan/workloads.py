"""Turn a campaign's workload entries into runnable workload objects."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from fslab.workloads.base import Workload
from fslab.workloads.fio import job_file_workload, job_text_workload
from fslab.workloads.suites import get_suite

if TYPE_CHECKING:
    from fslab.plan.model import Campaign


def build_workloads(campaign: Campaign) -> list[Workload]:
    """Every workload of the campaign, suites expanded, job files loaded."""
    workloads: list[Workload] = []
    for entry in campaign.workloads:
        if entry.preset:
            suite = get_suite(entry.preset)
            workloads += suite.build(entry.only or suite.job_names(entry.options),
                                     campaign.runtime, campaign.file_size,
                                     dict(entry.options), campaign.seed,
                                     campaign.scale == "published")
        elif entry.job_text is not None:  # a resolved campaign keeps the file's text
            name = entry.name or "job"
            workloads.append(job_text_workload(name, entry.job_text, entry.job_file or name))
        else:
            workloads.append(job_file_workload(entry.name or "job", Path(entry.job_file or "")))
    return workloads
