"""Workloads run by fio: a preset job or a user's job file, resolved into one job file."""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from fslab.core import stopwatch
from fslab.core.errors import UserError
from fslab.core.failures import Failure
from fslab.core.units import parse_size
from fslab.host import system
from fslab.parsers.raw_names import FIO_OUTPUT, HOSTS_FILE, log_args
from fslab.workloads.base import Capabilities, RunOutput, Where
from fslab.workloads.fio.distributed import client_args
from fslab.workloads.fio.jobfile import (
    FioOptions,
    check_job_file,
    count_of,
    fio_path,
    flat_options,
    job_text_times,
    seconds,
    section_names,
    set_directory,
)
from fslab.workloads.fio.process import (
    JOB_FILE,
    LAYOUT_GRACE_S,
    fio_failure,
    first_error_line,
    lay_out_files,
    layout_pass,
    measured_seconds,
    run_fio,
)

# Engines that keep more than one I/O in flight per job, so that iodepth matters (fio's
# HOWTO: "iodepth ... Note that increasing iodepth beyond 1 will not affect synchronous
# ioengines"); libaio only with direct=1 ("libaio ... only supports async IO for
# non-buffered IO"). Others (sync, psync, vsync, pvsync, pvsync2, mmap, ...) do one at a time.
ASYNC_ENGINES = frozenset({"libaio", "io_uring", "io_uring_cmd", "posixaio", "solarisaio",
                           "windowsaio", "rdma", "libblkio", "nfs", "rbd", "xnvme", "spdk",
                           "null", "nbd", "gfapi_async", "rados", "sg"})
DEFAULT_ENGINE = "psync"  # fio's default on Linux
# With remote hosts a vanished server must not hang the campaign: a shorter leash.
HOST_GRACE_S = 90
# The watchdog's bound for a timed job: this many times its runtime and ramp, plus a margin
# for fio's start, its exit and writing json+ (seconds on this machine, 2 s at most seen).
WATCHDOG_FACTOR = 1.5
WATCHDOG_MARGIN_S = 30


