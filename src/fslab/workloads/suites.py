"""Every named suite a campaign can ask for: fio presets and fslab's own workloads."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fslab.core.errors import UserError
from fslab.core.units import parse_size
from fslab.workloads.base import Workload
from fslab.workloads.bonnie import BonnieWorkload
from fslab.workloads.files import FilesWorkload
from fslab.workloads.fio.presets import (
    PRESETS,
    QUICK,
    Preset,
    job_numjobs,
    preset_workloads,
)
from fslab.workloads.provenance import STUDIES, Param, Published, Source, fslab, study
from fslab.workloads.published import PUBLISHED
from fslab.workloads.smallfiles import SmallFilesWorkload

MiB = 1024**2
# (jobs wanted, runtime s, file size, the [[workload]] options, the campaign's seed,
# whether the campaign runs at the study's published scale)
Builder = Callable[[list[str], int, int, dict[str, Any], int, bool], list[Workload]]
Parameters = dict[str, dict[str, Param]]  # job -> parameter -> value and source


@dataclass(frozen=True)
class Suite:
    """A named group of workloads, listed by `fslab presets`."""

    name: str
    description: str
    study: str | None  # a key of provenance.STUDIES; None: fslab's own
    parameters: Parameters  # every job's parameters, each with its source
    numjobs: dict[str, int]
    build: Builder
    options: str = ""  # the options a [[workload]] table may set
    # The job names a [[workload]] table with these options expands to (a suite whose
    # jobs depend on its options, like the simulator's `jobs = N`); default: `jobs`.
    names: Callable[[dict[str, Any]], list[str]] | None = None
    # The option names a [[workload]] table (and a sweep) may set; None: any fio option.
    keys: frozenset[str] | None = None
    # Whether fio options are levels too (the simulator: its effects table gives them a
    # known effect, so a sweep or tuner of fio options can be checked against truth).
    fio_levels: bool = False

    def takes(self, option: str) -> bool:
        """Whether `option` is one of this suite's options (a fio suite: any fio option)."""
        from fslab.workloads.fio import is_fio_option

        if self.keys is None or (self.fio_levels and is_fio_option(option)):
            return is_fio_option(option)
        return option in self.keys

    @property
    def jobs(self) -> list[str]:
        return list(self.parameters)

    @property
    def source(self) -> str:
        """One line: the study, or fslab's own."""
        return STUDIES[self.study].cite if self.study else "fslab's own"

    @property
    def published(self) -> Published | None:
        """The suite at its study's own scale (None: fslab's own, no published scale)."""
        return PUBLISHED.get(self.name)

    def job_names(self, options: dict[str, Any] | None = None) -> list[str]:
        """Every job this suite runs with `options`."""
        return self.names(options or {}) if self.names else self.jobs

    def numjobs_of(self, job: str) -> int:
        """The processes a job runs (1 for jobs not listed, e.g. generated ones)."""
        return self.numjobs.get(job, 1)

    def to_json(self) -> dict[str, Any]:
        """The suite for `fslab presets --json`: every parameter with its source."""
        published = self.published
        return {
            "name": self.name, "description": self.description, "study": self.study,
            "cite": self.source, "options": self.options,
            "jobs": {job: {key: param.to_json() for key, param in params.items()}
                     for job, params in self.parameters.items()},
            "published": published.to_json() if published else None,
        }


def _fio_suite(preset: Preset) -> Suite:
    def build(only: list[str], runtime: int, file_size: int,
              options: dict[str, Any], seed: int, published: bool) -> list[Workload]:
        spec = PUBLISHED.get(preset.name) if published else None
        job_options = {job: {key: param.value for key, param in values.items()}
                       for job, values in (spec.sections or {}).items()} if spec else None
        return list(preset_workloads(preset, only=only, runtime=runtime,
                                     file_size=file_size, overrides=options,
                                     job_options=job_options))

    return Suite(preset.name, preset.description, preset.study,
                 {job: preset.parameters(job) for job in preset.jobs},
                 {name: job_numjobs(preset, name) for name in preset.jobs}, build,
                 options="any fio option (applied to [global])")


