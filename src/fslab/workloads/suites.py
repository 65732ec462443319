"""Every named suite a campaign can ask for: fio presets and fslab's own workloads."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fslab.errors import UserError
from fslab.units import parse_size
from fslab.workloads.base import Workload
from fslab.workloads.bonnie import BonnieWorkload
from fslab.workloads.files import FilesWorkload
from fslab.workloads.presets import (
    CAMPAIGN,
    FIO_DEFAULT,
    PRESETS,
    Preset,
    job_numjobs,
    preset_workloads,
)
from fslab.workloads.smallfiles import SmallFilesWorkload

MiB = 1024**2
# (jobs wanted, runtime s, file size, the [[workload]] options, the campaign's seed)
Builder = Callable[[list[str], int, int, dict[str, Any], int], list[Workload]]


@dataclass(frozen=True)
class Suite:
    """A named group of workloads, listed by `fslab presets`."""

    name: str
    description: str
    source: str
    jobs: dict[str, str]  # job name -> its parameters, for listing
    numjobs: dict[str, int]
    build: Builder
    options: str = ""  # the options a [[workload]] table may set
    # The job names a [[workload]] table with these options expands to (a suite whose
    # jobs depend on its options, like the simulator's `jobs = N`); default: `jobs`.
    names: Callable[[dict[str, Any]], list[str]] | None = None

    def job_names(self, options: dict[str, Any] | None = None) -> list[str]:
        """Every job this suite runs with `options`."""
        return self.names(options or {}) if self.names else list(self.jobs)

    def numjobs_of(self, job: str) -> int:
        """The processes a job runs (1 for jobs not listed, e.g. generated ones)."""
        return self.numjobs.get(job, 1)


def _fio_suite(preset: Preset) -> Suite:
    def build(only: list[str], runtime: int, file_size: int,
              options: dict[str, Any], seed: int) -> list[Workload]:
        return list(preset_workloads(preset, only=only, runtime=runtime,
                                     file_size=file_size, overrides=options))

    def shown(job: str, key: str, value: Any) -> str:
        text = f"{key}={int(value) if isinstance(value, bool) else value}"
        return f"{text} [{preset.source_of(job, key)}]"

    jobs = {}
    for name, sections in preset.jobs.items():
        parts = ["; ".join(shown(name, k, v) for k, v in section.items()
                           if v is not None and k != "_section") for section in sections]
        shared = [shown(name, k, v) for k, v in preset.global_options.items()]
        shared += [f"{k}={v} [{FIO_DEFAULT}]" for k, v in preset.unstated.items()
                   if not any(k in section for section in sections)]
        shared += [f"runtime, size [{CAMPAIGN}]"] if preset.sized else [f"runtime [{CAMPAIGN}]"]
        jobs[name] = " | ".join(parts) + " — " + "; ".join(shared)
    return Suite(preset.name, preset.description, preset.source, jobs,
                 {name: job_numjobs(preset, name) for name in preset.jobs}, build,
                 options="any fio option (applied to [global])")


def _pick(only: list[str], workloads: list[Workload]) -> list[Workload]:
    return [w for w in workloads if w.name in only]


def _files(only: list[str], runtime: int, file_size: int,
           options: dict[str, Any], seed: int) -> list[Workload]:
    _only_keys(options, {"small_size", "large_size", "small_count", "large_count", "flush"},
               "files")
    flush = str(options.get("flush", "fdatasync"))
    return _pick(only, [
        FilesWorkload("files_small", parse_size(options.get("small_size", "10M")),
                      int(options.get("small_count", 20)), flush),
        FilesWorkload("files_large", parse_size(options.get("large_size", "100M")),
                      int(options.get("large_count", 5)), flush),
    ])


def _smallfiles(only: list[str], runtime: int, file_size: int,
                options: dict[str, Any], seed: int) -> list[Workload]:
    _only_keys(options, {"count", "files_per_dir", "sizes"}, "smallfiles")
    count = int(options.get("count", 100_000))
    per_dir = int(options.get("files_per_dir", 1000))
    return _pick(only, [SmallFilesWorkload("smallfiles_4k", count, 4096, per_dir),
                        SmallFilesWorkload("smallfiles_128k", count, 128 * 1024, per_dir)])


def _bonnie(only: list[str], runtime: int, file_size: int,
            options: dict[str, Any], seed: int) -> list[Workload]:
    _only_keys(options, {"file_size", "files_k"}, "bonnie")
    size = parse_size(options["file_size"]) if "file_size" in options else file_size
    return _pick(only, [BonnieWorkload("bonnie", size, int(options.get("files_k", 4)))])


def _agedfiles(only: list[str], runtime: int, file_size: int,
               options: dict[str, Any], seed: int) -> list[Workload]:
    from fslab.workloads.agedfiles import AgedFilesWorkload

    _only_keys(options, {"count", "size", "seed"}, "agedfiles")
    count = int(options.get("count", 0))
    size = parse_size(options.get("size", "64K"))
    seed = int(options.get("seed", 1))
    return _pick(only, [
        AgedFilesWorkload("aged_readall", "readall", count, size, seed),
        AgedFilesWorkload("aged_overwrite", "overwrite", count or 500, size, seed),
        AgedFilesWorkload("aged_append", "append", count or 500, size, seed),
        AgedFilesWorkload("aged_create", "create", count or 1000, size, seed),
    ])


def _scan(only: list[str], runtime: int, file_size: int,
          options: dict[str, Any], seed: int) -> list[Workload]:
    from fslab.workloads.scan import ScanWorkload

    _only_keys(options, {"subdir"}, "scan")
    return _pick(only, [ScanWorkload("scan", str(options.get("subdir", "")))])


def _null_names(options: dict[str, Any]) -> list[str]:
    return [f"w{i}" for i in range(1, int(options.get("jobs", 1)) + 1)]


def _null(only: list[str], runtime: int, file_size: int,
          options: dict[str, Any], seed: int) -> list[Workload]:
    from fslab.workloads.null import simulated_jobs

    _only_keys(options, {"jobs", "iops", "cv", "drift"}, "null")
    return _pick(only, list[Workload](simulated_jobs(options, seed)))


def _only_keys(options: dict[str, Any], allowed: set[str], suite: str) -> None:
    unknown = sorted(set(options) - allowed)
    if unknown:
        raise UserError(f"{suite}: unknown option {', '.join(unknown)} "
                        f"(allowed: {', '.join(sorted(allowed))})")


SUITES: dict[str, Suite] = {
    **{name: _fio_suite(preset) for name, preset in PRESETS.items()},
    "files": Suite(
        "files",
        "Write a file of random data N times, each sample timed with its end-of-file flush "
        "(none, fdatasync or O_DIRECT), and read each back with caches dropped.",
        "USB-stick study: 10 MiB and 100 MiB files of random data, 500 and 250 samples",
        {"files_small": "10 MiB × 20 samples, flush fdatasync",
         "files_large": "100 MiB × 5 samples, flush fdatasync"},
        {"files_small": 1, "files_large": 1}, _files,
        options="small_size, large_size, small_count, large_count, flush"),
    "smallfiles": Suite(
        "smallfiles",
        "Create K files of S bytes over directories of 1,000, then rewrite, read (cold) "
        "and delete them; files/s per phase and the sync time after it.",
        "the 100,000-file create/rewrite/read/delete test at 4 KiB and 128 KiB",
        {"smallfiles_4k": "100,000 × 4 KiB", "smallfiles_128k": "100,000 × 128 KiB"},
        {"smallfiles_4k": 1, "smallfiles_128k": 1}, _smallfiles,
        options="count, files_per_dir"),
    "agedfiles": Suite(
        "agedfiles",
        "Touch the aged file system's own files: read every file cold, overwrite and "
        "append to existing files, create new files in the fragmented free space.",
        "file-system aging studies (a recursive grep over the aged tree; rewrites)",
        {"aged_readall": "read every file under aged/ after dropping caches",
         "aged_overwrite": "overwrite 500 seeded-chosen files in place, fdatasync each",
         "aged_append": "append 64 KiB to 500 files, fdatasync each",
         "aged_create": "create 1,000 new files (lognormal sizes up to 64 KiB)"},
        {"aged_readall": 1, "aged_overwrite": 1, "aged_append": 1, "aged_create": 1},
        _agedfiles, options="count, size, seed"),
    "scan": Suite(
        "scan",
        "Drop caches, then read every file of the target's tree in directory order (as "
        "grep -r or a backup does): bytes/s, files/s and the dynamic layout score of that "
        "read order (FIEMAP). For aged images against fresh copies of their files.",
        "file-system aging studies (Conway et al., FAST '17: a cold recursive scan)",
        {"scan": "walk the tree in readdir order, read every file, caches dropped first"},
        {"scan": 1}, _scan, options="subdir"),
    "bonnie": Suite(
        "bonnie",
        "bonnie++ with -s at the campaign's file size and -r half of it (bonnie++ "
        "demands -s >= 2 × -r); sequential, seek and file-creation tests.",
        "bonnie++ 2.00a as packaged by Debian",
        {"bonnie": "-s FILE_SIZE -r FILE_SIZE/2 -n 4 -q"}, {"bonnie": 1}, _bonnie,
        options="file_size, files_k"),
    "null": Suite(
        "null",
        "The simulator: no I/O; each job w1..wN is an independent question whose values "
        "are log-normal with mean iops × the target's `scale` and coefficient of variation "
        "cv, times a factor shared by every target within an iteration and job (CV drift); "
        "the campaign's seed makes the draws. A whole campaign runs in about a second.",
        "fslab's own (known truth, for checking the statistics)",
        {"w1": "jobs=1, iops=1000, cv=0.10, drift=0.0 (defaults)"}, {"w1": 1}, _null,
        options="jobs, iops, cv, drift", names=_null_names),
}


def _checked(suites: dict[str, Suite]) -> dict[str, Suite]:
    """The registry, checked once at load (as the target registry is): every suite lists
    the process count of each of its jobs, and no job name holds "/" (it separates a
    job from its fio section in metrics: metrics.observation_workload)."""
    for name, suite in suites.items():
        if name != suite.name or set(suite.jobs) != set(suite.numjobs):
            raise AssertionError(f"suite {name}: jobs and numjobs name other jobs")
        if any("/" in job or count < 1 for job, count in suite.numjobs.items()):
            raise AssertionError(f"suite {name}: a job name with '/' or numjobs < 1")
    return suites


SUITES = _checked(SUITES)


def get_suite(name: str) -> Suite:
    """Return a suite by name, or raise a one-line UserError listing the known ones."""
    try:
        return SUITES[name]
    except KeyError:
        raise UserError(f"unknown preset {name!r}: known presets: {', '.join(SUITES)}") from None
