"""Named fio suites. Each preset says what it models and where its parameters come from.

A job is one or more fio sections run as one fio invocation (one observation); most are
one section, `hpc` is a write phase then a stonewalled read phase over the same files.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fslab.core.errors import UserError
from fslab.workloads.fio import FioWorkload
from fslab.workloads.fio.jobfile import FioOptions, count_of
from fslab.workloads.provenance import (
    STUDIES,
    Param,
    Source,
    campaign,
    fio_default,
    fslab,
    study,
)

Section = FioOptions

# The quick scale: the campaign's runtime and size (3 s, a file fitted to the image).
QUICK = campaign("the quick scale (the campaign's; fitted to the image); the study's own "
                 "with --as-published")


@dataclass(frozen=True)
class Preset:
    """A named suite of fio jobs sharing global options.

    `sources` says where each parameter comes from: "param" for every job, "job:param"
    for one; anything not listed comes from `default_source`. `unstated` lists what the
    study left open and fio's default therefore decides.
    """

    name: str
    description: str
    study: str | None  # a key of provenance.STUDIES; None: fslab's own
    global_options: FioOptions
    jobs: dict[str, list[Section]]
    default_source: Source
    time_based: bool = True
    time_based_source: Source | None = None
    sized: bool = True  # jobs take the campaign's file size (aged: nrfiles × filesize)
    sources: dict[str, Source] = field(default_factory=dict)
    unstated: dict[str, str] = field(default_factory=dict)  # param -> fio's default

    @property
    def source(self) -> str:
        """One line: the study, or fslab's own."""
        return STUDIES[self.study].cite if self.study else "fslab's own"

    def source_of(self, job: str, param: str) -> Source:
        """Where one parameter of one job comes from."""
        if param in ("runtime", "size"):
            return QUICK
        if param == "time_based" and f"{job}:{param}" not in self.sources:
            return self.time_based_source or self.default_source
        return self.sources.get(f"{job}:{param}",
                                self.sources.get(param, self.default_source))

    def parameters(self, job: str) -> dict[str, Param]:
        """Every parameter of one job with its source: the job's sections (a parameter of a
        later section named `section.param`), [global], fio's defaults for what the
        study left open, and the campaign's runtime and size."""
        out: dict[str, Param] = {}
        sections = self.jobs[job]
        for index, section in enumerate(sections):
            prefix = f"{section['_section']}." if index and "_section" in section else ""
            for key, value in section.items():
                if value is not None and key != "_section":
                    out[prefix + key] = Param(_shown(value), self.source_of(job, key))
        for key, value in self.global_options.items():
            out.setdefault(key, Param(_shown(value), self.source_of(job, key)))
        out.setdefault("time_based", Param(int(self.time_based),
                                           self.source_of(job, "time_based")))
        for key, value in self.unstated.items():
            out.setdefault(key, Param(value, fio_default("the study states none")))
        out["runtime"] = Param("campaign", QUICK)
        if self.sized:
            out["size"] = Param("campaign", QUICK)
        return out


def _shown(value: Any) -> Any:
    return int(value) if isinstance(value, bool) else value


