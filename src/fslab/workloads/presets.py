"""Named fio suites. Each preset says what it models and where its parameters come from."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fslab.errors import UserError
from fslab.workloads.fio import FioWorkload


@dataclass(frozen=True)
class Preset:
    """A named suite of fio jobs sharing global options."""

    name: str
    description: str
    global_options: dict[str, Any]
    jobs: dict[str, dict[str, Any]]


BASIC5 = Preset(
    name="basic5",
    description=(
        "The five-job desktop suite of hand-run fio comparisons: random 4 KiB reads and "
        "writes and a 70/30 random mix with 4 threads, sequential 1 MiB reads and writes with "
        "one; buffered synchronous I/O (ioengine=sync), time-based. Buffered writes shorter "
        "than the dirty-page limits measure the page cache as much as the device: set "
        "direct=1 or end_fsync=1 in the workload's options to take it out."
    ),
    global_options={"ioengine": "sync", "time_based": True},
    jobs={
        "randread": {"rw": "randread", "bs": "4k", "numjobs": 4},
        "randwrite": {"rw": "randwrite", "bs": "4k", "numjobs": 4},
        "seqread": {"rw": "read", "bs": "1M", "numjobs": 1},
        "seqwrite": {"rw": "write", "bs": "1M", "numjobs": 1},
        "mixed": {"rw": "randrw", "rwmixread": 70, "bs": "4k", "numjobs": 4},
    },
)

PRESETS: dict[str, Preset] = {preset.name: preset for preset in (BASIC5,)}


def get_preset(name: str) -> Preset:
    """Return a preset by name, or raise a one-line UserError listing the known ones."""
    try:
        return PRESETS[name]
    except KeyError:
        raise UserError(
            f"unknown preset {name!r}: known presets: {', '.join(PRESETS)}"
        ) from None


def preset_workloads(
    name: str,
    *,
    only: list[str] | None,
    runtime: int,
    file_size: int,
    overrides: dict[str, Any] | None = None,
) -> list[FioWorkload]:
    """Resolve a preset into one workload per job, optionally only the named jobs."""
    preset = get_preset(name)
    wanted = only or list(preset.jobs)
    unknown = [job for job in wanted if job not in preset.jobs]
    if unknown:
        raise UserError(
            f"preset {name} has no workload {', '.join(unknown)}: it has {', '.join(preset.jobs)}"
        )
    global_options = {
        **preset.global_options,
        "runtime": runtime,
        "size": f"{file_size // 1024**2}M" if file_size % 1024**2 == 0 else file_size,
        **(overrides or {}),
    }
    return [
        FioWorkload(name=job, options=dict(preset.jobs[job]), global_options=global_options,
                    preset=name)
        for job in wanted
    ]
