"""The files fio's runs and the runner leave in a run's directory, by name: what the fio
workload writes and the parse kinds read. Names only, so that a workload (and the plan
that builds it) can name its files without loading the parse stage and its libraries.
fslab's other workloads declare their files' names in their own modules, beside the
kind that reads them (core/plugins.py)."""

from __future__ import annotations

from pathlib import Path

# fio
FIO_OUTPUT = "fio.json"
HOSTS_FILE = "hosts.json"  # the fio servers a run drove (`hosts`), as host:port
LOG_AVG_MS = 100  # fio's per-interval logs average over this
LOG_STEM = "fio-log"  # a whole run's logs; a slice's: fio-slice-NN-log

HOST_CPU = "host_cpu.json"  # the machine's CPU over the run, beside any workload's output


def log_args(run_dir: Path, slice_index: int | None = None) -> list[str]:
    """fio command-line options that keep its per-interval logs in the run's directory."""
    stem = LOG_STEM if slice_index is None else f"fio-slice-{slice_index:02d}-log"
    prefix = str(run_dir / stem)
    return [f"--write_bw_log={prefix}", f"--write_iops_log={prefix}",
            f"--write_lat_log={prefix}", f"--log_avg_msec={LOG_AVG_MS}"]