# The desktop suite's five jobs: basic5 runs them as published, direct5 (fslab's default
# comparison) with the page cache taken out.
DESKTOP_JOBS: dict[str, list[Section]] = {
    "randread": [{"rw": "randread", "bs": "4k", "numjobs": 4}],
    "randwrite": [{"rw": "randwrite", "bs": "4k", "numjobs": 4}],
    "seqread": [{"rw": "read", "bs": "1M", "numjobs": 1}],
    "seqwrite": [{"rw": "write", "bs": "1M", "numjobs": 1}],
    "mixed": [{"rw": "randrw", "rwmixread": 70, "bs": "4k", "numjobs": 4}],
}
DESKTOP_FILES = study("desktop-fio", "the bash script's job files (randread.fio ... mixed.fio)")
DIRECT5 = Preset(
    name="direct5",
    description=(
        "fslab's default comparison: basic5's five jobs (random 4 KiB reads, writes and a "
        "70/30 mix with 4 threads, sequential 1 MiB reads and writes with one) with "
        "O_DIRECT (direct=1), so the page cache is not what is measured, and a 1 s "
        "ramp_time, so a cold job's first second is not either. Loop images do direct "
        "I/O to their image file by default as well."
    ),
    study=None,
    global_options={"ioengine": "sync", "direct": 1, "ramp_time": 1},
    jobs=DESKTOP_JOBS,
    default_source=fslab("a file-system comparison, not a page-cache one"),
    time_based_source=DESKTOP_FILES,
    sources={"rw": DESKTOP_FILES, "bs": DESKTOP_FILES, "numjobs": DESKTOP_FILES,
             "rwmixread": DESKTOP_FILES, "ioengine": DESKTOP_FILES,
             "direct": fslab("O_DIRECT, so the page cache is not what is measured"),
             "ramp_time": fslab("a cold job's first second is not measured")},
    unstated={"iodepth": "1"},
)

BASIC5 = Preset(
    name="basic5",
    description=(
        "The desktop study's five fio jobs with its own options: random 4 KiB reads and "
        "writes and a 70/30 random mix with 4 threads, sequential 1 MiB reads and writes "
        "with one; buffered synchronous I/O, time-based. At the quick scale (3 s, files "
        "fitted to the image); --as-published runs its 60 s, 1 GiB and 10 repetitions. "
        "Buffered, as published: with files smaller than RAM it measures the page cache as "
        "much as the device, and fslab marks such results cache-bound. For a file-system "
        "comparison use direct5 (the default)."
    ),
    study="desktop-fio",
    global_options={"ioengine": "sync"},
    jobs=DESKTOP_JOBS,
    default_source=DESKTOP_FILES,
    unstated={"iodepth": "1", "direct": "0 (buffered)"},
)


def _hpc(where: str) -> Source:
    return study("btrfs-zfs-hpc", where)


ELIDED = fslab("jobs 3-5 of the study's job file are elided (section 5 prints '.......'); "
               "section 6 names the categories without their parameters")
HPC_STAND_IN = fslab("the study's HPC test is an application on a 16-node Kubernetes "
                     "cluster (section 6.6), not a fio job: an N-to-N checkpoint stand-in")
