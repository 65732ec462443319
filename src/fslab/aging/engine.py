"""The aging engine: run the planned operations against a directory, keep it under a
target utilisation, trim and probe as configured, and log every successful operation.

Every planned operation is aimed at a file it can act on (a create at a free name, the
rest at an existing file near the drawn one), so a failure is the file system's answer
(ENOSPC, EDQUOT, ...): counted per operation and errno, never logged as a latency, and
never counted in a rate.
"""

from __future__ import annotations

import contextlib
import errno
import os
import random
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from fslab.aging.config import OPS, AgingConfig
from fslab.aging.fileset import FileSet
from fslab.aging.finish import finish_full
from fslab.aging.generator import OpGenerator
from fslab.aging.log import AgingLog
from fslab.aging.recipes import RecipeRun
from fslab.aging.stops import probe_target_reached
from fslab.core.aging_record import Probe
from fslab.host import system
from fslab.host.space import RootSpace, fresh_capacity, root_space

CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL
CREATE_CODE, WRITE_CODE = OPS.index("create"), OPS.index("write")
READ_CODE, RENAME_CODE = OPS.index("read"), OPS.index("rename")
CHECK_SHARE = 0.004  # of the file system's size written between utilisation checks
PROBE_FOR_STOPS = 2000  # operations between probes when a stop rule needs them


