"""`files`: write a file of S bytes of random data N times, timing each; read each back cold.

The USB-stick study's test ("write a 10 MiB / 100 MiB file of random data N times"). Each
sample: make fresh random data (untimed), then time open + write + the end-of-file flush
(none, fdatasync, or O_DIRECT writes) + close; drop caches; time reading it back; delete
it. One sample's file exists at a time, so the test needs only S bytes of space.

`tool = "dd"` runs the study's own way instead: `dd if=/dev/urandom` per sample, timed by
dd itself (so the time includes making the random data), read back by dd after dropping
caches; its log is kept as dd.log and parsed by parsers/dd.py.
"""

from __future__ import annotations

import json
import mmap
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from fslab.core.errors import UserError
from fslab.host import system
from fslab.parsers.raw_names import DD_LOG, FILES_RECORD
from fslab.workloads.base import Capabilities, RunOutput, Where
from fslab.workloads.cpu_use import cpu_use

FLUSH_MODES = ("none", "fdatasync", "odirect")
TOOLS = ("python", "dd")
DD_FLUSH = {"none": [], "fdatasync": ["conv=fdatasync"], "odirect": ["oflag=direct"]}
CHUNK = 1024**2  # bytes per write() call
ALIGN = 4096  # O_DIRECT needs block-aligned sizes and buffers
RESULT = FILES_RECORD


@dataclass
class FilesWorkload(Capabilities):
    """N timed writes (and cold reads) of one file of S random bytes."""

    name: str
    size: int
    count: int
    flush: str = "fdatasync"
    tool: str = "python"  # or "dd": the study's own tool (see the module's docstring)
    family: str = "files"
    PRIMARY: ClassVar[str] = "bw_bytes"  # a file write or read test: its rate

    def check(self) -> None:
        if self.flush not in FLUSH_MODES:
            raise UserError(f"workload {self.name}: flush must be one of "
                            f"{', '.join(FLUSH_MODES)}, not {self.flush!r}")
        if self.tool not in TOOLS:
            raise UserError(f"workload {self.name}: tool must be one of {', '.join(TOOLS)}, "
                            f"not {self.tool!r}")
        if self.count < 1:
            raise UserError(f"workload {self.name}: count must be at least 1")
        if self.flush == "odirect" and self.size % ALIGN:
            raise UserError(f"workload {self.name}: O_DIRECT needs a size that is a multiple "
                            f"of {ALIGN} bytes")

    def required_bytes(self) -> int:
        return self.size

    def render(self, where: Where) -> dict[str, str]:
        return {"files.json": json.dumps({
            "directory": str(where.directory), "size": self.size, "count": self.count,
            "flush": self.flush, "tool": self.tool, "data": "fresh random bytes per sample",
            "read_back": "after dropping caches"}, indent=2)}

    def run(self, where: Where, run_dir: Path) -> RunOutput:
        if where.directory is None:
            return RunOutput(status="unsupported", reason="files needs a file system")
        (run_dir / "files.json").write_text(self.render(where)["files.json"])
        if self.tool == "dd":
            return self._run_dd(where.directory, run_dir)
        buffer = mmap.mmap(-1, max(self.size, ALIGN))  # page-aligned: O_DIRECT accepts it
        samples = []
        caches_dropped = True
        with cpu_use() as cpu:
            for index in range(self.count):
                buffer[: self.size] = os.urandom(self.size)
                path = where.directory / f"sample-{index}"
                written = self._write(path, buffer)
                caches_dropped &= system.sync_and_drop_caches()
                read = _timed_read(path)
                path.unlink()
                samples.append({"sample": index, "write_s": written, "read_s": read})
        buffer.close()
        record = {"size": self.size, "flush": self.flush, "caches_dropped": caches_dropped,
                  "samples": samples, "cpu_usr": cpu.usr_pct, "cpu_sys": cpu.sys_pct}
        (run_dir / RESULT).write_text(json.dumps(record, indent=1))
        return RunOutput(metadata={"flush": self.flush, "caches_dropped": caches_dropped})

    def _write(self, path: Path, buffer: mmap.mmap) -> float:
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
        if self.flush == "odirect":
            flags |= os.O_DIRECT
        view = memoryview(buffer)
        start = time.perf_counter()
        fd = os.open(path, flags, 0o644)
        try:
            offset = 0
            while offset < self.size:
                offset += os.write(fd, view[offset: min(offset + CHUNK, self.size)])
            if self.flush == "fdatasync":
                os.fdatasync(fd)
        finally:
            os.close(fd)
        elapsed = time.perf_counter() - start
        view.release()
        return elapsed

    def _run_dd(self, directory: Path, run_dir: Path) -> RunOutput:
        """The study's way: dd writes random data and times itself; dd reads it back."""
        block, blocks = (CHUNK, self.size // CHUNK) if self.size % CHUNK == 0 else (
            self.size, 1)
        log = []
        caches_dropped = True
        with cpu_use() as cpu:
            for index in range(self.count):
                path = directory / f"sample-{index}"
                log.append(_dd(["if=/dev/urandom", f"of={path}", f"bs={block}",
                                f"count={blocks}", *DD_FLUSH[self.flush]], "write"))
                caches_dropped &= system.sync_and_drop_caches()
                log.append(_dd([f"if={path}", "of=/dev/null", f"bs={block}"], "read"))
                path.unlink()
        (run_dir / DD_LOG).write_text("".join(log))
        record = {"size": self.size, "flush": self.flush, "tool": "dd",
                  "caches_dropped": caches_dropped, "cpu_usr": cpu.usr_pct,
                  "cpu_sys": cpu.sys_pct}
        (run_dir / RESULT).write_text(json.dumps(record, indent=1))
        return RunOutput(metadata={"flush": self.flush, "tool": "dd",
                                   "caches_dropped": caches_dropped})


def _timed_read(path: Path) -> float:
    start = time.perf_counter()
    with path.open("rb", buffering=0) as handle:
        while handle.read(CHUNK):
            pass
    return time.perf_counter() - start


def _dd(arguments: list[str], op: str) -> str:
    """One dd run; its stderr (the "copied" line) under a header naming the op."""
    result = system.run(["dd", *arguments])
    return f"# {op}\n{result.stderr}"
