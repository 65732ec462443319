"""The metrics table: one row per measured value, in SI base units, with its direction.

Every analysis is a group-by over this long ("tidy") table. The `better` column travels
with each value so that no ranking or verdict ever has to guess which way is good.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

COLUMNS = (
    "campaign", "run_id", "target", "fs", "fs_impl", "workload", "iteration", "host",
    "op", "metric", "value", "unit", "better", "sample", "note", "target_base", "job",
)
# A row's cell as fields (core/cell_keys.py): the target as declared ("ext4") and the job
# ("randread", "hpc/hpc-read"); `target` and `workload` are their names with the cell's
# levels ("ext4 mount_options=noatime"), whose own columns follow COLUMNS.

HIGHER = "higher"
LOWER = "lower"
# A CI half-width above this share of the mean means the cell is not pinned down (its
# summary row is `noisy`): too few iterations for this machine's noise (loop devices
# swing 2-4x, PLATFORM.md).
NOISY_HALF_WIDTH = 0.10

# metric -> (unit, better). Units: bytes, bytes/s, ns, 1/s, % (of one CPU core), 1 (a count).
METRIC_UNITS: dict[str, tuple[str, str]] = {
    "ios": ("1", HIGHER),
    "clat_min_ns": ("ns", LOWER),
    "cpu_total": ("%", LOWER),  # the workload's own CPU (fio: usr + sys over its jobs)
    "cpu_ns_per_io": ("ns", LOWER),  # the workload's CPU time per completed I/O
    "host_cpu_pct": ("%", LOWER),  # system-wide CPU during the run (kernel threads too)
    "host_cpu_ns_per_io": ("ns", LOWER),
    "layout_score": ("1", HIGHER),  # share of blocks read right after the one before
    "iops": ("1/s", HIGHER),
    "bw_bytes": ("bytes/s", HIGHER),
    "io_bytes": ("bytes", HIGHER),
    "clat_mean_ns": ("ns", LOWER),
    "lat_mean_ns": ("ns", LOWER),
    "slat_mean_ns": ("ns", LOWER),
    "clat_max_ns": ("ns", LOWER),
    "clat_stddev_ns": ("ns", LOWER),  # over every I/O of the observation (pooled)
    "cpu_usr": ("%", LOWER),
    "cpu_sys": ("%", LOWER),
    "ops_per_s": ("1/s", HIGHER),
    "ops_per_s_before_sync": ("1/s", HIGHER),  # smallfiles: a phase's rate before its sync
    "seconds": ("s", LOWER),
    "sync_seconds": ("s", LOWER),
    "cpu_pct": ("%", LOWER),
    "lat_max_ns": ("ns", LOWER),
    "lat_min_ns": ("ns", LOWER),
    "lat_stddev_ns": ("ns", LOWER),
    "slat_max_ns": ("ns", LOWER),
    "slat_min_ns": ("ns", LOWER),
    "slat_stddev_ns": ("ns", LOWER),
    "errors": ("1", LOWER),  # I/Os that failed in a job run with continue_on_error
    # fio's statistics over its bandwidth and IOPS samples (one every bw_avg_time)
    "bw_min_bytes": ("bytes/s", HIGHER),
    "bw_max_bytes": ("bytes/s", HIGHER),
    "bw_stddev_bytes": ("bytes/s", LOWER),
    "iops_min": ("1/s", HIGHER),
    "iops_max": ("1/s", HIGHER),
    "iops_stddev": ("1/s", LOWER),
    # An aging run (fslab age): each file-system operation's latency (its syscalls, from
    # the op log), and the state of the file system as its probes saw it.
    "op_lat_mean_ns": ("ns", LOWER),
    "op_lat_p50_ns": ("ns", LOWER),
    "file_layout_score": ("1", HIGHER),  # share of a file's blocks right after the one before
    "whole_files_share": ("1", HIGHER),  # share of files in one piece (FIEMAP)
    "extents_per_file": ("1", LOWER),  # FIEMAP records per file: more = more fragmented
    "free_extents": ("1", LOWER),  # free space in more pieces = more fragmented
    "largest_free_bytes": ("bytes", HIGHER),
    "used_share": ("1", LOWER),  # of the file system's capacity
}

# What a sample of a run is, where it is not one of several values the run's value is the
# mean of (files, slices): the `note` of its rows.
SECTION = "section"  # one stretch of a long run in time order: each is an observation
PROBE = "probe"  # the state after `sample` operations: the run's value is the last one

# Metrics that are an extreme: a run measured in several samples (slices, files) takes the
# extreme over them, not their mean.
EXTREMES = {metric: ("max" if "_max" in metric else "min") for metric in METRIC_UNITS
            if "_max" in metric or "_min" in metric}

# Every completion-latency percentile fio reports by default (its percentile_list), kept
# as clat_p<p>_ns (99.5 -> clat_p99_5_ns); the summary tables show p99 only.
FIO_PERCENTILES = (1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0,
                   99.0, 99.5, 99.9, 99.95, 99.99)


def percentile_metric(percent: float) -> str:
    """'clat_p99_9_ns' for 99.9: the metric name of one completion-latency percentile."""
    return f"clat_p{f'{percent:g}'.replace('.', '_')}_ns"


METRIC_UNITS.update({percentile_metric(p): ("ns", LOWER) for p in FIO_PERCENTILES})

# The metrics the summary tables show when a workload has them, in display order.
HEADLINE_METRICS = ("iops", "bw_bytes", "ops_per_s", "ops_per_s_before_sync", "seconds",
                    "clat_mean_ns", "clat_p99_ns", "lat_max_ns", "op_lat_p50_ns",
                    "op_lat_mean_ns", "sync_seconds", "layout_score", "file_layout_score",
                    "whole_files_share", "free_extents",
                    "cpu_total", "host_cpu_pct", "cpu_ns_per_io", "host_cpu_ns_per_io")



def headline_metrics(present: set[str]) -> list[str]:
    """The headline metrics among `present`, in display order. A workload with a p99
    completion latency (fio) shows its tail that way: its maximum stays in the tables."""
    shown = [m for m in HEADLINE_METRICS if m in present]
    return [m for m in shown if not (m == "lat_max_ns" and "clat_p99_ns" in present)]


def headline_of_each(pairs: Iterable[tuple[str, str]]) -> set[tuple[str, str]]:
    """The (workload, metric) pairs among `pairs` that are headline metrics of their own
    workload: decided per workload, so that bonnie++'s maximum latency (its only latency)
    stays in the headline beside a fio job whose p99 replaces its maximum."""
    present: dict[str, set[str]] = {}
    for workload, metric in pairs:
        present.setdefault(workload, set()).add(metric)
    return {(workload, metric) for workload, metrics in present.items()
            for metric in headline_metrics(metrics)}


# One table of display names (terminal, HTML, verdicts): (short, long).
METRIC_TITLES: dict[str, tuple[str, str]] = {
    "iops": ("IOPS", "IOPS"),
    "bw_bytes": ("bandwidth", "bandwidth"),
    "ops_per_s": ("ops/s", "operations/s"),
    "ops_per_s_before_sync": ("ops/s before sync", "operations/s before the sync"),
    "seconds": ("time", "time"),
    "clat_mean_ns": ("mean clat", "mean completion latency"),
    "clat_p99_ns": ("p99 clat", "p99 completion latency"),
    "lat_max_ns": ("max latency", "max latency"),
    "sync_seconds": ("sync after", "sync after phase"),
    "cpu_total": ("CPU", "CPU use of the workload (% of one core)"),
    "host_cpu_pct": ("host CPU", "system-wide CPU (% of one core)"),
    "cpu_ns_per_io": ("CPU/IO", "workload CPU per I/O"),
    "host_cpu_ns_per_io": ("host CPU/IO", "system-wide CPU per I/O"),
    "layout_score": ("layout", "dynamic layout score"),
    "file_layout_score": ("file layout", "layout score of the files (FIEMAP)"),
    "op_lat_p50_ns": ("median latency", "median latency of the operation"),
    "op_lat_mean_ns": ("mean latency", "mean latency of the operation"),
    "whole_files_share": ("whole files", "share of files in one piece"),
    "extents_per_file": ("extents/file", "extents per file (FIEMAP)"),
    "free_extents": ("free extents", "free extents (more = free space more fragmented)"),
    "largest_free_bytes": ("largest free", "largest free extent"),
    "used_share": ("used", "share of the capacity in use"),
}


# Other names people type for a metric (fio's words for its latency figures): each
# accepted wherever a metric is named (--subject-to, --objective, --primary), the metric's
# own name printed back.
METRIC_ALIASES: dict[str, str] = {
    "p50_clat": "clat_p50_ns", "p90_clat": "clat_p90_ns", "p95_clat": "clat_p95_ns",
    "p99_clat": "clat_p99_ns", "p99.9_clat": "clat_p99_9_ns", "mean_clat": "clat_mean_ns",
    "mean_lat": "lat_mean_ns"}


def metric_named(name: str) -> str | None:
    """The metric a person means by `name`: its own name (clat_p99_ns), its name as the
    tables print it ('p99 clat', 'p99 completion latency', 'IOPS'), or an alias
    (p99_clat); None when it names none."""
    if name in METRIC_UNITS:
        return name
    if name in METRIC_ALIASES:
        return METRIC_ALIASES[name]
    wanted = " ".join(name.replace("_", " ").lower().split())
    for metric, names in METRIC_TITLES.items():
        if wanted in (names[0].lower(), names[1].lower()):
            return metric
    return None


def title(metric: str, long: bool = False) -> str:
    """A metric's display name (its column name when it has none)."""
    names = METRIC_TITLES.get(metric)
    return names[int(long)] if names else metric


