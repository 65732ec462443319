"""Workloads: one registry of named suites (fio presets and fslab's own workloads, in
suites.py), user job files, and the null workload."""

from fslab.workloads.base import RunOutput, Workload
from fslab.workloads.fio import FioWorkload, job_file_workload
from fslab.workloads.null import NullWorkload
from fslab.workloads.suites import SUITES, Suite, get_suite

__all__ = [
    "SUITES",
    "FioWorkload",
    "NullWorkload",
    "RunOutput",
    "Suite",
    "Workload",
    "get_suite",
    "job_file_workload",
]
