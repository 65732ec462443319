"""Workloads that touch an aged file system's own files (not fresh ones in free space).

One aging study got no usable fresh-vs-aged result because fio created brand-new files
instead of touching the aged ones (the thesis, section 7.3). These read every existing
file cold (as a recursive grep would), overwrite and append to existing files, and create
new files in the fragmented free space. They run on targets started from an aged image
(`image = ...`), on fresh file systems holding the same files (`fresh_copy_of = ...`) and,
in an `age` sweep, on each aged level and its fresh twin (workloads/aging_levels.py).

The large-file pair reaches the device, where layout acts: every aged file of at least
`min_size` (1 MiB) read, then rewritten in place, sequentially with O_DIRECT in 1 MiB
requests (the page cache neither serves the reads nor absorbs the writes), its bytes/s
beside the files' Smith–Seltzer layout score and FIEMAP extents per file, measured after
the pass (a rewrite in place keeps the blocks on ext4 and xfs; a copy-on-write file
system moves them, and the score says so).

A plug-in of fslab's own (core/plugins.py): the module declares its suite (SUITE) and
the kind that parses the record it writes (KIND).
"""

from __future__ import annotations

import json
import math
import mmap
import os
import random
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fslab.core.metrics import Measurement, cpu_measurements
from fslab.core.units import parse_size
from fslab.host import system
from fslab.parsers.raw_files import Parsed, RawFiles, RawKind, named, read_json
from fslab.probes.fiemap import NotMeasurable, extents, file_layout, layout_score
from fslab.workloads.base import Capabilities, RunOutput, Where, Workload
from fslab.workloads.cpu_use import cpu_use
from fslab.workloads.provenance import Param, fslab
from fslab.workloads.suites import Suite, only_keys, picked

# ln(bytes) of file sizes in file-system metadata studies (Agrawal et al., FAST '07):
# the aged files here and the aging engine's files (aging/config.py) share them.
LOGNORMAL_MU = 9.48
LOGNORMAL_SIGMA = 2.46

AGED_TREE = "aged"  # where `fslab age` puts its files
RESULT = "agedfiles.json"  # the run's record: files, bytes and seconds of its action
LARGE = ("largeread", "largerewrite")  # O_DIRECT passes over the aged large files
DIRECT_CHUNK = 1 << 20  # one O_DIRECT request (aligned: an mmap'd buffer)
DIRECT_ALIGN = 4096  # an O_DIRECT request's offset and length are multiples of this