def _pick(only: list[str], workloads: list[Workload]) -> list[Workload]:
    return [w for w in workloads if w.name in only]


FILES_KEYS = frozenset({"small_size", "large_size", "small_count", "large_count", "flush",
                        "tool"})
SMALLFILES_KEYS = frozenset({"count", "files_per_dir", "sizes"})
BONNIE_KEYS = frozenset({"file_size", "files_k"})
AGEDFILES_KEYS = frozenset({"count", "size", "seed"})
SCAN_KEYS = frozenset({"subdir"})
# `tag`: any value, ignored by the simulator: a factor known to have no effect.
NULL_KEYS = frozenset({"jobs", "iops", "cv", "drift", "tag", "sleep", "latency", "depth",
                       "lat_cv", "between", "within", "fixed_s"})


def _files(only: list[str], runtime: int, file_size: int,
           options: dict[str, Any], seed: int, published: bool) -> list[Workload]:
    _only_keys(options, FILES_KEYS, "files")
    flush = str(options.get("flush", "fdatasync"))
    tool = str(options.get("tool", "python"))
    return _pick(only, [
        FilesWorkload("files_small", parse_size(options.get("small_size", "10M")),
                      int(options.get("small_count", 20)), flush, tool),
        FilesWorkload("files_large", parse_size(options.get("large_size", "100M")),
                      int(options.get("large_count", 5)), flush, tool),
    ])


def _smallfiles(only: list[str], runtime: int, file_size: int,
                options: dict[str, Any], seed: int, published: bool) -> list[Workload]:
    _only_keys(options, SMALLFILES_KEYS, "smallfiles")
    count = int(options.get("count", 100_000))
    per_dir = int(options.get("files_per_dir", 1000))
    return _pick(only, [SmallFilesWorkload("smallfiles_4k", count, 4096, per_dir),
                        SmallFilesWorkload("smallfiles_128k", count, 128 * 1024, per_dir)])


def _bonnie(only: list[str], runtime: int, file_size: int,
            options: dict[str, Any], seed: int, published: bool) -> list[Workload]:
    _only_keys(options, BONNIE_KEYS, "bonnie")
    size = _bonnie_size(options["file_size"]) if "file_size" in options else file_size
    return _pick(only, [BonnieWorkload("bonnie", size, int(options.get("files_k", 4)))])


def _bonnie_size(text: object) -> int:
    """bonnie++'s -s: a size, or "2xRAM" (the mirror study's rule: twice the RAM, so the
    page cache cannot hold the file)."""
    if str(text).replace(" ", "").lower() in ("2xram", "2*ram"):
        from fslab.host.system import memory_bytes

        return 2 * memory_bytes()
    return parse_size(str(text))


def _agedfiles(only: list[str], runtime: int, file_size: int,
               options: dict[str, Any], seed: int, published: bool) -> list[Workload]:
    from fslab.workloads.agedfiles import AgedFilesWorkload

    _only_keys(options, AGEDFILES_KEYS, "agedfiles")
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
          options: dict[str, Any], seed: int, published: bool) -> list[Workload]:
    from fslab.workloads.scan import ScanWorkload

    _only_keys(options, SCAN_KEYS, "scan")
    return _pick(only, [ScanWorkload("scan", str(options.get("subdir", "")))])


def _null_names(options: dict[str, Any]) -> list[str]:
    return [f"w{i}" for i in range(1, int(options.get("jobs", 1)) + 1)]


def _null(only: list[str], runtime: int, file_size: int,
          options: dict[str, Any], seed: int, published: bool) -> list[Workload]:
    from fslab.workloads.fio import is_fio_option
    from fslab.workloads.null import simulated_jobs

    _only_keys({k: v for k, v in options.items() if not is_fio_option(k)}, NULL_KEYS, "null")
    return _pick(only, list[Workload](simulated_jobs(options, seed, runtime)))