class RowIdentity(NamedTuple):
    """The columns every metrics row of one run shares (core.record.RunRecord.identity):
    where it came from, then its level of each factor of a sweep (a column each)."""

    campaign: str
    run_id: str
    target: str
    fs: str
    fs_impl: str
    workload: str
    iteration: int
    target_base: str
    job: str
    levels: dict[str, str] = {}  # noqa: RUF012  (read, never changed: a NamedTuple's default)


# RowIdentity's fields that are columns as they are (workload and job name the observation).
ROW_IDENTITY = ("campaign", "run_id", "target", "fs", "fs_impl", "iteration", "target_base")


class Measurement(NamedTuple):
    """One value a workload measured, before the run's identity is attached.

    A named tuple, not a dataclass: an import of 10,000 fio files makes ~150,000 of them,
    and a tuple is built several times faster.
    """

    op: str
    metric: str
    value: float
    host: str = ""
    sample: int = 0  # several samples in one run (files): the run's mean is the observation
    note: str = ""  # why a value is missing (NaN), e.g. bonnie++'s "+++++"; or what the
    # sample is when it is not that (SECTION, PROBE)
    section: str = ""  # the observation within the run (a fio section); "" = the run's only

    @property
    def unit(self) -> str:
        return METRIC_UNITS[self.metric][0]

    @property
    def better(self) -> str:
        return METRIC_UNITS[self.metric][1]