@dataclass
class AgedFilesWorkload(Capabilities):
    """One action over the aged tree; `count` files (0 = all), seeded selection."""

    name: str
    action: str
    count: int = 0
    size: int = 64 * 1024  # appended bytes, or the cap of created files' sizes
    seed: int = 1
    min_size: int = 1 << 20  # the large-file pair: files of at least this many bytes
    family: str = "agedfiles"

    @property
    def primary_metric(self) -> str:
        """Files per second of each operation; bytes per second of the large-file pair."""
        return "bw_bytes" if self.action in LARGE else "ops_per_s"

    @property
    def reads_tree(self) -> bool:  # type: ignore[override]
        """Every action but create touches the aged files (create writes new ones)."""
        return self.action != "create"

    def check(self) -> None:
        return None

    def required_bytes(self) -> int:
        if self.action == "create":
            return (self.count or 1000) * self.size
        if self.action == "append":
            return (self.count or 1000) * self.size
        return 0

    def render(self, where: Where) -> dict[str, str]:
        return {RESULT: json.dumps({"action": self.action, "count": self.count,
                                    "size": self.size, "seed": self.seed}, indent=2)}

    def run(self, where: Where, run_dir: Path) -> RunOutput:
        tree = (where.root or Path("/nonexistent")) / AGED_TREE
        if self.action != "create" and not tree.is_dir():
            return RunOutput(status="unsupported", reason=(
                f"no aged file tree at {tree}: start the target from an aged image "
                "(image = ...) or with its files (fresh_copy_of = ...)"))
        files = sorted(self._files(tree)) if self.action != "create" else []
        if self.action in LARGE:
            files = [path for path in files if os.stat(path).st_size >= self.min_size]
        if self.action != "create" and self.count and len(files) > self.count:
            files = sorted(random.Random(self.seed).sample(files, self.count))
        caches = system.sync_and_drop_caches()
        with cpu_use() as cpu:
            start = time.perf_counter()
            moved, done = getattr(self, f"_{self.action}")(files, where)
            seconds = time.perf_counter() - start
        record = {"action": self.action, "files": done, "bytes": moved, "seconds": seconds,
                  "caches_dropped": caches, "cpu_usr": cpu.usr_pct, "cpu_sys": cpu.sys_pct,
                  **(layout_of(files) if self.action in LARGE else {})}
        (run_dir / RESULT).write_text(json.dumps(record, indent=1))
        if done == 0:
            return RunOutput(status="failed", reason=f"no files to {self.action} in {tree}")
        return RunOutput()

    @staticmethod
    def _files(tree: Path) -> list[str]:
        return [os.path.join(d, f) for d, _, names in os.walk(tree) for f in names]

    def _readall(self, files: list[str], where: Where) -> tuple[int, int]:
        moved = 0
        for path in files:
            fd = os.open(path, os.O_RDONLY)
            try:
                while chunk := os.read(fd, 1 << 20):
                    moved += len(chunk)
            finally:
                os.close(fd)
        return moved, len(files)

    def _overwrite(self, files: list[str], where: Where) -> tuple[int, int]:
        moved = 0
        data = os.urandom(1 << 20)
        for path in files:
            fd = os.open(path, os.O_WRONLY)
            try:
                size = os.fstat(fd).st_size
                offset = 0
                while offset < size:
                    offset += os.pwrite(fd, data[: min(len(data), size - offset)], offset)
                os.fdatasync(fd)
            finally:
                os.close(fd)
            moved += size
        return moved, len(files)

    def _append(self, files: list[str], where: Where) -> tuple[int, int]:
        data = os.urandom(self.size)
        for path in files:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND)
            try:
                os.write(fd, data)
                os.fdatasync(fd)
            finally:
                os.close(fd)
        return len(files) * self.size, len(files)

    def _largeread(self, files: list[str], where: Where) -> tuple[int, int]:
        """Each file read whole, in order, with O_DIRECT."""
        buffer = mmap.mmap(-1, DIRECT_CHUNK)
        moved = 0
        try:
            for path in files:
                fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
                try:
                    offset = 0
                    while got := os.preadv(fd, [buffer], offset):
                        moved += got
                        offset += got
                finally:
                    os.close(fd)
        finally:
            buffer.close()
        return moved, len(files)

    def _largerewrite(self, files: list[str], where: Where) -> tuple[int, int]:
        """Each file's whole 4 KiB blocks rewritten in place, in order, with O_DIRECT
        (the tail past the last whole block is left as it is), then fdatasync."""
        buffer = mmap.mmap(-1, DIRECT_CHUNK)
        buffer.write(os.urandom(DIRECT_CHUNK))
        moved = 0
        try:
            for path in files:
                fd = os.open(path, os.O_WRONLY | os.O_DIRECT)
                try:
                    end = os.fstat(fd).st_size // DIRECT_ALIGN * DIRECT_ALIGN
                    offset = 0
                    while offset < end:
                        offset += os.pwrite(fd, memoryview(buffer)[:min(DIRECT_CHUNK,
                                                                        end - offset)],
                                            offset)
                    os.fdatasync(fd)
                finally:
                    os.close(fd)
                moved += end
        finally:
            buffer.close()
        return moved, len(files)

    def _create(self, files: list[str], where: Where) -> tuple[int, int]:
        assert where.directory is not None
        rng = random.Random(self.seed)
        data = os.urandom(self.size)
        moved = 0
        count = self.count or 1000
        for index in range(count):
            size = max(1, min(self.size, int(math.exp(rng.gauss(LOGNORMAL_MU,
                                                                 LOGNORMAL_SIGMA)))))
            fd = os.open(where.directory / f"new{index:06d}", os.O_WRONLY | os.O_CREAT, 0o644)
            try:
                os.write(fd, data[:size])
                os.fdatasync(fd)
            finally:
                os.close(fd)
            moved += size
        return moved, count


