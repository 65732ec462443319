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

from pathlib import Path
from typing import Protocol

from fslab.core import stopwatch
from fslab.core.failures import Failure
from fslab.host.children import Finished
from fslab.parsers.raw_names import log_args
from fslab.workloads.base import RunOutput, Where
from fslab.workloads.fio.jobfile import FioOptions
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


def whole_because(workload: FioJob) -> str | None:
    """Why the job is measured in one piece (said in the run record), or None when it can
    be measured in slices."""
    merged = {**workload.global_options, **workload.options}
    if workload.raw_job_text is not None:
        return "a user's job file runs as written"
    if workload.extra_sections:
        return "sections run one after the other (stonewall)"
    if not workload.runtime or str(merged.get("time_based", "1")) in ("0", "False", "false"):
        return "size-based: it ends when its bytes are done, not after a time"
    return None


def slice_job(workload: FioJob, where: Where, slice_ms: int, ramp_ms: int) -> str:
    """The job file of one slice: the same job, `slice_ms` long after `ramp_ms`."""
    text = workload.render(where)[JOB_FILE]
    lines = [line for line in text.splitlines()
             if not line.startswith(("runtime=", "ramp_time="))]
    at = lines.index("[global]") + 1
    clock = [] if any(line.startswith("clocksource=") for line in lines) else [SLICE_CLOCK]
    return "\n".join([*lines[:at], f"runtime={slice_ms}ms", f"ramp_time={ramp_ms}ms",
                      *clock, *lines[at:]]) + "\n"


def run_slice(workload: FioJob, where: Where, run_dir: Path, index: int,
              slice_ms: int, ramp_ms: int) -> Finished:
    """One slice: how its fio ended (exit code, stderr, wall seconds, the watchdog's word).
    Its time is the run's steps: the ramp and the measuring fio was asked for, the rest
    fio's start and stop."""
    job = run_dir / (RAMP_SLICE_JOB if ramp_ms else SLICE_JOB)
    if not job.exists():
        job.write_text(slice_job(workload, where, slice_ms, ramp_ms))
    output = run_dir / SLICE_OUTPUT.format(index=index)
    with stopwatch.step(stopwatch.FIO_START):
        done = run_fio(["fio", "--output-format=json+", f"--output={output}",
                        *log_args(run_dir, index), str(job)],
                       timeout=(slice_ms + ramp_ms) / 1000 + SLICE_GRACE_S,
                       cgroup=where.cgroup)
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


def failure_line(stderr: str, index: int, code: int) -> str:
    """Why a slice failed, in one line."""
    return f"fio (slice {index}): {first_error_line(stderr) or f'exit {code}'}"


def finish(metadata: dict[str, object], failure: str | None, reason: str) -> RunOutput:
    """The run's status from its slices' exits (a failed slice fails the run, with its kind
    and reason); what their outputs say is the parse stage's (parsers/fio_kinds.py)."""
    if failure is not None:
        return RunOutput(status="failed", reason=reason, metadata=metadata, failure=failure)
    return RunOutput(metadata=metadata)
