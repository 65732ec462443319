"""Between-target comparisons for every workload × op × headline metric (analysis.model):
tests.csv (the model per comparison and why) and pairwise.csv (every pair's ratio,
interval, adjusted p and the smallest ratio it could have shown)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from fslab.analysis.model import ALPHA, Comparison, compare
from fslab.analysis.observations import per_run
from fslab.metrics import HEADLINE_METRICS

KEY = ["workload", "op", "metric"]
TESTS_COLUMNS = ["workload", "op", "metric", "test", "statistic", "p_value", "reason",
                 "blocked", "targets", "n", "noise", "spread_ratio", "mde_ratio"]
PAIRWISE_COLUMNS = ["workload", "op", "metric", "a", "b", "test", "p_value", "p_adj", "ratio",
                    "ratio_ci_low", "ratio_ci_high", "cliffs_delta", "magnitude",
                    "significant", "mde_ratio", "n_a", "n_b", "df", "sd_log_a", "sd_log_b"]


def compare_targets(metrics: pd.DataFrame, runs: pd.DataFrame | None = None,
                    blocked_allowed: bool = True) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(tests, pairwise) for every headline metric row shared by two or more targets.

    Only headline metrics are compared: testing every secondary figure (slat, io_bytes,
    each CPU share) would multiply comparisons without informing. `runs` is
    `per_run(metrics)` when the caller has it; `blocked_allowed` is False for imported
    results, whose iteration numbers are not known to be blocks.
    """
    runs = per_run(metrics) if runs is None else runs
    values = runs[runs["metric"].isin(HEADLINE_METRICS)].reset_index(drop=True)
    value = values["value"].to_numpy(dtype=float)
    target = values["target"].astype(str).to_numpy(dtype=object)
    iteration = values["iteration"].to_numpy()
    tests, pairs = [], []
    for key, index in sorted(values.groupby(KEY, sort=True, observed=True).indices.items()):
        names = sorted(set(target[index]))
        if len(names) < 2:
            continue
        groups = {name: _by_iteration(iteration[index][target[index] == name],
                                      value[index][target[index] == name]) for name in names}
        found = compare(groups, blocked_allowed)
        cell = dict(zip(KEY, key, strict=True))
        if isinstance(found, str):
            tests.append({**cell, "test": "none", "statistic": math.nan,
                          "p_value": math.nan, "reason": found, "targets": len(names)})
            continue
        tests.append({**cell, **_test_row(found)})
        pairs += [{**cell, "test": p.model, "p_value": p.p_value, "p_adj": p.p_adj,
                   "ratio": p.ratio, "ratio_ci_low": p.ratio_ci_low,
                   "ratio_ci_high": p.ratio_ci_high, "cliffs_delta": p.cliffs_delta,
                   "magnitude": p.magnitude, "significant": p.significant,
                   "mde_ratio": p.mde_ratio, "n_a": p.n_a, "n_b": p.n_b, "df": p.df,
                   "sd_log_a": p.sd_log_a, "sd_log_b": p.sd_log_b, "a": p.a, "b": p.b}
                  for p in found.pairs]
    return (pd.DataFrame(tests, columns=TESTS_COLUMNS),
            pd.DataFrame(pairs, columns=PAIRWISE_COLUMNS))


def _by_iteration(iterations: np.ndarray, values: np.ndarray) -> dict[int, float]:
    """{iteration: value}; several values for one iteration (imports that could not tell
    iterations apart) are kept apart under negative keys, which never pair up."""
    out: dict[int, float] = {}
    for number, (i, v) in enumerate(zip(iterations.tolist(), values.tolist(), strict=True)):
        out[int(i) if int(i) not in out else -1 - number] = float(v)
    return out


def _test_row(found: Comparison) -> dict[str, object]:
    """One comparison's row of tests.csv."""
    sds = [p.noise for p in found.pairs]  # what the minimum detectable ratio rests on
    ns = sorted({n for p in found.pairs for n in (p.n_a, p.n_b)})
    mdes = [p.mde_ratio for p in found.pairs if p.mde_ratio == p.mde_ratio]
    return {"test": found.model, "statistic": found.statistic, "p_value": found.p_value,
            "reason": found.reason, "blocked": found.blocked,
            "targets": len({name for p in found.pairs for name in (p.a, p.b)}),
            "n": "/".join(map(str, ns)),
            # typical run-to-run noise behind the comparisons (SD of logs ≈ relative SD;
            # blocked: of the within-iteration differences, per target)
            "noise": float(np.median(sds)) if sds else math.nan,
            "spread_ratio": found.spread_ratio,
            "mde_ratio": float(np.median(mdes)) if mdes else math.nan}


def significant(p: float) -> bool:
    return bool(p == p and p < ALPHA)