def layout_of(files: list[str]) -> dict[str, Any]:
    """The files' Smith–Seltzer layout score and FIEMAP extents per file (records counted
    one by one: filefrag merges adjacent ones), or why not."""
    layouts = []
    try:
        for path in files:
            layouts.append(file_layout(extents(Path(path))))
    except NotMeasurable as exc:
        return {"layout_score": None, "layout_reason": f"not measurable here: FIEMAP {exc}"}
    except OSError as exc:
        return {"layout_score": None, "layout_reason": f"FIEMAP failed: {exc.strerror}"}
    score = layout_score(layouts)
    return {"layout_score": score if score == score else None, "layout_reason": "",
            "extents_per_file": (sum(f.extents for f in layouts) / len(layouts)
                                 if layouts else None)}


def _parse(files: RawFiles) -> Parsed:
    record = read_json(files, RESULT)
    op = "read" if record["action"] in ("readall", "largeread") else "write"
    seconds = max(record["seconds"], 1e-9)
    out = [Measurement(op, "bw_bytes", record["bytes"] / seconds),
           Measurement(op, "ops_per_s", record["files"] / seconds),
           Measurement(op, "seconds", record["seconds"]),
           *cpu_measurements(record["cpu_usr"], record["cpu_sys"])]
    if "layout_score" in record:  # the large-file pair: the layout beside the throughput
        score, why = record["layout_score"], record.get("layout_reason") or ""
        out += [Measurement(op, "file_layout_score",
                            math.nan if score is None else float(score), note=why),
                Measurement(op, "extents_per_file",
                            math.nan if record.get("extents_per_file") is None
                            else float(record["extents_per_file"]), note=why)]
    return Parsed("agedfiles", out)


KEYS = frozenset({"count", "size", "seed", "min_size"})
_OWN = fslab("fslab's own: touches an aged target's own files (no study gives these)")


def _build(only: list[str], runtime: int, file_size: int,
           options: dict[str, Any], seed: int, published: bool) -> list[Workload]:
    only_keys(options, KEYS, "agedfiles")
    count = int(options.get("count", 0))
    size = parse_size(options.get("size", "64K"))
    seed = int(options.get("seed", 1))
    least = parse_size(options.get("min_size", "1M"))
    return picked(only, [
        AgedFilesWorkload("aged_readall", "readall", count, size, seed),
        AgedFilesWorkload("aged_overwrite", "overwrite", count or 500, size, seed),
        AgedFilesWorkload("aged_append", "append", count or 500, size, seed),
        AgedFilesWorkload("aged_create", "create", count or 1000, size, seed),
        AgedFilesWorkload("aged_largeread", "largeread", count, size, seed, least),
        AgedFilesWorkload("aged_largerewrite", "largerewrite", count, size, seed, least),
    ])


SUITE = Suite(
    "agedfiles",
    "Touch the aged file system's own files: read every file cold, overwrite and "
    "append to existing files, create new files in the fragmented free space; read and "
    "rewrite the large ones sequentially with O_DIRECT, their layout beside.",
    None,
    {"aged_readall": {"files": Param("every file under aged/, caches dropped first", _OWN)},
     "aged_overwrite": {"count": Param(500, _OWN), "sync": Param("fdatasync each", _OWN)},
     "aged_append": {"count": Param(500, _OWN), "size": Param("64K", _OWN)},
     "aged_create": {"count": Param(1000, _OWN),
                     "sizes": Param("lognormal up to 64 KiB", _OWN)},
     "aged_largeread": {"files": Param("every aged file of at least min_size (1M)", _OWN),
                        "io": Param("sequential, O_DIRECT, 1 MiB requests", _OWN)},
     "aged_largerewrite": {"files": Param("as aged_largeread, rewritten in place", _OWN),
                           "io": Param("sequential, O_DIRECT, 1 MiB requests, fdatasync "
                                       "each file", _OWN)}},
    {"aged_readall": 1, "aged_overwrite": 1, "aged_append": 1, "aged_create": 1,
     "aged_largeread": 1, "aged_largerewrite": 1},
    _build, options="count, size, seed, min_size", keys=KEYS)
KIND = RawKind("agedfiles", "", named(RESULT), _parse)
