"""Aging recipes beyond random operations: what ages a file system in practice.

- `interleaved` (creation-order aging): a synthetic source-like tree — directories of
  many small files and a few large ones — written in rounds; each round grows every
  unfinished file by its next piece (4 KiB), in a shuffled order, and syncs. Files that a fresh
  copy writes one after the other end up as interleaved pieces (on this machine: ext4,
  2,000 files grown 4 KiB at a time, 16 extents per file instead of 1, a cold scan 1.9×
  as long). It ends when the tree is complete (or at another stop condition).
- `versioned` (a `git pull` at a time, Conway et al. FAST '17): the tree is written in
  order, as a clone is, then each version rewrites a share of its files (a new file in
  place of the old, as a checkout does), adds some and deletes some, and syncs. It runs
  to a stop condition (bytes written as a multiple of the capacity, a layout score, a
  plateau, ...).
Both are seeded and deterministic, log every operation as the op mix does (create,
append, write, delete), and keep under the target fill of the capacity.
"""

from __future__ import annotations

import hashlib
import math
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

from fslab.aging.config import OPS, AgingConfig
from fslab.aging.log import AgingLog
from fslab.host import system


class Driver(Protocol):
    """What a recipe uses of the engine that runs it (aging/engine.py): its log, stop
    rules and maintenance. The engine runs recipes; recipes do not import the engine."""

    config: AgingConfig
    root: Path
    buffer: memoryview
    log: AgingLog

    def maintain(self, now: float, done: int) -> None: ...

    def stop_reached(self, done: int) -> bool: ...

    def used_share(self) -> float: ...

CHUNK = 4096
LARGE_SHARE = 0.01  # of the files: a few large ones (built artefacts, archives)
SMALL_MU, SMALL_SIGMA = math.log(8 * 1024), 1.0  # source files: mostly a few KiB
CREATE, APPEND, WRITE, DELETE = (OPS.index(op) for op in ("create", "append", "write",
                                                         "delete"))


@dataclass
class Tree:
    """A synthetic source-like tree: relative paths and their sizes."""

    paths: list[str]
    sizes: list[int]


def make_tree(config: AgingConfig, capacity: int, rng: np.random.Generator,
              count: int | None = None, prefix: str = "") -> Tree:
    """`count` files (default config.tree_files) over directories of ~30, small files
    lognormal around 8 KiB, 1 % large; scaled so the tree fills `fill` of `capacity`."""
    count = config.tree_files if count is None else count
    sizes = np.exp(rng.normal(SMALL_MU, SMALL_SIGMA, count))
    large = rng.random(count) < LARGE_SHARE
    sizes[large] = rng.uniform(1, 8, int(large.sum())) * 1024**2
    target = config.fill * capacity
    if prefix == "" and count and sizes.sum() > 0:
        sizes *= target / sizes.sum()
    sizes = np.clip(np.round(sizes), 1, None).astype(np.int64)
    per_dir = 30
    paths = [f"{prefix}m{(i // per_dir) // 20:03d}/d{(i // per_dir) % 20:02d}/f{i:06d}.c"
             for i in range(count)]
    return Tree(paths, sizes.tolist())


