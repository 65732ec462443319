"""`files`: write a file of S bytes of random data N times, timing each; read each back cold.

The USB-stick study's test ("write a 10 MiB / 100 MiB file of random data N times"). Each
sample: make fresh random data (untimed), then time open + write + the end-of-file flush
(none, fdatasync, or O_DIRECT writes) + close; drop caches; time reading it back; delete
it. One sample's file exists at a time, so the test needs only S bytes of space.

`tool = "dd"` runs the study's own way instead: `dd if=/dev/urandom` per sample, timed by
dd itself (so the time includes making the random data), read back by dd after dropping
caches; its log is kept as dd.log and parsed by parsers/dd.py.

A plug-in of fslab's own (core/plugins.py): the module declares its suite (SUITE), the
kind that parses the record it writes (KIND) and those files' names.
"""

from __future__ import annotations

import json
import math
import mmap
import os
import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from fslab.core.errors import UserError
from fslab.core.metrics import Measurement, cpu_measurements
from fslab.core.units import parse_size
from fslab.host import system
from fslab.parsers.dd import parse_dd
from fslab.parsers.raw_files import Parsed, RawFiles, RawKind, named, read_json, read_text
from fslab.workloads.base import Capabilities, RunOutput, Where, Workload
from fslab.workloads.cpu_use import cpu_use
from fslab.workloads.provenance import Param, campaign, fslab, study
from fslab.workloads.suites import Suite, only_keys, picked

FLUSH_MODES = ("none", "fdatasync", "odirect")
TOOLS = ("python", "dd")
DD_FLUSH = {"none": [], "fdatasync": ["conv=fdatasync"], "odirect": ["oflag=direct"]}
CHUNK = 1024**2  # bytes per write() call
ALIGN = 4096  # O_DIRECT needs block-aligned sizes and buffers
RESULT, DD_LOG = "samples.json", "dd.log"  # the run's record; dd's stderr (tool = "dd")


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


def _parse(files: RawFiles) -> Parsed:
    record = read_json(files, RESULT)
    if record.get("tool") == "dd":
        out = dd_log_samples(read_text(files, DD_LOG))
    else:
        out = []
        for sample in record["samples"]:
            for op, seconds in (("write", sample["write_s"]), ("read", sample["read_s"])):
                out.append(Measurement(op, "seconds", seconds, sample=sample["sample"]))
                out.append(Measurement(op, "bw_bytes", record["size"] / seconds,
                                       sample=sample["sample"]))
    return Parsed("files", out + cpu_measurements(record["cpu_usr"], record["cpu_sys"]),
                  {"study_interval": study_interval(out)})


def dd_log_samples(text: str) -> list[Measurement]:
    """The dd.log ("# write" / "# read" blocks of dd's stderr) -> write and read samples,
    numbered per op."""
    out: list[Measurement] = []
    counts = {"write": 0, "read": 0}
    for block in text.split("# ")[1:]:
        op, _, body = block.partition("\n")
        for measurement in parse_dd(body, op):
            out.append(measurement._replace(sample=counts[op]))
        counts[op] += 1
    return out


STUDY_Z = 1.96  # the USB-stick study's critical value ("Critical Value")


def study_interval(measurements: list[Measurement]) -> dict[str, object]:
    """The study's own 95 % interval of each op's speed over the samples of this run:
    mean ± 1.96 s/√n in MB/s (10^6 bytes/s, dd's unit), s the samples' standard deviation.

    Kept beside fslab's analysis, not in it: the samples of one run share one file system
    and one stretch of time, so they are not independent repetitions; fslab's intervals
    and verdicts rest on the iterations (each a fresh file system) instead.
    """
    out: dict[str, object] = {}
    for op in ("write", "read"):
        speeds = [m.value / 1e6 for m in measurements if m.op == op and m.metric == "bw_bytes"]
        if len(speeds) < 2:
            continue
        mean, sd = statistics.fmean(speeds), statistics.stdev(speeds)
        margin = STUDY_Z * sd / math.sqrt(len(speeds))
        out[op] = {"n": len(speeds), "mean_mb_s": mean, "sd_mb_s": sd,
                   "margin_mb_s": margin, "low_mb_s": mean - margin,
                   "high_mb_s": mean + margin}
    if out:
        out["why"] = ("the study's interval (critical value 1.96, E = z s / sqrt(n) over one "
                      "run's samples); not fslab's: its samples are not independent runs")
    return out


KEYS = frozenset({"small_size", "large_size", "small_count", "large_count", "flush", "tool"})
_USB = "usb-files"


def _build(only: list[str], runtime: int, file_size: int,
           options: dict[str, Any], seed: int, published: bool) -> list[Workload]:
    only_keys(options, KEYS, "files")
    flush = str(options.get("flush", "fdatasync"))
    tool = str(options.get("tool", "python"))
    return picked(only, [
        FilesWorkload("files_small", parse_size(options.get("small_size", "10M")),
                      int(options.get("small_count", 20)), flush, tool),
        FilesWorkload("files_large", parse_size(options.get("large_size", "100M")),
                      int(options.get("large_count", 5)), flush, tool),
    ])


def _job(size: str, count: int, where: str) -> dict[str, Param]:
    return {
        "size": Param(size, study(_USB, f"Setup: '{where}'")),
        "count": Param(count, campaign("the quick scale; the study's 500 and 250 samples "
                                       "with --as-published")),
        "tool": Param("python", fslab(
            "fslab's writer makes the random data before the timer starts, so the time is "
            "the file system's, not /dev/urandom's; tool = \"dd\" runs the study's dd")),
        "flush": Param("fdatasync", fslab(
            "each sample timed to the disk, not to the page cache; the study's dd named no "
            "flush (flush = \"none\")")),
        "read_back": Param("after dropping caches", fslab("a cold read of each sample")),
    }


SUITE = Suite(
    "files",
    "Write a file of random data N times, each sample timed with its end-of-file flush "
    "(none, fdatasync or O_DIRECT), and read each back with caches dropped; tool = "
    "\"dd\" runs the study's own dd instead of fslab's writer.",
    _USB,
    {"files_small": _job("10M", 20, "a small file as 10MB/10MiB"),
     "files_large": _job("100M", 5, "a large file as 105MB/100MiB")},
    {"files_small": 1, "files_large": 1}, _build,
    options="small_size, large_size, small_count, large_count, flush, tool", keys=KEYS)
KIND = RawKind("files", "", named(RESULT), _parse)
