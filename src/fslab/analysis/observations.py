"""The observations every statistic is computed on: one value per run and metric.

A run over several hosts is observed through its aggregate ("All clients"); the
per-host rows are a diagnostic of spread between hosts. Several samples of one run
(e.g. one per file) are not independent repetitions: they are averaged into the run's
value. `per_run` is computed once per analysis and shared by the summary, the tests,
the drivers and the aged-vs-fresh comparison.
"""

from __future__ import annotations

import pandas as pd

from fslab.metrics import EXTREMES
from fslab.parsers.fio import ALL_CLIENTS

RUN_KEYS = ["target", "fs", "fs_impl", "workload", "op", "metric", "unit", "better",
            "iteration", "run_id"]

# What this step does, in one statement the report prints (stats/methods.csv).
METHOD = ('Observation: one fio section of one run. The clones of a section (numjobs) are '
          'summed (IOPS, bandwidth); latency means are weighted by completed I/Os; percentiles '
          'come from merged json+ bins. Different sections of one job file are different '
          'observations, never added up; jobs fio grouped (group_reporting) stay one. Samples '
          "within a run (slices of a round, files) are averaged into the run's value (a maximum "
          "or minimum is the extreme over them); a "
          "distributed run is observed through its aggregate. CPU: the workload's own (fio's "
          "usr + sys, as % of one core, summed over a section's jobs), system-wide CPU from "
          '/proc/stat during the run (kernel threads and daemons included), and each per '
          'completed I/O.')


def observations(metrics: pd.DataFrame) -> pd.DataFrame:
    """The rows that are observations: for a run over several hosts, only the aggregate."""
    if "host" not in metrics or not (metrics["host"] == ALL_CLIENTS).any():
        return metrics
    with_aggregate = set(metrics.loc[metrics["host"] == ALL_CLIENTS, "run_id"])
    keep = ~metrics["run_id"].isin(with_aggregate) | (metrics["host"] == ALL_CLIENTS)
    return metrics[keep]


def per_run(metrics: pd.DataFrame) -> pd.DataFrame:
    """One row per run and metric (RUN_KEYS + value), samples within a run averaged; an
    extreme (a maximum or minimum: metrics.EXTREMES) is the extreme over the samples."""
    rows = observations(metrics)
    if rows.empty:
        return pd.DataFrame(columns=[*RUN_KEYS, "value"])
    if not rows.duplicated(["run_id", "op", "metric"]).any():  # one value each: no means
        return rows[[*RUN_KEYS, "value"]].reset_index(drop=True)
    grouped = rows.groupby(RUN_KEYS, sort=False, dropna=False)["value"]
    out = grouped.mean().reset_index()
    extreme = out["metric"].map(EXTREMES)
    if extreme.notna().any():
        out["value"] = out["value"].where(extreme != "max", grouped.max().to_numpy())
        out["value"] = out["value"].where(extreme != "min", grouped.min().to_numpy())
    return out