class RecipeRun:
    """Runs a recipe in `root` through an Engine's log, stop rules and maintenance."""

    def __init__(self, engine: Driver) -> None:
        self.engine = engine
        self.config = engine.config
        self.rng = np.random.default_rng(self.config.seed)
        stats = os.statvfs(engine.root)
        self.capacity = stats.f_blocks * stats.f_frsize
        self.buffer = engine.buffer
        self.start_ns = time.perf_counter_ns()
        self.done = 0
        self.dirs: dict[str, int] = {}
        self.sequence = hashlib.sha256()  # every planned operation, in order

    # -- operations, logged as the op mix logs them ------------------------------------

    def _dir_fd(self, relative: str) -> int:
        directory = os.path.dirname(relative)
        fd = self.dirs.get(directory)
        if fd is None:
            path = self.engine.root / directory
            path.mkdir(parents=True, exist_ok=True)
            fd = self.dirs[directory] = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
        return fd

    def _timed(self, code: int, action: object, relative: str = "", size: int = 0) -> None:
        self.sequence.update(f"{code} {relative} {size}\n".encode())
        log = self.engine.log
        began = time.perf_counter_ns()
        try:
            action()  # type: ignore[operator]
        except OSError as exc:
            import errno

            log.failures[(OPS[code], errno.errorcode.get(exc.errno or 0, "?"))] += 1
        else:
            ended = time.perf_counter_ns()
            log.t.append((ended - self.start_ns) / 1e9)
            log.op.append(code)
            log.latency_ns.append(ended - began)
        self.done += 1

    def write(self, relative: str, size: int, append: bool) -> None:
        """Create (or append to) a file with `size` bytes."""
        flags = os.O_WRONLY | (os.O_APPEND if append else os.O_CREAT | os.O_TRUNC)

        def action() -> None:
            fd = os.open(os.path.basename(relative), flags | os.O_CREAT, 0o644,
                         dir_fd=self._dir_fd(relative))
            try:
                left = size
                while left > 0:
                    left -= os.write(fd, self.buffer[:min(left, len(self.buffer))])
            finally:
                os.close(fd)
            self.engine.log.bytes_written += size

        self._timed(APPEND if append else CREATE, action, relative, size)

    def delete(self, relative: str) -> None:
        self._timed(DELETE, lambda: os.unlink(os.path.basename(relative),
                                              dir_fd=self._dir_fd(relative)), relative)

    # -- stop rules and maintenance ------------------------------------------------------

    def checkpoint(self) -> bool:
        """Sync the aged file system, let the engine maintain and probe; True when a stop
        rule fired."""
        system.sync_file_system(self.engine.root)
        engine = self.engine
        engine.log.ops_done = self.done
        if engine.stop_reached(self.done):
            return True
        engine.maintain((time.perf_counter_ns() - self.start_ns) / 1e9, self.done)
        return engine.stop_reached(self.done)

    def close(self) -> None:
        for fd in self.dirs.values():
            os.close(fd)
        self.dirs = {}

    # -- the recipes ---------------------------------------------------------------------

    def interleaved(self) -> str:
        """Grow every file of the tree piece by piece, in shuffled rounds, syncing."""
        tree = make_tree(self.config, self.capacity, self.rng)
        piece = self.config.piece
        written = [0] * len(tree.paths)
        pending = list(range(len(tree.paths)))
        while pending:
            for i in self.rng.permutation(pending).tolist():
                size = min(piece, tree.sizes[i] - written[i])
                self.write(tree.paths[i], size, append=written[i] > 0)
                written[i] += size
            pending = [i for i in pending if written[i] < tree.sizes[i]]
            if self.checkpoint():
                return ""
        return "recipe complete"

    def versioned(self) -> str:
        """Clone the tree in order, then apply versions (rewrite, add, delete, sync)."""
        config = self.config
        tree = make_tree(config, self.capacity, self.rng)
        live = dict(zip(tree.paths, tree.sizes, strict=True))
        for path, size in live.items():
            self.write(path, size, append=False)
        if self.checkpoint():
            return ""
        added = 0
        for version in range(10**9):
            names = sorted(live)
            count = len(names)
            rewrite = self.rng.choice(count, int(config.version_change * count), replace=False)
            delete = set(self.rng.choice(count, int(config.version_delete * count),
                                         replace=False).tolist()) - set(rewrite.tolist())
            for i in rewrite.tolist():
                size = max(1, int(live[names[i]] * self.rng.lognormal(0, 0.2)))
                self.delete(names[i])  # a checkout writes a new file in place of the old
                self.write(names[i], size, append=False)
                live[names[i]] = size
            for i in sorted(delete):
                self.delete(names[i])
                del live[names[i]]
            # new files (sizes as the tree's own: unscaled draws) land in existing
            # directories, next to old ones; none while the tree is above its fill
            grown = self.engine.used_share() > min(0.95, config.fill + 0.15)
            new = make_tree(config, self.capacity, self.rng, prefix=f"v{version}-",
                            count=0 if grown else max(1, int(config.version_add * count)))
            for size in new.sizes if not grown else []:
                relative = names[int(self.rng.integers(count))]
                path = f"{os.path.dirname(relative)}/a{added:07d}.c"
                added += 1
                self.write(path, size, append=False)
                live[path] = size
            if self.checkpoint():
                return ""
        return "recipe complete"