def cpu_measurements(usr: float, sys: float, cpu_seconds: float | None = None, ios: int = 0,
                     host: str = "", section: str = "") -> list[Measurement]:
    """A workload's own CPU use (% of one core, user and system) and, when its CPU time
    and completed I/Os are known, its CPU time per I/O."""
    out = [Measurement("total", "cpu_usr", usr, host, section=section),
           Measurement("total", "cpu_sys", sys, host, section=section),
           Measurement("total", "cpu_total", usr + sys, host, section=section)]
    if ios:
        out.append(Measurement("total", "ios", float(ios), host, section=section))
        if cpu_seconds is not None:
            out.append(Measurement("total", "cpu_ns_per_io", cpu_seconds * 1e9 / ios, host,
                                   section=section))
    return out


def observation_workload(workload: str, section: str) -> str:
    """The workload name of one observation of a run: `<workload>/<section>`, or the
    workload alone when the run has one observation or the section is named after it."""
    return workload if not section or section == workload else f"{workload}/{section}"


def add_rows(columns: dict[str, list[object]], identity: RowIdentity,
             measurements: list[Measurement], host: str = "") -> None:
    """Append measurements as metrics rows (one list per column of COLUMNS).

    The one place rows are built: a run and an import both come here. `identity` gives
    campaign, run_id, target, fs, fs_impl, workload and iteration, and a swept cell's
    level of each factor (a column of its own: rows without it hold None); `host` stands
    in for a measurement without its own.
    """
    if not measurements:
        return
    count = len(measurements)
    before = len(columns["op"])
    shared = {**{name: getattr(identity, name) for name in ROW_IDENTITY}, **identity.levels}
    for name, value in shared.items():
        if name not in columns:  # a factor the rows before did not have
            columns[name] = [None] * before
        columns[name] += [value] * count
    for name in factor_columns(columns):
        if name not in shared:
            columns[name] += [None] * count
    workload, job = identity.workload, identity.job or identity.workload
    ops, metrics, values, hosts, samples, notes, sections = zip(*measurements, strict=True)
    columns["workload"] += [observation_workload(workload, s) for s in sections]
    columns["job"] += [observation_workload(job, s) for s in sections]
    columns["host"] += [h or host for h in hosts]
    columns["op"] += ops
    columns["metric"] += metrics
    columns["value"] += values
    columns["unit"] += [METRIC_UNITS[m][0] for m in metrics]
    columns["better"] += [METRIC_UNITS[m][1] for m in metrics]
    columns["sample"] += samples
    columns["note"] += notes