@dataclass
class FioWorkload(Capabilities):
    """A fio job: global options plus one job section, run as one fio invocation."""

    name: str
    options: FioOptions  # fio options of the job section, in order
    global_options: FioOptions = field(default_factory=dict)
    family: str = "fio"
    runs_on_load_nodes: ClassVar[bool] = True  # fio's client/server mode runs it there
    preset: str = ""
    raw_job_text: str | None = None  # a user's job file, run as written
    extra_sections: list[tuple[str, FioOptions]] = field(default_factory=list)
    section_name: str = ""  # the first section's name (default: the workload's name)

    def check(self) -> None:
        system.require_tool("fio")

    @property
    def primary_metric(self) -> str:
        """IOPS for random I/O, bandwidth for sequential (the first section's rw); a user's
        job file says nothing here, and the analysis infers it from the data."""
        if self.raw_job_text is not None:
            return ""
        merged = {**self.global_options, **self.options}
        pattern = str(merged.get("rw", merged.get("readwrite", "read"))).lower()
        return "iops" if "rand" in pattern else "bw_bytes"

    @property
    def engine(self) -> str:
        """The ioengine the job's first section runs with (fio's default when unset)."""
        merged = {**self.global_options, **self.options}
        return str(merged.get("ioengine", DEFAULT_ENGINE)).split(":")[0].strip().lower()

    def queues(self) -> str:
        """'' when iodepth > 1 keeps several I/Os in flight; else why it cannot."""
        engine = self.engine
        if engine not in ASYNC_ENGINES:
            return f"ioengine={engine} is synchronous (one I/O in flight per job)"
        if engine == "libaio" and not self.direct:
            return "ioengine=libaio queues I/O only with direct=1 (buffered libaio is synchronous)"
        return ""

    @property
    def runtime(self) -> int:
        value = self.global_options.get("runtime", self.options.get("runtime", 0))
        return int(str(value).rstrip("s") or 0)

    def expected_seconds(self) -> float | None:
        """How long fio runs this job at most (runtime and ramp of every section, as if
        each were stonewalled); None when a section has no runtime (a size-based job)."""
        times = self.expected_times()
        return sum(times) if times is not None else None

    def expected_times(self) -> tuple[float, float] | None:
        """(runtime, ramp) of expected_seconds, apart."""
        if self.raw_job_text is not None:
            return job_text_times(self.raw_job_text)
        runtime = ramp = 0.0
        sections = [self.options, *(options for _, options in self.extra_sections)]
        for options in sections:
            merged = {**self.global_options, **options}
            if not merged.get("runtime"):
                return None
            runtime += seconds(merged["runtime"])
            ramp += seconds(merged.get("ramp_time", 0))
        return runtime, ramp

    def deadline(self, run_timeout: int = 0) -> tuple[float, str]:
        """(seconds, why) the watchdog gives this job's measured fio run (the layout pass,
        before it, has its own)."""
        if run_timeout:
            return float(run_timeout), f"run_timeout = {run_timeout} in the campaign"
        expected = self.expected_seconds()
        if expected is None:
            return float(LAYOUT_GRACE_S), ("a job without runtime: fslab's default bound; "
                                           "a campaign's run_timeout sets another")
        return (WATCHDOG_FACTOR * expected + WATCHDOG_MARGIN_S,
                f"its runtime and ramp, {expected:g} s, with a margin; a campaign's "
                "run_timeout sets another")

    @property
    def direct(self) -> bool:
        """Whether the job does O_DIRECT I/O (direct=1, or the buffered=0 spelling)."""
        merged = {**self.global_options, **self.options}
        for section in self.extra_sections:
            merged.update(section[1])
        if "direct" in merged:
            return str(merged["direct"]).strip().lower() in ("1", "true")
        return str(merged.get("buffered", "1")).strip().lower() in ("0", "false")

    def required_bytes(self) -> int:
        """numjobs × nrfiles × size, when those are known."""
        merged = {**self.global_options, **self.options}
        size = merged.get("size")
        if merged.get("nrfiles") and merged.get("filesize"):
            size = parse_size(str(merged["filesize"])) * count_of(merged, "nrfiles")
        if size is None:
            return 0
        try:
            per_job = parse_size(str(size))
        except UserError:
            return 0
        return per_job * count_of(merged, "numjobs")

    def render(self, where: Where) -> dict[str, str]:
        if self.raw_job_text is not None:
            return {JOB_FILE: set_directory(self.raw_job_text, where.directory or Path("."))}
        origin = f" (preset {self.preset})" if self.preset else ""
        lines = [f"; fslab workload {self.name}{origin}", "[global]"]
        lines += _option_lines({**self.global_options, **_location(where, self.global_options)})
        sections = [(self.section_name or self.name, self.options), *self.extra_sections]
        for index, (section, options) in enumerate(sections):
            lines.append(f"[{section}]")
            options = _in_workdir(options, where)
            if where.hosts and index == len(sections) - 1:
                options = {**options, "unlink": 1}  # remote files go once all phases ran
            lines += _option_lines(options)
        return {JOB_FILE: "\n".join(lines) + "\n"}

    def run(self, where: Where, run_dir: Path) -> RunOutput:
        """Run fio once; its output is the parse stage's (parsers/fio_kinds.py: a job fio
        reports as failed, or a host that gave no result, fails the run there)."""
        try:  # the runner synced and dropped caches just before (drops_caches)
            with stopwatch.step(stopwatch.HARNESS):
                metadata = prepare(self, where, run_dir, drop=False).metadata
        except RunRefused as exc:
            return RunOutput(status="unsupported", reason=str(exc),
                             failure=Failure.UNSUPPORTED)
        job_file, output = run_dir / JOB_FILE, run_dir / FIO_OUTPUT
        cmd = ["fio", "--output-format=json+", f"--output={output}"]
        if where.hosts:
            cmd += client_args(list(where.hosts), job_file)
            (run_dir / HOSTS_FILE).write_text(json.dumps([str(h) for h in where.hosts]))
            timeout, bound = float(self.runtime + HOST_GRACE_S), "runtime and the hosts' grace"
        else:
            cmd += [*log_args(run_dir), str(job_file)]
            timeout, bound = self.deadline(where.run_timeout)
        metadata["command"] = cmd
        with stopwatch.step(stopwatch.FIO_START):
            done = run_fio(cmd, timeout=timeout, cgroup=where.cgroup, bound=bound)
        (run_dir / "stderr.txt").write_text(done.stderr)
        if done.returncode != 0:
            said = first_error_line(done.stderr) or "no message"
            reason = f"fio exited {done.returncode}: {said}"
            if where.hosts:
                reason = f"no result from hosts {', '.join(map(str, where.hosts))}: {reason}"
            return _failure(reason, said, where, metadata, fio_failure(done, output))
        runtime, ramp = self.expected_times() or (measured_seconds(output), 0.0)
        stopwatch.split(stopwatch.FIO_START, **{stopwatch.RAMP: ramp,
                                                stopwatch.MEASURE: runtime})
        return RunOutput(metadata=metadata)


LAID_OUT = ".fslab-laid-out"  # beside a kept place's files: the job that laid them out
PLACE_OPTIONS = frozenset({"filename", "directory", "offset_increment"})  # where, not what


class RunRefused(Exception):
    """A job that cannot run at this place (its reason is the run's, status unsupported)."""


