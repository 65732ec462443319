"""The observations every statistic is computed on: one value per run and metric.

A run over several hosts is observed through its aggregate ("All clients"); the
per-host rows are a diagnostic of spread between hosts. Several samples of one run
(e.g. one per file) are not independent repetitions: they are averaged into the run's
value. `per_run` is computed once per analysis and shared by the summary, the tests,
the drivers and the aged-vs-fresh comparison.
"""

from __future__ import annotations

import pandas as pd

from fslab.analysis.step import Step
from fslab.core.metrics import EXTREMES, PROBE, SECTION
from fslab.parsers.fio import ALL_CLIENTS

RUN_KEYS = ["target", "fs", "fs_impl", "workload", "op", "metric", "unit", "better",
            "iteration", "run_id", "target_base", "job"]

# What this step does, in one statement the report prints (stats/methods.csv).
METHOD = ('Observation: one fio section of one run. The clones of a section (numjobs) are '
          'summed (IOPS, bandwidth); latency means are weighted by completed I/Os; percentiles '
          'come from merged json+ bins. Different sections of one job file are different '
          'observations, never added up; jobs fio grouped (group_reporting) stay one. Samples '
          "within a run (slices of a round, files) are averaged into the run's value (a maximum "
          "or minimum is the extreme over them); a state probed during a run (an aging run's "
          "fragmentation) is the last one, the state the run left. An aging run is one long "
          "run whose operations are neither independent nor stationary: its latency is "
          "observed on 20 contiguous sections of the run in time order (sectioning, Asmussen "
          "& Glynn, Stochastic Simulation IV.5), each section an observation, so its "
          "intervals widen when the run drifts instead of counting 10^5 operations as "
          "independent; a "
          "distributed run is observed through its aggregate. CPU: the workload's own (fio's "
          "usr + sys, as % of one core, summed over a section's jobs), system-wide CPU from "
          '/proc/stat during the run (kernel threads and daemons included), and each per '
          'completed I/O.')


def with_cell_fields(table: pd.DataFrame) -> pd.DataFrame:
    """A table of rows without their cell's fields (core/cell_keys.py; rows built by hand):
    each target its own, each workload its own job, as a campaign without variants."""
    if {"target_base", "job"} <= set(table.columns):
        return table
    out = table.copy()
    if "target_base" not in out:
        out["target_base"] = out["target"].astype(str) if len(out) else []
    if "job" not in out:
        out["job"] = out["workload"].astype(str) if len(out) else []
    return out


def observations(metrics: pd.DataFrame) -> pd.DataFrame:
    """The rows that are observations: for a run over several hosts, only the aggregate."""
    if "host" not in metrics or not (metrics["host"] == ALL_CLIENTS).any():
        return metrics
    with_aggregate = set(metrics.loc[metrics["host"] == ALL_CLIENTS, "run_id"])
    keep = ~metrics["run_id"].isin(with_aggregate) | (metrics["host"] == ALL_CLIENTS)
    return metrics[keep]


def per_run(metrics: pd.DataFrame) -> pd.DataFrame:
    """One row per observation and metric (RUN_KEYS + sample + value): a run's samples
    averaged into its value, an extreme (metrics.EXTREMES) the extreme over them, a probed
    state (metrics.PROBE) the last one; each section of a sectioned run (metrics.SECTION)
    is an observation of its own, numbered by `sample` (0 for every other row)."""
    rows = with_cell_fields(observations(metrics))
    if rows.empty:
        return pd.DataFrame(columns=[*RUN_KEYS, "sample", "value"])
    if "note" not in rows or not rows["note"].isin([SECTION, PROBE]).any():
        return _samples_combined(rows)[[*RUN_KEYS, "sample", "value"]]
    sectioned = rows[rows["note"] == SECTION]
    probed = rows[rows["note"] == PROBE]
    rest = rows[~rows["note"].isin([SECTION, PROBE])]
    parts = [_samples_combined(rest)]
    if not probed.empty:  # the state the run left: its last probe
        last = probed.sort_values("sample", kind="stable").groupby(
            RUN_KEYS, sort=False, dropna=False, observed=True).tail(1)
        parts.append(last[[*RUN_KEYS, "value"]].assign(sample=0))
    if not sectioned.empty:
        parts.append(sectioned[[*RUN_KEYS, "sample", "value"]])
    out = pd.concat([p for p in parts if not p.empty] or parts[:1], ignore_index=True)
    return out[[*RUN_KEYS, "sample", "value"]]


def _samples_combined(rows: pd.DataFrame) -> pd.DataFrame:
    """Rows that are samples of their run's value (files, slices) combined into it."""
    if not rows.duplicated(["run_id", "op", "metric"]).any():  # one value each: no means
        return rows[[*RUN_KEYS, "value"]].reset_index(drop=True).assign(sample=0)
    grouped = rows.groupby(RUN_KEYS, sort=False, dropna=False, observed=True)["value"]
    out = grouped.mean().reset_index()
    extreme = out["metric"].map(EXTREMES)
    if extreme.notna().any():
        out["value"] = out["value"].where(extreme != "max", grouped.max().to_numpy())
        out["value"] = out["value"].where(extreme != "min", grouped.min().to_numpy())
    return out.assign(sample=0)


SERIES_COLUMNS = ["target", "workload", "op", "metric", "unit", "better", "sample", "value"]


def probe_states(metrics: pd.DataFrame) -> pd.DataFrame:
    """Every state a run's probes saw, in order (metrics.PROBE rows; sample = operations
    done): how a file system aged, for the report's charts. Empty for other runs."""
    if "note" not in metrics or not (metrics["note"] == PROBE).any():
        return pd.DataFrame(columns=SERIES_COLUMNS)
    rows = metrics[metrics["note"] == PROBE][SERIES_COLUMNS]
    return rows.sort_values(["target", "metric", "sample"], kind="stable").reset_index(
        drop=True)


def _observed(metrics: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    return per_run(metrics), probe_states(metrics)


STEP = Step("observations", reads=("metrics",), makes=("runs", "probe_states"),
            run=_observed, method=METHOD, tables={"probe_states": "probe_states.csv"},
            optional=frozenset({"probe_states"}))
