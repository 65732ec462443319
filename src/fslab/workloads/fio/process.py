"""Running fio as fslab's own child: laying out a job's files first, stopping fio with
fslab on Ctrl-C or SIGTERM, and reading the first error line of its stderr."""

from __future__ import annotations

import errno
import os
import re
import time
from pathlib import Path

from fslab.core import stopwatch
from fslab.core.errors import UserError
from fslab.core.failures import Failure
from fslab.core.units import parse_size
from fslab.host import system
from fslab.host.children import Finished, run_child
from fslab.parsers.fio_load import FioParseError, load_fio
from fslab.workloads.fio.jobfile import FioOptions, count_of

JOB_FILE = "job.fio"  # the resolved job file every fio run keeps beside its output
# fio needs time beyond `runtime` to lay out files; past this it is considered hung.
LAYOUT_GRACE_S = 600


LAYOUT_JOB = "layout.fio"
LAYOUT_BLOCK = 1024**2  # fio lays out a file in writes of the job's own block size
_BLOCK_OPTIONS = re.compile(r"^\s*(bs|blocksize|bsrange|blocksize_range|bssplit)\s*=")
_SIZES = re.compile(r"^\s*(size|filesize)\s*=\s*(\S+)\s*$", re.MULTILINE)


def layout_job(text: str) -> str | None:
    """The job file fio's layout pass runs: the same files written in 1 MiB blocks (fio
    writes them in the job's own block size, 4 KiB for random jobs: 2–3 times slower
    here), or None where a size is not whole MiB (the job file itself is used)."""
    for _, value in _SIZES.findall(text):
        try:
            if parse_size(value) % LAYOUT_BLOCK:
                return None
        except UserError:  # a range or a percentage: fio's own layout
            return None
    lines = []
    for line in text.splitlines():
        if _BLOCK_OPTIONS.match(line):
            continue
        lines.append(line)
        if line.strip().startswith("[") and line.strip() != "[global]":
            lines.append(f"bs={LAYOUT_BLOCK}")
    return "\n".join(lines) + "\n"


def layout_pass(job_file: Path, run_dir: Path, cgroup: str) -> dict[str, object]:
    """Lay out the job's files (fio's create_only pass, in 1 MiB writes where the sizes
    allow: layout_job), then sync and drop caches.

    Otherwise fio writes its files inside the measured run and reads back what it just
    wrote, from whatever cache still holds it (the host's, under a loop image), and
    writeback of the layout overlaps the measured writes: on this VM that alone made
    sequential reads swing ±30 % between iterations (0.6 % CV with files laid out first).
    """
    start = time.perf_counter()
    layout = layout_job(job_file.read_text())
    if layout is not None:
        (run_dir / LAYOUT_JOB).write_text(layout)
        job_file = run_dir / LAYOUT_JOB
    with stopwatch.step(stopwatch.LAYOUT):
        done = run_fio(["fio", "--create_only=1", "--output-format=terse",
                        "--output=/dev/null", str(job_file)],
                       timeout=LAYOUT_GRACE_S, cgroup=cgroup, measured=False)
    seconds = time.perf_counter() - start
    dropped = system.sync_and_drop_caches()
    if done.returncode:
        (run_dir / "layout-stderr.txt").write_text(done.stderr)
    return {"seconds": round(seconds, 3), "exit_code": done.returncode,
            "caches_dropped": dropped,
            "why": "files laid out, synced and dropped from the cache before measuring"}


def lay_out_files(directory: Path, name: str, options: FioOptions) -> dict[str, object]:
    """Write each job's file sequentially, with fio's names, before fio opens it.

    For file systems that refuse ftruncate and random writes into a new file (fusefat):
    fio finds its files already at full size and only does the I/O under test.
    """
    merged = options
    size = parse_size(str(merged.get("size", "0")))
    chunk = os.urandom(1024**2)
    names = []
    with stopwatch.step(stopwatch.LAYOUT):
        for job in range(count_of(merged, "numjobs")):
            path = directory / f"{name}.{job}.0"
            with path.open("wb") as handle:
                left = size
                while left > 0:
                    left -= handle.write(chunk[: min(left, len(chunk))])
            names.append(path.name)
    return {"files": names, "bytes_each": size, "why": "sequential layout before fio"}


def run_fio(cmd: list[str], timeout: float, cgroup: str = "",
            bound: str = "", measured: bool = True) -> Finished:
    """Run fio as fslab's child (children.py: its own process group, in the ledger, ended
    at `timeout` s with its jobs); on Ctrl-C or SIGTERM stop it and wait, then re-raise."""
    return run_child(cmd, timeout, cgroup, bound, measured)


def fio_failure(done: Finished, output: Path) -> Failure:
    """The kind of a failed fio run: its deadline, a job that found no space (fio's own
    error number in its output), or fio's failure."""
    if done.watchdog:
        return Failure.TIMEOUT
    try:
        data = load_fio(output.read_bytes())
    except (OSError, FioParseError):
        return Failure.TOOL
    jobs = data.get("jobs") or data.get("client_stats") or []
    found = {job.get("error") for job in jobs if isinstance(job, dict)}
    return Failure.NO_SPACE if found & {errno.ENOSPC, errno.EDQUOT} else Failure.TOOL


def measured_seconds(output: Path) -> float:
    """What fio says it measured (a job's `job_runtime`, its ramp left out): the longest
    clone of each section, the sections added up as if stonewalled; 0 when it says
    nothing readable."""
    try:
        data = load_fio(output.read_bytes())
    except (OSError, FioParseError):
        return 0.0
    longest: dict[str, float] = {}
    for job in data.get("jobs") or data.get("client_stats") or []:
        if isinstance(job, dict) and isinstance(job.get("job_runtime"), int | float):
            name = str(job.get("jobname", ""))
            longest[name] = max(longest.get(name, 0.0), job["job_runtime"] / 1000)
    return sum(longest.values())


def first_error_line(stderr: str) -> str:
    """The line that says why fio failed: fslab's own (the watchdog) first, else fio's."""
    lines = stderr.splitlines()
    for line in lines:
        if line.startswith("fslab: "):
            return line.removeprefix("fslab: ").strip()
    for line in lines:
        if "error" in line.lower() or line.startswith("fio:"):
            return line.strip()
    return ""