class Engine:
    """Runs one aging configuration in `root` (a directory on the target)."""

    def __init__(self, config: AgingConfig, root: Path,
                 probe: Callable[[int], Probe | None] | None = None,
                 fstrim: Callable[[], None] | None = None) -> None:
        config.validate()
        self.config = config
        self.root = root
        self.probe = probe
        self.fstrim = fstrim or (lambda: None)
        self.log = AgingLog()
        self.files = FileSet(config.max_files)
        self.maintenance_rng = random.Random(config.seed + 1)
        self.buffer = memoryview(os.urandom(max(config.size_max, config.io_size)))
        self._layout()
        self._next_trim = config.fstrim_every or 0
        # Probe-based stops need probes: every PROBE_FOR_STOPS operations unless set.
        self.probe_every = config.probe_every or (
            PROBE_FOR_STOPS if (config.layout_target is not None or config.plateau) else 0)
        self._next_probe = self.probe_every
        self.probes: list[Probe] = []
        self._deadline: float | None = None
        self._next_trim_s = config.fstrim_seconds or 0.0
        # Check utilisation every `check_every` operations, and also whenever writes since
        # the last check reach CHECK_SHARE of the file system: large files must not carry
        # the used share past the target between two checks.
        stats = os.statvfs(root) if root.exists() else os.statvfs(root.parent)
        self.capacity = stats.f_blocks * stats.f_frsize
        # what root could write on the fresh file system: the utilisation's whole
        self.root_capacity = fresh_capacity(root)
        self._check_bytes = max(1, int(self.capacity * CHECK_SHARE))
        self._written_at_check = 0

    def _layout(self) -> None:
        """Directories `levels` deep, `dirs_per_level` wide; files fill them in blocks
        (file i lives in directory i // ceil(max_files / D)), so neighbouring files, and a
        Gaussian working set, share directories as related files do.

        Files are opened relative to an open descriptor of their directory (no path walk
        per operation), so the engine spends its time in the file system, not in lookups.
        """
        dirs = [self.root]
        for _ in range(self.config.levels):
            dirs = [d / f"d{j:02d}" for d in dirs for j in range(self.config.dirs_per_level)]
        for directory in dirs:
            directory.mkdir(parents=True, exist_ok=True)
        self.dir_fds = [os.open(d, os.O_RDONLY | os.O_DIRECTORY) for d in dirs]
        per_dir = -(-self.config.max_files // len(dirs))
        self.at = [self.dir_fds[i // per_dir] for i in range(self.config.max_files)]
        self.names = [f"f{i:07d}" for i in range(self.config.max_files)]

    def close(self) -> None:
        """Close the directory descriptors."""
        for fd in self.dir_fds:
            os.close(fd)
        self.dir_fds = []

    def run(self) -> AgingLog:
        """Run to a stop condition; the directory descriptors are closed whatever happens
        (an open one would keep the target busy and its unmount failing)."""
        self._deadline = (time.perf_counter() + self.config.duration_s
                          if self.config.duration_s else None)
        try:
            if self.config.recipe != "mix":
                return self._run_recipe()
            return self._run()
        finally:
            self.close()

    def _run_recipe(self) -> AgingLog:
        recipe = RecipeRun(self)
        start = time.perf_counter()
        try:
            ended = getattr(recipe, self.config.recipe)()
        finally:
            recipe.close()
        log = self.log
        log.ops_done = recipe.done
        log.seconds = time.perf_counter() - start
        log.stopped_by = log.stopped_by or ended
        log.digest = recipe.sequence.hexdigest()
        self._check_space(log.seconds)
        return log

    def _run(self) -> AgingLog:
        config, log = self.config, self.log
        generator = OpGenerator(config)
        handlers = [self._create, self._write, self._append, self._truncate, self._delete,
                    self._read, self._random_read, self._random_write, self._rename]
        clock = time.perf_counter_ns
        start_ns = clock()
        limit = config.ops if config.ops is not None else float("inf")
        check = max(1, config.check_every)
        times, codes_log, latencies = log.t, log.op, log.latency_ns
        failures = log.failures
        self._check_space(0.0)
        done = 0
        stopped = False
        while not stopped:
            batch = generator.next_batch()
            for code, file, other, size, fraction, sync in zip(
                    batch.codes, batch.files, batch.others, batch.sizes, batch.fractions,
                    batch.syncs, strict=True):
                if done >= limit:
                    log.stopped_by = "ops"
                    stopped = True
                    break
                if done and (done % check == 0 or log.bytes_written - self._written_at_check
                             >= self._check_bytes):
                    self._written_at_check = log.bytes_written
                    log.ops_done = done
                    if self.stop_reached(done):
                        stopped = True
                        break
                    self.maintain((clock() - start_ns) / 1e9, done)
                code, file, other = self._resolve(code, file, other)
                began = clock()
                try:
                    handlers[code](file, other, size, fraction, sync)
                except OSError as exc:
                    failures[(OPS[code], errno.errorcode.get(exc.errno or 0, "?"))] += 1
                else:
                    ended = clock()
                    times.append((ended - start_ns) / 1e9)
                    codes_log.append(code)
                    latencies.append(ended - began)
                done += 1
        log.ops_done = done
        if config.finish_full and config.utilization is not None:
            finish_full(self)
        log.seconds = (clock() - start_ns) / 1e9
        log.digest = generator.digest
        self._check_space(log.seconds)
        return log

    def _resolve(self, code: int, file: int, other: int) -> tuple[int, int, int]:
        """Aim the planned operation at a file it can act on: a create at the
        free name nearest the drawn one, anything else at the existing file nearest it
        (so a Gaussian or drifting working set keeps its locality). With no file to act
        on, the operation becomes a create (with no free name, an overwrite); such
        redirections are counted. A failure is then the file system's own answer."""
        files = self.files
        if code == CREATE_CODE:
            free = files.free_near(file)
            if free is not None:
                return code, free, other
            self.log.redirected[("create", "write")] += 1
            return WRITE_CODE, files.near(file) or 0, other
        existing = files.near(file)
        if existing is None:
            self.log.redirected[(OPS[code], "create")] += 1
            return CREATE_CODE, file, other
        if code == RENAME_CODE:
            target = files.free_near(other)
            if target is None:
                self.log.redirected[("rename", "read")] += 1
                return READ_CODE, existing, other
            return code, existing, target
        return code, existing, other

    # -- stop, pause and maintenance ---------------------------------------------------

    def stop_reached(self, done: int) -> bool:
        """Whether a stop condition holds now (and which: log.stopped_by)."""
        config, log = self.config, self.log
        if config.ops is not None and done >= config.ops:
            log.stopped_by = "ops"
            return True
        if self._deadline is not None and time.perf_counter() >= self._deadline:
            log.stopped_by = "duration"
            return True
        if config.bytes_limit is not None and log.bytes_written >= config.bytes_limit:
            log.stopped_by = "bytes"
            return True
        if config.written is not None and log.bytes_written >= config.written * self.capacity:
            log.stopped_by = f"written {config.written:g}× the capacity"
            return True
        if self._probe_target_reached():
            return True
        if config.stop_file is not None and config.stop_file.exists():
            log.stopped_by = "stop file"
            return True
        while config.pause_file is not None and config.pause_file.exists():
            time.sleep(0.2)
            if config.stop_file is not None and config.stop_file.exists():
                log.stopped_by = "stop file"
                return True
        return False

    def _probe_target_reached(self) -> bool:
        """A probe-based stop rule fired (aging.stops)."""
        reason = probe_target_reached(self.config, self.probes)
        if reason:
            self.log.stopped_by = reason
        return bool(reason)

    def maintain(self, now: float, done: int) -> None:
        config = self.config
        self._check_space(now)
        if config.fstrim_every and done >= self._next_trim:
            self.fstrim()
            self.log.fstrims += 1
            self._next_trim += config.fstrim_every
        if config.fstrim_seconds and now >= self._next_trim_s:
            self.fstrim()
            self.log.fstrims += 1
            self._next_trim_s = now + config.fstrim_seconds
        if self.probe_every and self.probe and done >= self._next_probe:
            found = self.probe(done)
            if found is not None:
                self.probes.append(found)
            self._next_probe = done + self.probe_every

    def space(self) -> RootSpace | None:
        """The space root can write now, of what it could write on the fresh file system
        (host/space.py: ext4's root reserve is root's, what a file system keeps from root
        too is not)."""
        return root_space(self.root, self.root_capacity)

    def used_share(self) -> float:
        """The fill of the space root can write: the share an aging's utilisation is of,
        the same on every file system."""
        found = self.space()
        return found.fill if found is not None else 0.0

    def _check_space(self, now: float) -> None:
        """Above the target utilisation: delete random files down to the low-water mark."""
        config, log = self.config, self.log
        used = self.used_share()
        log.utilization.append((now, log.ops_done, used))
        if config.utilization is None or used <= config.utilization:
            return
        low = config.low_mark or config.utilization
        while used > low and self.files.items:
            victim = self.files.items[self.maintenance_rng.randrange(len(self.files.items))]
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.names[victim], dir_fd=self.at[victim])
            self.files.discard(victim)
            log.deleted_for_space += 1
            if log.deleted_for_space % 16 == 0:
                used = self.used_share()
        system.sync_file_system(self.root)  # deferred frees land before the next measurement
        log.utilization.append((now, log.ops_done, self.used_share()))

    # -- the operations --------------------------------------------------------------

    def _sync(self, fd: int, sync: int) -> None:
        if sync == 1:
            os.fsync(fd)
        elif sync == 2:
            os.fdatasync(fd)

    def _write_all(self, fd: int, size: int) -> None:
        written = 0
        while written < size:
            written += os.write(fd, self.buffer[: min(size - written, len(self.buffer))])
        self.log.bytes_written += size

    def add_file(self, index: int, size: int) -> None:
        """A new file of `size` bytes at a free index (aging/finish.py's filling)."""
        self._create(index, 0, size, 0.0, 0)

    def grow_file(self, index: int, size: int) -> None:
        """Append `size` bytes to an existing file (aging/finish.py's filling)."""
        fd = self._open(index, os.O_WRONLY | os.O_APPEND)
        try:
            self._write_all(fd, size)
        finally:
            os.close(fd)

    def _open(self, index: int, flags: int) -> int:
        return os.open(self.names[index], flags, 0o644, dir_fd=self.at[index])

    # Every operation takes (file, other, size, fraction, sync) from the planned sequence.

    def _create(self, file: int, other: int, size: int, fraction: float, sync: int) -> None:
        fd = self._open(file, CREATE)
        self.files.add(file)  # it exists now, whatever its writes meet (ENOSPC …)
        try:
            self._write_all(fd, size)
            if sync:
                self._sync(fd, sync)
        finally:
            os.close(fd)

    def _write(self, file: int, other: int, size: int, fraction: float, sync: int) -> None:
        fd = self._open(file, os.O_WRONLY)
        try:
            self._write_all(fd, size)
            self._sync(fd, sync)
        finally:
            os.close(fd)

    def _append(self, file: int, other: int, size: int, fraction: float, sync: int) -> None:
        fd = self._open(file, os.O_WRONLY | os.O_APPEND)
        try:
            self._write_all(fd, min(size, 16 * self.config.io_size))
            self._sync(fd, sync)
        finally:
            os.close(fd)

    def _truncate(self, file: int, other: int, size: int, fraction: float, sync: int) -> None:
        fd = self._open(file, os.O_WRONLY)
        try:
            os.ftruncate(fd, int(os.fstat(fd).st_size * fraction))
        finally:
            os.close(fd)

    def _delete(self, file: int, other: int, size: int, fraction: float, sync: int) -> None:
        os.unlink(self.names[file], dir_fd=self.at[file])
        self.files.discard(file)

    def _read(self, file: int, other: int, size: int, fraction: float, sync: int) -> None:
        fd = self._open(file, os.O_RDONLY)
        try:
            while os.read(fd, 1 << 20):
                pass
        finally:
            os.close(fd)

    def _random_read(self, file: int, other: int, size: int, fraction: float,
                     sync: int) -> None:
        fd = self._open(file, os.O_RDONLY)
        try:
            os.pread(fd, self.config.io_size, int(os.fstat(fd).st_size * fraction))
        finally:
            os.close(fd)

    def _random_write(self, file: int, other: int, size: int, fraction: float,
                      sync: int) -> None:
        fd = self._open(file, os.O_WRONLY)
        try:
            offset = int(os.fstat(fd).st_size * fraction)
            os.pwrite(fd, self.buffer[: self.config.io_size], offset)
            self.log.bytes_written += self.config.io_size
            self._sync(fd, sync)
        finally:
            os.close(fd)

    def _rename(self, file: int, other: int, size: int, fraction: float, sync: int) -> None:
        os.rename(self.names[file], self.names[other], src_dir_fd=self.at[file],
                  dst_dir_fd=self.at[other])
        self.files.discard(file)
        self.files.add(other)


def run_fstrim(mountpoint: Path) -> Callable[[], None]:
    """An fstrim step for the engine (errors ignored: some file systems cannot trim)."""
    def trim() -> None:
        subprocess.run(["fstrim", str(mountpoint)], capture_output=True, check=False)
    return trim