SERVER6 = Preset(
    name="server6",
    description=(
        "Server suite: asynchronous direct I/O (libaio, direct=1), one job per category, "
        "stonewalled, reported as a group. Sequential 1 MiB reads and writes and a "
        "database load (50/50 over 8-64 KiB blocks, iodepth 128) as the study's job file "
        "gives them; a web server load (80 % reads, iodepth 64) as its text does; random "
        "4 KiB reads, writes and a 50/50 mix (the study's jobs 3-5, elided in the paper) "
        "and HPC N-to-N checkpointing (the study ran an application) are fslab's. Quick "
        "scale by default; the study used 10-100 GB per job and 600 s (--as-published)."
    ),
    study="btrfs-zfs-hpc",
    global_options={"ioengine": "libaio", "direct": 1, "stonewall": True,
                    "group_reporting": True, "cpus_allowed_policy": "split"},
    jobs={
        "seqread": [{"rw": "read", "bs": "1M", "numjobs": 1}],
        "seqwrite": [{"rw": "write", "bs": "1M", "numjobs": 1}],
        "randread": [{"rw": "randread", "bs": "4k"}],
        "randwrite": [{"rw": "randwrite", "bs": "4k"}],
        "mixed": [{"rw": "randrw", "rwmixread": 50, "bs": "4k"}],
        "web": [{"rw": "randrw", "rwmixread": 80, "bssplit": "512/10:1k/10:2k/10:4k/50:8k/20",
                 "iodepth": 64}],
        "db": [{"rw": "randrw", "rwmixread": 50, "bsrange": "8k-64k", "iodepth": 128,
                "numjobs": 1}],
        "hpc": [
            {"_section": "hpc-write", "rw": "write", "bs": "1M", "iodepth": 16, "numjobs": 4,
             "filename_format": "hpc.$jobnum", "time_based": False, "runtime": None},
            {"_section": "hpc-read", "rw": "read", "bs": "1M", "iodepth": 16, "numjobs": 4,
             "filename_format": "hpc.$jobnum", "time_based": False, "runtime": None},
        ],
    },
    default_source=_hpc("section 5, the fio configuration's [global]"),
    sources={
        "seqread:rw": _hpc("section 5, [job_1_seq_read]"),
        "seqread:bs": _hpc("section 5, [job_1_seq_read]"),
        "seqread:numjobs": _hpc("section 5, [job_1_seq_read]"),
        "seqwrite:rw": _hpc("section 5, [job_2_seq_write]"),
        "seqwrite:bs": _hpc("section 5, [job_2_seq_write]"),
        "seqwrite:numjobs": _hpc("section 5, [job_2_seq_write]"),
        **{f"{job}:{key}": ELIDED for job in ("randread", "randwrite", "mixed")
           for key in ("rw", "bs", "rwmixread")},
        "web:rw": _hpc("section 6.4: 'reading and writing'"),
        "web:rwmixread": _hpc("section 6.4: 'an 80/20 read-write ratio'"),
        "web:iodepth": _hpc("section 6.4: 'depth of 64'"),
        "web:bssplit": fslab("section 6.4 says 'concurrent requests for small files' and "
                             "gives no block size"),
        **{f"db:{key}": _hpc("section 5, [job_6_db_server]")
           for key in ("rw", "rwmixread", "bsrange", "iodepth", "numjobs")},
        **{f"hpc:{key}": HPC_STAND_IN for key in (
            "rw", "bs", "iodepth", "numjobs", "filename_format", "time_based")},
        "stonewall": _hpc("section 5, every job ('stonewall; do not start a new job ...')"),
    },
    time_based_source=_hpc("section 5, [global] 'time_based'"),
    unstated={"iodepth": "1", "numjobs": "1"},
)

RAID1_COMMAND = "the fio command line of its 'Tests using fio' sections"


def _randrw(bs: str, name: str = "") -> Preset:
    shown = "the fio output it shows: 'ioengine=libaio, iodepth=1'"
    name = name or f"randrw{bs}"
    size = bs.upper().replace("K", " KiB")
    swept = (" Its job is named randrw and its block size is a factor to sweep: "
             "[sweep] bs = [\"16k\", \"128k\"] is the study's own comparison of its two "
             "commands (examples/raid1-blocksize.toml).") if name == "randrw" else ""
    return Preset(
        name=name,
        description=(
            f"70/30 random read-write at {size}, direct "
            "asynchronous I/O at queue depth 1, 8 jobs reported as a group, size-based "
            "(a job ends when its file is done or at the runtime cap): the RAID-1 mirror "
            "study's load. Quick scale by default; the study's 1 GiB per job and 600 s "
            "cap with --as-published." + swept
        ),
        study="raid1-fs",
        global_options={"ioengine": "libaio", "direct": 1, "group_reporting": True},
        jobs={name: [{"rw": "randrw", "rwmixread": 70, "bs": bs, "iodepth": 1,
                               "numjobs": 8}]},
        default_source=study("raid1-fs", RAID1_COMMAND),
        time_based=False,
        time_based_source=study("raid1-fs", "the command has no --time_based; its ZFS 16 "
                                            "KiB run ended at 519,310 ms of 600 s"),
        sources={"iodepth": study("raid1-fs", shown)},
    )


