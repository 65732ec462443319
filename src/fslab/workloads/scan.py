"""`scan`: read every file of the target's tree cold, in directory order.

What `grep -r` or a backup does, and what aging slows down most (Conway et al., FAST '17:
a scan of an aged tree ran up to 15-175× slower than of the same files laid out fresh).
Caches are dropped, then the tree is walked depth-first in the order the directories
list their entries (readdir, not sorted: as grep does) and every regular file is read to
its end. Reported: bytes/s, files/s and seconds for the read, and the *dynamic layout
score* of that same read order — the share of the blocks read (after the first) that sit
physically right after the block read before them, across file boundaries, from FIEMAP
(Conway et al.'s measure; 1.0 is one sequential sweep). On file systems without FIEMAP
(FUSE) the score is missing with the reason, never 1.

A plug-in of fslab's own (core/plugins.py): the module declares its suite (SUITE) and
the kind that parses the record it writes (KIND).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from fslab.core.metrics import Measurement, cpu_measurements
from fslab.host import system
from fslab.parsers.raw_files import Parsed, RawFiles, RawKind, named, read_json
from fslab.probes.fiemap import NotMeasurable, extents
from fslab.workloads.base import Capabilities, RunOutput, Where, Workload
from fslab.workloads.cpu_use import cpu_use
from fslab.workloads.provenance import Param, fslab
from fslab.workloads.suites import Suite, only_keys, picked

RESULT = "scan.json"  # the run's record: files, bytes, seconds, layout score
ORDER = "scan-order.txt"
READ_CHUNK = 1 << 20
BLOCK = 4096


@dataclass
class ScanWorkload(Capabilities):
    """A cold scan of the whole tree; `subdir` limits it to one directory of the target."""

    name: str = "scan"
    subdir: str = ""
    family: str = "scan"
    PRIMARY: ClassVar[str] = "bw_bytes"  # a cold recursive read: its bandwidth
    reads_tree: ClassVar[bool] = True  # the target's own files: an aged tree or its twin

    def check(self) -> None:
        return None

    def required_bytes(self) -> int:
        return 0

    def render(self, where: Where) -> dict[str, str]:
        return {RESULT: json.dumps({"tree": str(self._tree(where)), "order": "readdir",
                                    "caches": "dropped before the scan"}, indent=2)}

    def _tree(self, where: Where) -> Path:
        root = where.root or (where.directory.parent if where.directory else Path("."))
        return root / self.subdir if self.subdir else root

    def run(self, where: Where, run_dir: Path) -> RunOutput:
        if where.device:
            return RunOutput(status="unsupported", reason="scan reads a file tree")
        tree = self._tree(where)
        skip = where.directory  # fslab's own (empty) work directory for this run
        caches = system.sync_and_drop_caches()
        order: list[str] = []
        with cpu_use() as cpu:
            start = time.perf_counter()
            moved = 0
            for path in walk(tree, skip):
                moved += read_file(path)
                order.append(path)
            seconds = time.perf_counter() - start
        (run_dir / ORDER).write_text("\n".join(order) + "\n")
        score, reason = dynamic_layout_score(order)
        record = {"tree": str(tree), "files": len(order), "bytes": moved,
                  "seconds": seconds, "caches_dropped": caches, "layout_score": score,
                  "layout_reason": reason, "cpu_usr": cpu.usr_pct, "cpu_sys": cpu.sys_pct}
        (run_dir / RESULT).write_text(json.dumps(record, indent=1))
        if not order:
            return RunOutput(status="failed", reason=f"no files to scan under {tree}")
        return RunOutput(metadata={"tree": str(tree)})


def walk(tree: Path, skip: Path | None = None) -> Iterator[str]:
    """Regular files depth-first, each directory's entries in the order it lists them."""
    stack = [str(tree)]
    skipped = str(skip) if skip else ""
    while stack:
        directory = stack.pop()
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        subdirs = []
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                if entry.path != skipped and entry.name != "lost+found":
                    subdirs.append(entry.path)
            elif entry.is_file(follow_symlinks=False):
                yield entry.path
        stack.extend(reversed(subdirs))  # visit them in listed order


def read_file(path: str) -> int:
    """Read a file to its end; the bytes read."""
    total = 0
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return 0
    try:
        while chunk := os.read(fd, READ_CHUNK):
            total += len(chunk)
    finally:
        os.close(fd)
    return total


def dynamic_layout_score(order: list[str]) -> tuple[float | None, str]:
    """Share of blocks, in read order across files, that follow the previous block read
    physically (Conway et al. 2017); (None, why) when FIEMAP is not available."""
    pairs = contiguous = 0
    previous_end: int | None = None
    try:
        for path in order:
            for extent in extents(Path(path)):
                blocks = -(-extent.length // BLOCK)
                if not blocks:
                    continue
                if previous_end is not None:
                    pairs += 1
                    contiguous += extent.physical == previous_end
                pairs += blocks - 1
                contiguous += blocks - 1
                previous_end = extent.physical + blocks * BLOCK
    except NotMeasurable as exc:
        return None, f"not measurable here: FIEMAP {exc}"
    except OSError as exc:
        return None, f"FIEMAP failed: {exc.strerror}"
    if not pairs:
        return None, "fewer than two blocks read"
    return contiguous / pairs, ""


def _parse(files: RawFiles) -> Parsed:
    record = read_json(files, RESULT)
    seconds = max(float(record["seconds"]), 1e-9)
    score = record.get("layout_score")
    out = [Measurement("read", "bw_bytes", record["bytes"] / seconds),
           Measurement("read", "ops_per_s", record["files"] / seconds),
           Measurement("read", "seconds", seconds),
           Measurement("read", "io_bytes", float(record["bytes"])),
           Measurement("read", "layout_score", float("nan") if score is None else float(score),
                       note=record.get("layout_reason") or "")]
    return Parsed("scan", out + cpu_measurements(record["cpu_usr"], record["cpu_sys"]))


KEYS = frozenset({"subdir"})


def _build(only: list[str], runtime: int, file_size: int,
           options: dict[str, object], seed: int, published: bool) -> list[Workload]:
    only_keys(options, KEYS, "scan")
    return picked(only, [ScanWorkload("scan", str(options.get("subdir", "")))])


SUITE = Suite(
    "scan",
    "Drop caches, then read every file of the target's tree in directory order (as "
    "grep -r or a backup does): bytes/s, files/s and the dynamic layout score of that "
    "read order (FIEMAP). For aged images against fresh copies of their files.",
    None,
    {"scan": {"order": Param("readdir order, every file read whole", fslab(
        "a cold recursive scan, after Conway et al. (FAST '17), which is not one of "
        "the five studies"))}},
    {"scan": 1}, _build, options="subdir", keys=KEYS)
KIND = RawKind("scan", "", named(RESULT), _parse)