def factor_columns(columns: Iterable[str]) -> list[str]:
    """The columns beyond COLUMNS: a sweep's factors (plan/sweep.py), in order."""
    return [name for name in columns if name not in _COLUMN_SET]


_COLUMN_SET = frozenset(COLUMNS)


def rows(columns: dict[str, list[object]]) -> list[dict[str, object]]:
    """Column lists as row dicts (run.json keeps rows)."""
    names = [*COLUMNS, *factor_columns(columns)]
    return [dict(zip(names, values, strict=True))
            for values in zip(*(columns[name] for name in names), strict=True)]


def empty_columns() -> dict[str, list[object]]:
    return {name: [] for name in COLUMNS}


# The table as Arrow (metrics.parquet) and pandas: pyarrow is imported where used, so
# that importing this module stays cheap.


def metrics_schema(factors: Iterable[str] = ()) -> pa.Schema:
    """The Arrow schema of metrics.parquet, column by column as in metrics.COLUMNS, then
    a sweep's factors (text: a level as it names its cell)."""
    import pyarrow as pa

    types = {"iteration": pa.int64(), "value": pa.float64(), "sample": pa.int64()}
    return pa.schema([(name, types.get(name, pa.string()))
                      for name in (*COLUMNS, *factors)])


def metrics_table(columns: dict[str, list[Any]], categorical: bool = False) -> pa.Table:
    """An Arrow table of metrics rows from one list per column (an import's ~10^5 rows
    are built column by column: far cheaper than a dict per row). `categorical`: text
    columns dictionary-encoded as they are built (an import's workers do it, so the
    analysis gets its categoricals without a pass over every row; metrics.parquet is
    written as plain text columns either way)."""
    import pyarrow as pa

    fields = [pa.field(f.name, pa.dictionary(pa.int32(), pa.string()))
              if categorical and f.type == pa.string() else f
              for f in metrics_schema(factor_columns(columns))]
    return pa.table([pa.array(columns[field.name], field.type) for field in fields],
                    schema=pa.schema(fields))


def metrics_frame(table: pa.Table, categorical: bool = False) -> pd.DataFrame:
    """An Arrow table of metrics rows as the pandas DataFrame every analysis reads;
    `categorical`: text columns as categoricals (as ResultsDir.load_metrics gives them)."""
    if categorical:
        for index, name in enumerate(table.column_names):
            column = table.column(index)
            if column.type == "string":
                table = table.set_column(index, name, column.dictionary_encode())
    return table.to_pandas()