AGING = "section 6.1, FIO settings"
AGED = Preset(
    name="aged",
    description=(
        "Many small files per job, the way the aging thesis loads an aged file system: "
        "2,000 files of 4 KiB per job, 100 open at a time, created on open, chosen with a "
        "Gaussian distribution, random 4 KiB writes with an fsync every 32 writes, "
        "time-based. Writes only: files created on open are empty, and reading them fails "
        "(EIO) until written. The thesis ran 10 minutes on an image reloaded for each test "
        "(--as-published)."
    ),
    study="aging-thesis",
    global_options={"ioengine": "sync"},
    jobs={"aged": [{"rw": "randwrite", "bs": "4k", "numjobs": 4,
                    "nrfiles": 2000, "filesize": "4k", "openfiles": 100,
                    "create_on_open": 1, "file_service_type": "gauss", "fsync": 32}]},
    default_source=study("aging-thesis", AGING),
    time_based_source=study("aging-thesis", AGING + ": 'time-based testing is used with "
                                                    "runtime of 10 minutes'"),
    sized=False,
    sources={
        "ioengine": fslab("the thesis names no engine; sync, as the aging writes are"),
        "rw": fslab("the thesis names no direction; writes, because files created on open "
                    "are empty until written"),
        "numjobs": fslab("the thesis names no thread count"),
        "nrfiles": fslab("the thesis sets the count so that each file is about 4 kB; fslab "
                         "fixes the count and the size"),
        "filesize": study("aging-thesis", AGING + ": 'individual size was approximately "
                                                  "4 kB'"),
        "bs": study("aging-thesis", AGING + ": 'Block size is set to 4 kB'"),
        "openfiles": study("aging-thesis", AGING + ": 'maximal amount of open files was "
                                                   "specified to 100'"),
        "create_on_open": study("aging-thesis", AGING + ": 'create_on_open was set'"),
        "file_service_type": study("aging-thesis", AGING + ": 'reset to gauss'"),
        "fsync": fslab("the thesis: an fsync 'from time to time', with no count"),
    },
)

PRESETS: dict[str, Preset] = {p.name: p for p in (
    DIRECT5, BASIC5, SERVER6, _randrw("16k"), _randrw("128k"), _randrw("16k", "randrw"),
    AGED)}


def job_numjobs(preset: Preset, job: str) -> int:
    """How many processes a job runs (the most of its sections)."""
    return max(count_of(section, "numjobs") for section in preset.jobs[job])


def preset_workloads(
    preset: Preset,
    *,
    only: list[str] | None,
    runtime: int,
    file_size: int,
    overrides: FioOptions | None = None,
    job_options: dict[str, FioOptions] | None = None,
) -> list[FioWorkload]:
    """Resolve a preset into one workload per job, optionally only the named jobs.

    `job_options` sets values of one job's sections (the published scale's per-job sizes);
    `overrides` (the user's) win over everything."""
    name = preset.name
    wanted = only or list(preset.jobs)
    unknown = [job for job in wanted if job not in preset.jobs]
    if unknown:
        raise UserError(
            f"preset {name} has no workload {', '.join(unknown)}: it has {', '.join(preset.jobs)}"
        )
    size = f"{file_size // 1024**2}M" if file_size % 1024**2 == 0 else file_size
    global_options = {
        **preset.global_options,
        "time_based": preset.time_based,
        "runtime": runtime,
        **({"size": size} if preset.sized else {}),
        **(overrides or {}),
    }
    workloads = []
    for job in wanted:
        # An option the user sets wins over the preset's, in [global] and in the sections.
        own = (job_options or {}).get(job, {})
        sections = [{k: (overrides or {}).get(k, v)
                     for k, v in {**section, **own}.items()} for section in preset.jobs[job]]
        workloads.append(FioWorkload(
            name=job,
            options={k: v for k, v in sections[0].items() if k != "_section"},
            global_options=global_options,
            preset=name,
            extra_sections=[(str(s.pop("_section")), s) for s in sections[1:]],
            section_name=str(sections[0].get("_section", job)),
        ))
    return workloads
