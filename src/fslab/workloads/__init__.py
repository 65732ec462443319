"""Workloads: one lookup of named suites (fio's presets in suites.py; fslab's other
workloads each a plug-in module declaring its own suite), user job files, and the null
workload."""

from fslab.workloads.base import RunOutput, Workload
from fslab.workloads.fio import FioWorkload, job_file_workload
from fslab.workloads.null import NullWorkload
from fslab.workloads.suites import Suite, get_suite, suites

__all__ = [
    "FioWorkload",
    "NullWorkload",
    "RunOutput",
    "Suite",
    "Workload",
    "get_suite",
    "job_file_workload",
    "suites",
]
