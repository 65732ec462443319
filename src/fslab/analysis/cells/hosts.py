"""Per-host spread of distributed runs: a diagnostic beside the aggregate observation."""

from __future__ import annotations

import pandas as pd

from fslab.analysis.step import Step
from fslab.core.metrics import HEADLINE_METRICS
from fslab.parsers.fio import ALL_CLIENTS

COLUMNS = ["target", "workload", "op", "metric", "host", "mean", "share_of_total",
           "host_cv"]

# What this step does, in one statement the report prints (stats/methods.csv).
METHOD = ('Distributed runs: the aggregate over all hosts is the observation; the per-host '
          'spread is a diagnostic.')


def host_spread(metrics: pd.DataFrame) -> pd.DataFrame:
    """Each host's mean per cell, its share of the aggregate, and the CV across hosts."""
    if metrics.empty or not (metrics["host"] == ALL_CLIENTS).any():
        return pd.DataFrame(columns=COLUMNS)
    distributed = set(metrics.loc[metrics["host"] == ALL_CLIENTS, "run_id"])
    rows = metrics[metrics["run_id"].isin(distributed) & metrics["metric"].isin(HEADLINE_METRICS)]
    per_host = rows.groupby(["target", "workload", "op", "metric", "host"])["value"].mean()
    out = per_host.reset_index().rename(columns={"value": "mean"})
    cell = ["target", "workload", "op", "metric"]
    hosts_only = out[out["host"] != ALL_CLIENTS]
    total = out[out["host"] == ALL_CLIENTS].set_index(cell)["mean"]
    cv = hosts_only.groupby(cell)["mean"].agg(lambda s: s.std(ddof=1) / s.mean()
                                              if len(s) > 1 and s.mean() else float("nan"))
    hosts_only = hosts_only.assign(
        share_of_total=[m / total.get(tuple(k), float("nan")) for m, k in
                        zip(hosts_only["mean"], hosts_only[cell].itertuples(index=False),
                            strict=True)],
        host_cv=[cv.get(tuple(k), float("nan")) for k in
                 hosts_only[cell].itertuples(index=False)])
    return hosts_only[COLUMNS]


STEP = Step("hosts", reads=("metrics",), makes=("hosts",), run=host_spread, method=METHOD,
            tables={"hosts": "hosts.csv"}, optional=frozenset({"hosts"}),
            stated=lambda done: not done["hosts"].empty)