def _only_keys(options: dict[str, Any], allowed: frozenset[str], suite: str) -> None:
    unknown = sorted(set(options) - allowed)
    if unknown:
        raise UserError(f"{suite}: unknown option {', '.join(unknown)} "
                        f"(allowed: {', '.join(sorted(allowed))})")


_USB = "usb-files"
_RAID1 = "raid1-fs"
_QUICK_COUNT = Source(QUICK.kind, "the quick scale; the study's 500 and 250 samples with "
                                  "--as-published")
_PERL = study(_RAID1, "Tests using Perl: 'Creating 100.000 files with 4KB and 128KB size'")


def _files_job(size: str, count: int, where: str) -> dict[str, Param]:
    return {
        "size": Param(size, study(_USB, f"Setup: '{where}'")),
        "count": Param(count, _QUICK_COUNT),
        "tool": Param("python", fslab(
            "fslab's writer makes the random data before the timer starts, so the time is "
            "the file system's, not /dev/urandom's; tool = \"dd\" runs the study's dd")),
        "flush": Param("fdatasync", fslab(
            "each sample timed to the disk, not to the page cache; the study's dd named no "
            "flush (flush = \"none\")")),
        "read_back": Param("after dropping caches", fslab("a cold read of each sample")),
    }


def _smallfiles_job(size: str) -> dict[str, Param]:
    return {"count": Param(100_000, _PERL), "size": Param(size, _PERL),
            "files_per_dir": Param(1000, fslab("the study's script is not printed; 100,000 "
                                               "files in one directory would measure the "
                                               "directory")),
            "phases": Param("write, rewrite, read, delete; a sync after each",
                            study(_RAID1, "Tests using Perl: write, rewrite, read, delete "
                                          "with their sync times"))}


_AGED_OWN = fslab("fslab's own: touches an aged target's own files (no study gives these)")
_NULL = fslab("the simulator: known truth for checking the statistics")

