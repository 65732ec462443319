"""Between-target comparisons for every workload × op × metric: tests.csv and pairwise.csv."""

from __future__ import annotations

import warnings

import pandas as pd

from fslab.analysis.groups import ALPHA, omnibus, pairwise
from fslab.analysis.observations import per_run
from fslab.metrics import HEADLINE_METRICS

KEY = ["workload", "op", "metric"]
TESTS_COLUMNS = ["workload", "op", "metric", "test", "statistic", "p_value", "reason"]
PAIRWISE_COLUMNS = ["workload", "op", "metric", "a", "b", "test", "p_value", "p_adj", "ratio",
                    "ratio_ci_low", "ratio_ci_high", "cliffs_delta", "magnitude"]


def compare_targets(metrics: pd.DataFrame,
                    runs: pd.DataFrame | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(tests, pairwise) for every headline metric row shared by two or more targets.

    Only the headline metrics are tested: testing every secondary figure (slat, io_bytes,
    each CPU share) would multiply comparisons and false positives without informing.
    `runs` is `per_run(metrics)` when the caller has it already.
    """
    tests, pairs = [], []
    runs = per_run(metrics) if runs is None else runs
    values = runs[runs["metric"].isin(HEADLINE_METRICS)].reset_index(drop=True)
    value = values["value"].to_numpy(dtype=float)
    target = values["target"].to_numpy(dtype=object)
    iteration = values["iteration"].to_numpy()
    cells = values.groupby(KEY, sort=True).indices
    for key in sorted(cells):
        index = cells[key]
        names = sorted(set(target[index]))
        if len(names) < 2:
            continue
        members = {name: index[target[index] == name] for name in names}
        groups = {name: value[rows] for name, rows in members.items()}
        with warnings.catch_warnings():  # near-constant cells: numpy warns, we report n/a
            warnings.simplefilter("ignore")
            result = omnibus(groups)
        tests.append({**dict(zip(KEY, key, strict=True)), "test": result.test,
                      "statistic": result.statistic, "p_value": result.p_value,
                      "reason": result.reason})
        by_iteration = {name: dict(zip(iteration[rows].tolist(), value[rows].tolist(),
                                       strict=True)) for name, rows in members.items()}
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