def prepare(workload: FioWorkload, where: Where, run_dir: Path,
            drop: bool = True) -> RunOutput:
    """The one preparation of a fio run, whole or in slices: the job file written, its
    files laid out (FUSE targets that need it sequentially first; fio's own layout pass
    with caches dropped, on this machine), and what the run's record says of its I/O (the
    output's metadata, before the run).
    `drop`: files kept from an earlier run are synced and dropped from the cache here
    (False where the runner has just done it: a whole run)."""
    if where.device and workload.raw_job_text is not None:
        raise RunRefused("a user job file runs inside a directory; a raw device target "
                         "takes presets")
    job_file = run_dir / JOB_FILE
    job_file.write_text(workload.render(where)[JOB_FILE])
    metadata: dict[str, object] = {"fio_version": system.tool_version("fio"),
                                "io": {"direct": workload.direct,
                                       "file_set_bytes": workload.required_bytes()},
                                # the job's own options as it ran (the report's captions)
                                "job_options": {k: v for k, v in {**workload.global_options,
                                                                  **workload.options}.items()
                                                if k not in PLACE_OPTIONS}}
    if where.layout_first and where.directory and workload.raw_job_text is None:
        metadata["layout"] = lay_out_files(where.directory, workload.name,
                                           {**workload.global_options, **workload.options})
    if where.cgroup:
        metadata["cgroup"] = where.cgroup
    if where.directory is not None and not where.hosts:
        marker = where.directory / LAID_OUT
        job = job_file.read_text()
        if where.keep_files and marker.exists() and marker.read_text() == job:
            dropped = system.sync_and_drop_caches() if drop else False
            metadata["layout_pass"] = {"reused": True, "caches_dropped": dropped, "why": (
                "files laid out by an earlier run of the same job kept (nothing on this "
                "target is made fresh), synced and dropped from the cache"
                + ("" if drop else " by the runner just before"))}
        else:
            metadata["layout_pass"] = layout_pass(job_file, run_dir, where.cgroup)
            if where.keep_files:
                marker.write_text(job)
    return RunOutput(metadata=metadata)


@functools.cache
def is_fio_option(name: str) -> bool:
    """Whether fio knows the option (`fio --cmdhelp=NAME`; without fio, any name that
    could be one)."""
    if not re.fullmatch(r"[a-z_][a-z0-9_]*", name):
        return False
    if system.which("fio") is None:
        return True
    out = system.run(["fio", f"--cmdhelp={name}"], check=False)
    return "No such command" not in out.stdout + out.stderr


def _option_lines(options: FioOptions) -> list[str]:
    lines = []
    for key, value in options.items():
        if value is True:
            lines.append(key)
        elif value is None:
            continue
        elif value is False:
            lines.append(f"{key}=0")
        else:
            lines.append(f"{key}={value}")
    return lines


def _location(where: Where, global_options: FioOptions) -> FioOptions:
    """directory= for a file system; filename= and per-job regions for a raw device."""
    if where.hosts and where.directory is not None:
        # Remote load nodes: fslab's work directory exists on the controller only, so the
        # files go straight into the target path under an fslab prefix, and the last job
        # unlinks them; unique_filename (fio's default) keeps hosts apart on shared storage.
        return {"directory": fio_path(where.root or where.directory.parent),
                "filename_format": f"{_host_prefix(where)}.$jobname.$jobnum.$filenum"}
    if not where.device:
        return {"directory": fio_path(str(where.directory))}
    # Jobs get disjoint regions of the device, as they get separate files on a file system.
    return {"filename": fio_path(where.device),
            "offset_increment": global_options.get("size")}


def _in_workdir(options: FioOptions, where: Where) -> FioOptions:
    """With hosts, a job's own filename_format goes inside the per-run work directory."""
    if where.hosts and where.directory is not None and "filename_format" in options:
        return {**options,
                "filename_format": f"{_host_prefix(where)}.{options['filename_format']}"}
    return options


def _host_prefix(where: Where) -> str:
    """'.fslab-<session>-<workload>': fslab's files in a target path shared with others."""
    assert where.directory is not None
    return f"{where.directory.parent.name}-{where.directory.name}"


def _failure(reason: str, said: str, where: Where, metadata: dict[str, object],
             failure: Failure) -> RunOutput:
    """A failed run; on a target with a known limitation that refused it, 'unsupported'.
    fio's own error line (`said`) tells the refusal (fusefat's EPERM): a setup that fails
    leaves no JSON with the job's error number to read instead."""
    refused = any(text in said for text in ("Operation not permitted", "not supported",
                                             "Invalid argument"))
    if where.quirk and refused and failure == Failure.TOOL:
        return RunOutput(status="unsupported", reason=f"{reason} ({where.quirk})",
                         metadata=metadata, failure=Failure.UNSUPPORTED)
    return RunOutput(status="failed", reason=reason, metadata=metadata, failure=failure)


def job_file_workload(name: str, path: Path) -> FioWorkload:
    """Load a user's fio job file as a workload, run as written inside the target."""
    try:
        text = path.read_text()
    except OSError as exc:
        raise UserError(f"cannot read job file {path}: {exc.strerror}") from exc
    return job_text_workload(name, text, str(path))


def job_text_workload(name: str, text: str, source: str) -> FioWorkload:
    """A fio job file's text (`source` names it in errors) as a workload."""
    check_job_file(text, source)
    if not [s for s in section_names(text) if s.strip() != "global"]:
        raise UserError(f"job file {source} defines no job section")
    return FioWorkload(name=name, options=flat_options(text), family="fio-jobfile",
                       raw_job_text=text)
