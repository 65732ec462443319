"""Workload families: fio presets, user job files, and the null workload."""

from fslab.workloads.base import RunOutput, Workload
from fslab.workloads.fio import FioWorkload, job_file_workload
from fslab.workloads.null import NullWorkload
from fslab.workloads.presets import PRESETS, get_preset, preset_workloads

__all__ = [
    "PRESETS",
    "FioWorkload",
    "NullWorkload",
    "RunOutput",
    "Workload",
    "get_preset",
    "job_file_workload",
    "preset_workloads",
]
