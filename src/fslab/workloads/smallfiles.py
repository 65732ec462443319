"""`smallfiles`: K files of S bytes over directories; write, rewrite, read, delete phases.

The "create 100,000 files of 4 KiB and 128 KiB, then rewrite, read and delete them" test.
For each phase: files per second including the sync that follows it (`ops_per_s`: files /
(seconds + sync seconds), the primary metric), the rate before that sync
(`ops_per_s_before_sync`, the rate the RAID-1 study printed) and the sync's own duration
(`sync_seconds`: the cost the phase left in the page cache). A phase is done when its
files are on the disk: on the study's own table XFS writes 128 KiB files 3.7× as fast as
ext4 before the sync and 1.3× with it (docs/studies.md). Files are opened relative to
their directory's descriptor, so the harness spends as little as possible per file (see
benchmarks/smallfiles_vs_fsmark).

A plug-in of fslab's own (core/plugins.py): the module declares its suite (SUITE) and
the kind that parses the record it writes (KIND).
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from fslab.core.errors import UserError
from fslab.core.metrics import Measurement, cpu_measurements
from fslab.host import system
from fslab.parsers.raw_files import Parsed, RawFiles, RawKind, named, read_json
from fslab.workloads.base import Capabilities, RunOutput, Where, Workload
from fslab.workloads.cpu_use import cpu_use
from fslab.workloads.provenance import Param, fslab, study
from fslab.workloads.suites import Suite, only_keys, picked

PHASES = ("write", "rewrite", "read", "delete")
RESULT = "phases.json"  # the run's record: each phase's seconds and sync seconds


@dataclass
class SmallFilesWorkload(Capabilities):
    """Create, rewrite, read (cold) and delete `count` files of `size` bytes."""

    name: str
    count: int = 100_000
    size: int = 4096
    files_per_dir: int = 1000
    family: str = "smallfiles"
    PRIMARY: ClassVar[str] = "ops_per_s"  # files per second in each phase, its sync included

    def check(self) -> None:
        if self.count < 1 or self.files_per_dir < 1:
            raise UserError(f"workload {self.name}: count and files_per_dir must be >= 1")

    def required_bytes(self) -> int:
        block = 4096
        return self.count * max(block, -(-self.size // block) * block)

    def render(self, where: Where) -> dict[str, str]:
        return {"smallfiles.json": json.dumps({
            "directory": str(where.directory), "count": self.count, "size": self.size,
            "files_per_dir": self.files_per_dir, "phases": list(PHASES)}, indent=2)}

    def run(self, where: Where, run_dir: Path) -> RunOutput:
        if where.directory is None:
            return RunOutput(status="unsupported", reason="smallfiles needs a file system")
        (run_dir / "smallfiles.json").write_text(self.render(where)["smallfiles.json"])
        layout = self._make_dirs(where.directory)
        data = os.urandom(self.size)
        phases = {}
        with cpu_use() as cpu:
            for phase in PHASES:
                if phase == "read":
                    system.sync_and_drop_caches()
                seconds = run_phase(phase, layout, data)
                start = time.perf_counter()
                os.sync()
                phases[phase] = {"seconds": seconds, "sync_seconds": time.perf_counter() - start}
        for dir_fd, _ in layout:
            os.close(dir_fd)
        record = {"count": self.count, "size": self.size, "phases": phases,
                  "cpu_usr": cpu.usr_pct, "cpu_sys": cpu.sys_pct}
        (run_dir / RESULT).write_text(json.dumps(record, indent=1))
        return RunOutput()

    def _make_dirs(self, root: Path) -> list[tuple[int, list[str]]]:
        """Directories (open descriptors) with the names of the files each will hold."""
        layout = []
        for start in range(0, self.count, self.files_per_dir):
            directory = root / f"d{start // self.files_per_dir:05d}"
            directory.mkdir()
            names = [f"f{i:07d}" for i in range(start, min(start + self.files_per_dir,
                                                           self.count))]
            layout.append((os.open(directory, os.O_RDONLY | os.O_DIRECTORY), names))
        return layout


def run_phase(phase: str, layout: list[tuple[int, list[str]]], data: bytes) -> float:
    """Time one phase over every file; the loops are kept bare on purpose."""
    size = len(data)
    open_, write, read, close, unlink = os.open, os.write, os.read, os.close, os.unlink
    create = os.O_WRONLY | os.O_CREAT | os.O_EXCL
    start = time.perf_counter()
    if phase == "write":
        for dir_fd, names in layout:
            for name in names:
                fd = open_(name, create, 0o644, dir_fd=dir_fd)
                write(fd, data)
                close(fd)
    elif phase == "rewrite":
        for dir_fd, names in layout:
            for name in names:
                fd = open_(name, os.O_WRONLY, dir_fd=dir_fd)
                write(fd, data)
                close(fd)
    elif phase == "read":
        for dir_fd, names in layout:
            for name in names:
                fd = open_(name, os.O_RDONLY, dir_fd=dir_fd)
                read(fd, size)
                close(fd)
    else:
        for dir_fd, names in layout:
            for name in names:
                unlink(name, dir_fd=dir_fd)
    return time.perf_counter() - start


def _parse(files: RawFiles) -> Parsed:
    record = read_json(files, RESULT)
    out = []
    for phase, values in record["phases"].items():
        seconds, sync = values["seconds"], values["sync_seconds"]
        out.append(Measurement(phase, "ops_per_s", record["count"] / (seconds + sync)))
        out.append(Measurement(phase, "ops_per_s_before_sync", record["count"] / seconds))
        out.append(Measurement(phase, "sync_seconds", sync))
    return Parsed("smallfiles", out + cpu_measurements(record["cpu_usr"], record["cpu_sys"]))


KEYS = frozenset({"count", "files_per_dir", "sizes"})
_RAID1 = "raid1-fs"
_PERL = study(_RAID1, "Tests using Perl: 'Creating 100.000 files with 4KB and 128KB size'")


def _build(only: list[str], runtime: int, file_size: int,
           options: dict[str, Any], seed: int, published: bool) -> list[Workload]:
    only_keys(options, KEYS, "smallfiles")
    count = int(options.get("count", 100_000))
    per_dir = int(options.get("files_per_dir", 1000))
    return picked(only, [SmallFilesWorkload("smallfiles_4k", count, 4096, per_dir),
                         SmallFilesWorkload("smallfiles_128k", count, 128 * 1024, per_dir)])


def _job(size: str) -> dict[str, Param]:
    return {"count": Param(100_000, _PERL), "size": Param(size, _PERL),
            "files_per_dir": Param(1000, fslab("the study's script is not printed; 100,000 "
                                               "files in one directory would measure the "
                                               "directory")),
            "phases": Param("write, rewrite, read, delete; a sync after each",
                            study(_RAID1, "Tests using Perl: write, rewrite, read, delete "
                                          "with their sync times"))}


SUITE = Suite(
    "smallfiles",
    "Create K files of S bytes over directories of 1,000, then rewrite, read (cold) "
    "and delete them; files/s per phase with the sync after it (the primary metric), "
    "before it, and the sync's time.",
    _RAID1,
    {"smallfiles_4k": _job("4k"), "smallfiles_128k": _job("128k")},
    {"smallfiles_4k": 1, "smallfiles_128k": 1}, _build,
    options="count, files_per_dir", keys=KEYS)
KIND = RawKind("smallfiles", "", named(RESULT), _parse)
