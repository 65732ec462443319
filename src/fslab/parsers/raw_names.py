"""The files each run leaves in its directory, by name: what the workloads write and the
parse kinds read. Names only, so that a workload (and the plan that builds it) can name
its files without loading the parse stage and its libraries."""

from __future__ import annotations

from pathlib import Path

# fio
FIO_OUTPUT = "fio.json"
HOSTS_FILE = "hosts.json"  # the fio servers a run drove (`hosts`), as host:port
LOG_AVG_MS = 100  # fio's per-interval logs average over this
LOG_STEM = "fio-log"  # a whole run's logs; a slice's: fio-slice-NN-log

# fslab's other workloads: bonnie++'s output, and the records each workload writes
BONNIE_OUTPUT, BONNIE_CPU = "bonnie.csv", "cpu.json"
FILES_RECORD, DD_LOG = "samples.json", "dd.log"
SMALLFILES_RECORD = "phases.json"
SCAN_RECORD = "scan.json"
AGEDFILES_RECORD = "agedfiles.json"
NULL_RECORD = "null.json"
HOST_CPU = "host_cpu.json"  # the machine's CPU over the run, beside any workload's output


def log_args(run_dir: Path, slice_index: int | None = None) -> list[str]:
    """fio command-line options that keep its per-interval logs in the run's directory."""
    stem = LOG_STEM if slice_index is None else f"fio-slice-{slice_index:02d}-log"
    prefix = str(run_dir / stem)
    return [f"--write_bw_log={prefix}", f"--write_iops_log={prefix}",
            f"--write_lat_log={prefix}", f"--log_avg_msec={LOG_AVG_MS}"]
