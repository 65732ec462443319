"""`smallfiles`: K files of S bytes over directories; write, rewrite, read, delete phases.

The "create 100,000 files of 4 KiB and 128 KiB, then rewrite, read and delete them" test.
For each phase: files per second, and the duration of the sync that follows it (the
cost the phase left in the page cache). Files are opened relative to their directory's
descriptor, so the harness spends as little as possible per file (see
benchmarks/smallfiles_vs_fsmark).
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from fslab.core.errors import UserError
from fslab.host import system
from fslab.parsers.raw_names import SMALLFILES_RECORD
from fslab.workloads.base import Capabilities, RunOutput, Where
from fslab.workloads.cpu_use import cpu_use

PHASES = ("write", "rewrite", "read", "delete")
RESULT = SMALLFILES_RECORD


@dataclass
class SmallFilesWorkload(Capabilities):
    """Create, rewrite, read (cold) and delete `count` files of `size` bytes."""

    name: str
    count: int = 100_000
    size: int = 4096
    files_per_dir: int = 1000
    family: str = "smallfiles"
    PRIMARY: ClassVar[str] = "ops_per_s"  # files per second in each phase

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
