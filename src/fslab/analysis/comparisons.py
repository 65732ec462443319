"""Between-target comparisons for every workload × op × metric: tests.csv and pairwise.csv."""

from __future__ import annotations

import warnings

import pandas as pd

from fslab.analysis.groups import ALPHA, omnibus, pairwise
from fslab.analysis.summary import observations
from fslab.metrics import HEADLINE_METRICS

KEY = ["workload", "op", "metric"]
TESTS_COLUMNS = ["workload", "op", "metric", "test", "statistic", "p_value", "reason"]
PAIRWISE_COLUMNS = ["workload", "op", "metric", "a", "b", "test", "p_value", "p_adj", "ratio",
                    "ratio_ci_low", "ratio_ci_high", "cliffs_delta", "magnitude"]


def per_run_values(metrics: pd.DataFrame) -> pd.DataFrame:
    """One value per run and metric (samples within a run averaged)."""
    keys = [*KEY, "target", "unit", "better", "iteration", "run_id"]
    return metrics.groupby(keys, sort=True, dropna=False)["value"].mean().reset_index()


def compare_targets(metrics: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(tests, pairwise) for every headline metric row shared by two or more targets.

    Only the headline metrics are tested: testing every secondary figure (slat, io_bytes,
    each CPU share) would multiply comparisons and false positives without informing.
    """
    tests, pairs = [], []
    metrics = observations(metrics)
    values = per_run_values(metrics[metrics["metric"].isin(HEADLINE_METRICS)])
    for key, group in values.groupby(KEY, sort=True):
        if group["target"].nunique() < 2:
            continue
        groups = {t: g["value"].to_numpy() for t, g in group.groupby("target", sort=True)}
        with warnings.catch_warnings():  # near-constant cells: scipy warns, we report n/a
            warnings.simplefilter("ignore")
            result = omnibus(groups)
        tests.append({**dict(zip(KEY, key, strict=True)), "test": result.test,
                      "statistic": result.statistic, "p_value": result.p_value,
                      "reason": result.reason})
        by_iteration = {t: dict(zip(g["iteration"], g["value"], strict=True))
                        for t, g in group.groupby("target", sort=True)}
        iterations = [set(v) for v in by_iteration.values()]
        paired = by_iteration if all(s == iterations[0] for s in iterations) else None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            found = pairwise(groups, result.posthoc, paired)
        for pair in found:
            pairs.append({**dict(zip(KEY, key, strict=True)), **pair.__dict__})
    return (pd.DataFrame(tests, columns=TESTS_COLUMNS),
            pd.DataFrame(pairs, columns=PAIRWISE_COLUMNS))


def significant(p: float) -> bool:
    return bool(p == p and p < ALPHA)
