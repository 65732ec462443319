"""Named fio suites. Each preset says what it models and where its parameters come from.

A job is one or more fio sections run as one fio invocation (one observation); most are
one section, `hpc` is a write phase then a stonewalled read phase over the same files.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from fslab.errors import UserError
from fslab.workloads.fio import FioWorkload

Section = dict[str, Any]

# Where a preset's parameter comes from (`fslab presets` prints it beside each one).
STUDY = "study"
FIO_DEFAULT = "fio default"
FSLAB = "fslab's choice"
CAMPAIGN = "campaign"  # runtime and size: the campaign's (fitted to the image by default)


@dataclass(frozen=True)
class Preset:
    """A named suite of fio jobs sharing global options.

    `sources` says where each parameter comes from: "param" for every job, "job:param"
    for one; anything not listed comes from `default_source`. `unstated` lists what the
    study left open and fio's default therefore decides (shown as "fio default").
    """

    name: str
    description: str
    source: str
    global_options: dict[str, Any]
    jobs: dict[str, list[Section]]
    time_based: bool = True
    sized: bool = True  # jobs take the campaign's file size (aged: nrfiles × filesize)
    sources: dict[str, str] = field(default_factory=dict)
    default_source: str = STUDY
    unstated: dict[str, str] = field(default_factory=dict)  # param -> fio's default
    buffered: bool = False  # reproduces a study's buffered I/O verbatim: labelled so

    def source_of(self, job: str, param: str) -> str:
        """Where one parameter of one job comes from."""
        if param in ("runtime", "size", "time_based"):
            return CAMPAIGN if param != "time_based" else self.sources.get(param, STUDY)
        return self.sources.get(f"{job}:{param}",
                                self.sources.get(param, self.default_source))


# The seed-000 desktop suite's five jobs: basic5 runs them as published, direct5 (fslab's
# default comparison, issue 12) with the page cache taken out.
DESKTOP_JOBS: dict[str, list[Section]] = {
    "randread": [{"rw": "randread", "bs": "4k", "numjobs": 4}],
    "randwrite": [{"rw": "randwrite", "bs": "4k", "numjobs": 4}],
    "seqread": [{"rw": "read", "bs": "1M", "numjobs": 1}],
    "seqwrite": [{"rw": "write", "bs": "1M", "numjobs": 1}],
    "mixed": [{"rw": "randrw", "rwmixread": 70, "bs": "4k", "numjobs": 4}],
}
DIRECT5 = Preset(
    name="direct5",
    description=(
        "fslab's default comparison: basic5's five jobs (random 4 KiB reads, writes and a "
        "70/30 mix with 4 threads, sequential 1 MiB reads and writes with one) with "
        "O_DIRECT (direct=1), so the page cache is not what is measured, and a 1 s "
        "ramp_time, so a cold job's first second is not either. Loop images do direct "
        "I/O to their image file by default as well."
    ),
    source="fslab's choice, after the seed-000 desktop suite (basic5)",
    global_options={"ioengine": "sync", "direct": 1, "ramp_time": 1},
    jobs=DESKTOP_JOBS,
    sources={"rw": STUDY, "bs": STUDY, "numjobs": STUDY, "rwmixread": STUDY,
             "ioengine": STUDY},
    default_source=FSLAB,
    unstated={"iodepth": "1"},
)

BASIC5 = Preset(
    name="basic5",
    description=(
        "The seed-000 desktop suite verbatim: random 4 KiB reads and writes and a 70/30 "
        "random mix with 4 threads, sequential 1 MiB reads and writes with one; buffered "
        "synchronous I/O, time-based. Buffered, as published: with files smaller than RAM "
        "it measures the page cache as much as the device, and fslab marks such results "
        "cache-bound. For a file-system comparison use direct5 (the default)."
    ),
    source="seed 000: the bash-loop fio comparisons fslab replaces (5 jobs × 10 "
           "repetitions × 4 fs)",
    global_options={"ioengine": "sync"},
    jobs=DESKTOP_JOBS,
    unstated={"iodepth": "1", "direct": "0 (buffered)"},
    buffered=True,
)

SERVER6 = Preset(
    name="server6",
    description=(
        "Server suite: asynchronous direct I/O (libaio, direct=1), one job per category, "
        "stonewalled. Sequential 1 MiB, random 4 KiB, a 50/50 mix (at fio's default "
        "iodepth: the study stated none), a web server (80 % reads of small blocks, "
        "iodepth 64), a database (50/50 over 8-64 KiB, iodepth 128) and HPC N-to-N "
        "checkpointing (4 processes each write then read their own file: two sections, "
        "two observations). Sizes scale to the target (the study used 10-100 GB per job "
        "and 600 s)."
    ),
    source="seed 002: server file-system study (libaio/direct suites for web, database, "
           "HPC)",
    global_options={"ioengine": "libaio", "direct": 1, "stonewall": True},
    jobs={
        "seqread": [{"rw": "read", "bs": "1M"}],
        "seqwrite": [{"rw": "write", "bs": "1M"}],
        "randread": [{"rw": "randread", "bs": "4k"}],
        "randwrite": [{"rw": "randwrite", "bs": "4k"}],
        "mixed": [{"rw": "randrw", "rwmixread": 50, "bs": "4k"}],
        "web": [{"rw": "randrw", "rwmixread": 80, "bssplit": "512/10:1k/10:2k/10:4k/50:8k/20",
                 "iodepth": 64}],
        "db": [{"rw": "randrw", "rwmixread": 50, "bssplit": "8k/40:16k/30:32k/20:64k/10",
                "iodepth": 128}],
        "hpc": [
            {"_section": "hpc-write", "rw": "write", "bs": "1M", "iodepth": 16, "numjobs": 4,
             "filename_format": "hpc.$jobnum", "time_based": False, "runtime": None},
            {"_section": "hpc-read", "rw": "read", "bs": "1M", "iodepth": 16, "numjobs": 4,
             "filename_format": "hpc.$jobnum", "time_based": False, "runtime": None},
        ],
    },
    sources={"web:bssplit": FSLAB + " (the study: 80 % reads of small blocks)",
             "db:bssplit": FSLAB + " (the study: a range of 8-64 KiB)",
             "hpc:bs": FSLAB, "hpc:iodepth": FSLAB, "filename_format": FSLAB},
    unstated={"iodepth": "1"},
)


def _randrw(bs: str) -> Preset:
    return Preset(
        name=f"randrw{bs}",
        description=(
            f"70/30 random read-write at {bs.upper().replace('K', ' KiB')}, direct "
            "asynchronous I/O, 8 jobs reported as a group: the RAID-1 mirror study's load."
        ),
        source="seed 001: mirror (RAID-1) study: randrw 70/30, direct=1, libaio, numjobs 8, "
               "group_reporting",
        global_options={"ioengine": "libaio", "direct": 1, "group_reporting": True},
        jobs={f"randrw{bs}": [{"rw": "randrw", "rwmixread": 70, "bs": bs, "iodepth": 16,
                               "numjobs": 8}]},
        sources={"iodepth": FSLAB + " (the study's own fio output was not available to "
                                     "check it)"},
    )


AGED = Preset(
    name="aged",
    description=(
        "Many small files per job, the way aging studies load an aged file system: 2,000 "
        "files of 4 KiB per job, 100 open at a time, created on open, chosen with a "
        "Gaussian (normal) distribution, random 4 KiB writes with an fsync every 32 "
        "writes, time-based. Writes only: files created on open are empty, and reading "
        "them fails (EIO) until written."
    ),
    source="seed 004: file-system aging studies (fio on aged images: nrfiles, openfiles "
           "100, create_on_open, gaussian file_service_type, periodic fsync)",
    global_options={"ioengine": "sync"},
    jobs={"aged": [{"rw": "randwrite", "bs": "4k", "numjobs": 4,
                    "nrfiles": 2000, "filesize": "4k", "openfiles": 100,
                    "create_on_open": 1, "file_service_type": "normal", "fsync": 32}]},
    sized=False,
    sources={"numjobs": FSLAB, "nrfiles": FSLAB, "filesize": FSLAB},
    buffered=True,
)

PRESETS: dict[str, Preset] = {p.name: p for p in (
    DIRECT5, BASIC5, SERVER6, _randrw("16k"), _randrw("128k"), AGED)}


def job_numjobs(preset: Preset, job: str) -> int:
    """How many processes a job runs (the most of its sections)."""
    return max(int(section.get("numjobs", 1)) for section in preset.jobs[job])


def preset_workloads(
    preset: Preset,
    *,
    only: list[str] | None,
    runtime: int,
    file_size: int,
    overrides: dict[str, Any] | None = None,
) -> list[FioWorkload]:
    """Resolve a preset into one workload per job, optionally only the named jobs."""
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
        sections = [{k: (overrides or {}).get(k, v) for k, v in section.items()}
                    for section in preset.jobs[job]]
        workloads.append(FioWorkload(
            name=job,
            options={k: v for k, v in sections[0].items() if k != "_section"},
            global_options=global_options,
            preset=name,
            extra_sections=[(str(s.pop("_section")), s) for s in sections[1:]],
            section_name=str(sections[0].get("_section", job)),
        ))
    return workloads