SUITES: dict[str, Suite] = {
    **{name: _fio_suite(preset) for name, preset in PRESETS.items()},
    "files": Suite(
        "files",
        "Write a file of random data N times, each sample timed with its end-of-file flush "
        "(none, fdatasync or O_DIRECT), and read each back with caches dropped; tool = "
        "\"dd\" runs the study's own dd instead of fslab's writer.",
        _USB,
        {"files_small": _files_job("10M", 20, "a small file as 10MB/10MiB"),
         "files_large": _files_job("100M", 5, "a large file as 105MB/100MiB")},
        {"files_small": 1, "files_large": 1}, _files,
        options="small_size, large_size, small_count, large_count, flush, tool",
        keys=FILES_KEYS),
    "smallfiles": Suite(
        "smallfiles",
        "Create K files of S bytes over directories of 1,000, then rewrite, read (cold) "
        "and delete them; files/s per phase and the sync time after it.",
        _RAID1,
        {"smallfiles_4k": _smallfiles_job("4k"), "smallfiles_128k": _smallfiles_job("128k")},
        {"smallfiles_4k": 1, "smallfiles_128k": 1}, _smallfiles,
        options="count, files_per_dir", keys=SMALLFILES_KEYS),
    "agedfiles": Suite(
        "agedfiles",
        "Touch the aged file system's own files: read every file cold, overwrite and "
        "append to existing files, create new files in the fragmented free space.",
        None,
        {"aged_readall": {"files": Param("every file under aged/, caches dropped first",
                                         _AGED_OWN)},
         "aged_overwrite": {"count": Param(500, _AGED_OWN), "sync": Param("fdatasync each",
                                                                          _AGED_OWN)},
         "aged_append": {"count": Param(500, _AGED_OWN), "size": Param("64K", _AGED_OWN)},
         "aged_create": {"count": Param(1000, _AGED_OWN),
                         "sizes": Param("lognormal up to 64 KiB", _AGED_OWN)}},
        {"aged_readall": 1, "aged_overwrite": 1, "aged_append": 1, "aged_create": 1},
        _agedfiles, options="count, size, seed", keys=AGEDFILES_KEYS),
    "scan": Suite(
        "scan",
        "Drop caches, then read every file of the target's tree in directory order (as "
        "grep -r or a backup does): bytes/s, files/s and the dynamic layout score of that "
        "read order (FIEMAP). For aged images against fresh copies of their files.",
        None,
        {"scan": {"order": Param("readdir order, every file read whole", fslab(
            "a cold recursive scan, after Conway et al. (FAST '17), which is not one of "
            "the five studies"))}},
        {"scan": 1}, _scan, options="subdir", keys=SCAN_KEYS),
    "bonnie": Suite(
        "bonnie",
        "bonnie++ with -s at the campaign's file size and -r half of it (bonnie++ "
        "demands -s >= 2 × -r); sequential, seek and file-creation tests.",
        _RAID1,
        {"bonnie": {
            "-s": Param("campaign", Source(QUICK.kind, "the quick scale; the study: twice "
                                                       "the RAM (--as-published)")),
            "-r": Param("-s / 2", fslab("bonnie++ demands -s >= 2 x -r")),
            "-n": Param(4, Source(QUICK.kind, "the quick scale; the study: 16")),
            "-q": Param(1, fslab("quiet: the CSV line alone on stdout"))}},
        {"bonnie": 1}, _bonnie, options="file_size (or \"2xRAM\"), files_k",
        keys=BONNIE_KEYS),
    "null": Suite(
        "null",
        "The simulator: no I/O; each job w1..wN is an independent question whose values "
        "are log-normal with mean iops × the target's `scale` and coefficient of variation "
        "cv, times a factor shared by every target within an iteration and job (CV drift); "
        "the campaign's seed makes the draws; `tag` is ignored (a factor known to have no "
        "effect, for checking sweeps); `latency = true` adds completion latency for `depth` "
        "I/Os in flight (Little's law), its percentiles with their own spread `lat_cv`, "
        "times the target's latency_effects. With `between` (the spread between fresh file "
        "systems), `within` (within a run, for one second of measuring) and `fixed_s` "
        "(seconds a run costs beside measuring), a run of `runtime` seconds draws its file "
        "system's luck and a 100 ms log of the run like fio's, and counts virtual machine "
        "time. A whole campaign runs in about a second.",
        None,
        {"w1": {"jobs": Param(1, _NULL), "iops": Param(1000, _NULL),
                "cv": Param(0.10, _NULL), "drift": Param(0.0, _NULL)}},
        {"w1": 1}, _null, options="jobs, iops, cv, drift, latency, depth, lat_cv, "
        "between, within, fixed_s, tag (ignored: a factor without effect), any fio option "
        "(an effect only through the target's effects table)",
        names=_null_names, keys=NULL_KEYS, fio_levels=True),
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


def suites() -> dict[str, Suite]:
    """SUITES and the plug-ins' (core/plugins.py: SUITE), checked as SUITES is; a plug-in
    may not take a name fslab's own suites have."""
    from fslab.core.plugins import declared

    added = declared("SUITE", of=Suite)
    for suite in added:
        if suite.name in SUITES:
            raise UserError(f"a plug-in's suite {suite.name!r} has the name of fslab's own")
    return {**SUITES, **_checked({suite.name: suite for suite in added})} if added else SUITES


def get_suite(name: str) -> Suite:
    """Return a suite by name, or raise a one-line UserError listing the known ones."""
    known = suites()
    try:
        return known[name]
    except KeyError:
        raise UserError(f"unknown preset {name!r}: known presets: {', '.join(known)}") from None
