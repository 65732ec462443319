"""A fio job measured in slices: laid out once, then run for short stretches that the
runner interleaves with the same job on the other targets (run/rounds.py).

The disk under loop images drifts from moment to moment; a comparison should not depend
on which target happened to run in a slow minute. Measured on this machine kind: alternating
two images in 0.5 s slices cut the spread of their log ratio for sequential writes from
0.205 to 0.088. Each slice is one fio invocation on the files laid out before the first
(fio-slice-NN.json beside job.fio); its values are samples of the run, whose observation
is their mean (analysis.cells.observations), never more replicates.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Protocol

from fslab.core import stopwatch
from fslab.core.failures import Failure
from fslab.host.children import Finished
from fslab.parsers.raw_names import log_args
from fslab.workloads.base import RunOutput, Where
from fslab.workloads.fio import jobfile
from fslab.workloads.fio.jobfile import FioOptions, seconds
from fslab.workloads.fio.process import JOB_FILE, fio_failure, first_error_line, run_fio

SLICE_OUTPUT = "fio-slice-{index:02d}.json"
SLICE_JOB = "slice.fio"  # a slice that ramps none
RAMP_SLICE_JOB = "slice-ramp.fio"  # a run's first slice, which ramps
SLICE_GRACE_S = 60  # past its slice and this, a fio invocation is considered hung
# fio's default clock (the CPU's TSC) is calibrated at every start: 65 ms of CPU per
# invocation here (fio 3.33; a 1 ms job took 0.29 s, 0.22 s with this), paid by every
# slice. The vDSO clock costs tens of ns per I/O more, nothing beside a 4 KiB direct
# I/O's tens of microseconds. A job that names its own clocksource keeps it.
SLICE_CLOCK = "clocksource=clock_gettime"


class FioJob(Protocol):
    """What slicing reads of a fio workload (workloads/fio/__init__.py's FioWorkload)."""

    name: str
    options: FioOptions
    global_options: FioOptions
    raw_job_text: str | None
    extra_sections: list[tuple[str, FioOptions]]

    @property
    def runtime(self) -> int: ...

    @property
    def direct(self) -> bool: ...

    def required_bytes(self) -> int: ...

    def render(self, where: Where) -> dict[str, str]: ...


# Why a job cannot be measured in slices, from fio's own HOWTO (fio 3.33): each slice is
# a new fio invocation on the files laid out before the first, running the job for its
# share of `runtime`, so a job whose end or whose result is not "this much time of the same
# I/O" is measured whole. Checked on every job section with its [global] options.
FILLS = ("fill_device", "fill_fs")  # "waits for ENOSPC ... as the terminating condition"
DELETES = ("unlink", "unlink_each_loop")  # "Unlink the job files when done"
VERIFIES = ("verify", "verify_only", "do_verify")  # a verify pass reads what it wrote
REPLAYS = ("read_iolog", "replay_redirect")  # "replay the I/O patterns it contains"
COUNTED = ("number_ios", "io_size", "io_limit")  # "exit when ... have been done"
_OFF = ("0", "false", "no", "off", "none", "null", "")


def _set(options: FioOptions, key: str) -> bool:
    """Whether a job sets `key` to something other than off (a bare flag is on)."""
    value = options.get(key)
    return value is not None and (value is True or str(value).strip().lower() not in _OFF)


def job_sections(workload: FioJob) -> list[FioOptions]:
    """Each job section's options as fio reads them (its own over [global])."""
    if workload.raw_job_text is not None:
        return [options for _, options in jobfile.job_sections(workload.raw_job_text)]
    return [{**workload.global_options, **options}
            for options in (workload.options, *(o for _, o in workload.extra_sections))]


def _why_whole(options: FioOptions, time_based_default: str) -> str | None:
    """Why one job section cannot be sliced, or None."""
    if found := [key for key in FILLS if _set(options, key)]:
        return (f"it fills the file system ({found[0]}): it ends when the space is gone, "
                "not after a time")
    if found := [key for key in DELETES if _set(options, key)]:
        return (f"it deletes its own files ({found[0]}): a slice would find none of the "
                "files laid out before the first")
    if found := [key for key in VERIFIES if _set(options, key)]:
        return (f"a verify job ({found[0]}={options[found[0]]}): its verify pass reads "
                "back what its own writes wrote, which slices would cut apart")
    if found := [key for key in REPLAYS if _set(options, key)]:
        return f"it replays an I/O log ({found[0]}): every slice would start the log again"
    if not seconds(options.get("runtime", 0)):
        return "time-less: no runtime, so it ends when its bytes are done, not after a time"
    if str(options.get("time_based", time_based_default)).strip().lower() in _OFF:
        return ("not time_based: it ends when its size is done or at its runtime, "
                "whichever comes first, so a slice is not a share of it")
    if found := [key for key in COUNTED if _set(options, key)]:
        return f"it ends after a count of I/O ({found[0]}), not after a time"
    return None


def whole_because(workload: FioJob) -> str | None:
    """Why the job is measured in one piece (said in the plan and the run record), or
    None when it can be measured in slices: every job section, stonewalled or not, runs
    its share of its own runtime in every slice."""
    # fslab's presets and swept jobs are time-based unless they say otherwise; a user's
    # job file has fio's own default (not time-based)
    default = "0" if workload.raw_job_text is not None else "1"
    for options in job_sections(workload):
        if (why := _why_whole(options, default)) is not None:
            return why
    return None


def section_times(workload: FioJob) -> list[tuple[float, float]]:
    """(runtime, ramp) in seconds of each job section, in order."""
    return [(seconds(options.get("runtime", 0)), seconds(options.get("ramp_time", 0)))
            for options in job_sections(workload)]


def slice_text(text: str, shares: list[tuple[int, int]]) -> str:
    """A resolved job file as one slice: every job section runs `shares[i]` = (ms
    measured, ms of ramp first), whatever runtime and ramp_time it said; fio's clock
    that needs no calibration at every start, unless the job names one."""
    lines = [line for line in text.splitlines() if not _TIMES.match(line)]
    if "[global]" not in [line.strip() for line in lines]:
        lines = ["[global]", *lines]
    out: list[str] = []
    jobs = iter(shares)
    for line in lines:
        out.append(line)
        name = line.strip()
        if name == "[global]":
            if not any(_CLOCK.match(other) for other in lines):
                out.append(SLICE_CLOCK)
        elif name.startswith("[") and name.endswith("]"):
            slice_ms, ramp_ms = next(jobs)
            out += [f"runtime={slice_ms}ms", f"ramp_time={ramp_ms}ms"]
    return "\n".join(out) + "\n"


_TIMES = re.compile(r"^\s*(runtime|ramp_time)\s*=", re.IGNORECASE)
_CLOCK = re.compile(r"^\s*clocksource\s*=", re.IGNORECASE)


def run_slice(workload: FioJob, where: Where, run_dir: Path, index: int,
              shares: list[tuple[int, int]]) -> Finished:
    """One slice, each job section running its share (ms measured, ms of ramp): how its
    fio ended (exit code, stderr, wall seconds, the watchdog's word). Its time is the
    run's steps: the ramp and the measuring fio was asked for, the rest fio's start and
    stop. A campaign's run_timeout bounds a slice too."""
    slice_ms, ramp_ms = sum(s for s, _ in shares), sum(r for _, r in shares)
    job = run_dir / (RAMP_SLICE_JOB if ramp_ms else SLICE_JOB)
    if not job.exists():
        job.write_text(slice_text(workload.render(where)[JOB_FILE], shares))
    output = run_dir / SLICE_OUTPUT.format(index=index)
    timeout, bound = (slice_ms + ramp_ms) / 1000 + SLICE_GRACE_S, ""
    if where.run_timeout and where.run_timeout < timeout:
        timeout, bound = float(where.run_timeout), f"run_timeout = {where.run_timeout} " \
                                                   "in the campaign"
    with stopwatch.step(stopwatch.FIO_START):
        done = run_fio(["fio", "--output-format=json+", f"--output={output}",
                        *log_args(run_dir, index), str(job)],
                       timeout=timeout, cgroup=where.cgroup, bound=bound)
    if done.returncode == 0:
        stopwatch.split(stopwatch.FIO_START, **{stopwatch.RAMP: ramp_ms / 1000,
                                                stopwatch.MEASURE: slice_ms / 1000})
    if done.stderr.strip():
        with (run_dir / "stderr.txt").open("a") as handle:
            handle.write(f"--- slice {index}\n{done.stderr}")
    return done


def slice_failure(done: Finished, run_dir: Path, index: int) -> Failure:
    """The kind of a failed slice (process.fio_failure on its output)."""
    return fio_failure(done, run_dir / SLICE_OUTPUT.format(index=index))


def failure_line(done: Finished, index: int) -> str:
    """Why a slice failed, in one line: the watchdog's word, or fio's first error."""
    said = done.watchdog or first_error_line(done.stderr) or f"exit {done.returncode}"
    return f"fio (slice {index}): {said}"


def finish(metadata: dict[str, object], failure: str | None, reason: str) -> RunOutput:
    """The run's status from its slices' exits (a failed slice fails the run, with its kind
    and reason); what their outputs say is the parse stage's (parsers/fio_kinds.py)."""
    if failure is not None:
        return RunOutput(status="failed", reason=reason, metadata=metadata, failure=failure)
    return RunOutput(metadata=metadata)
