"""Between-target comparisons for every workload × op × headline metric (analysis.pairs.model):
tests.csv (the model per comparison and why) and pairwise.csv (every pair's ratio,
interval, the level it was computed at, adjusted p and the smallest ratio it could have
shown), with the primary questions (analysis.pairs.questions) as one campaign-wide family."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
import pandas as pd

from fslab.analysis.cells.observations import per_run
from fslab.analysis.pairs.decisions import decide
from fslab.analysis.pairs.model import ALPHA, IMPORTED, Comparison, compare, usable
from fslab.analysis.pairs.questions import Question, derived_metrics, primary_questions
from fslab.core.metrics import HEADLINE_METRICS, HIGHER
from fslab.core.units import DEFAULT_MARGIN

KEY = ["workload", "op", "metric"]
SECTIONED = ("sections of one run each (aging runs): sections of different runs are not "
             "blocks of each other")
TESTS_COLUMNS = ["workload", "op", "metric", "primary", "test", "statistic", "p_value",
                 "reason", "blocked", "targets", "dropped", "n", "noise", "spread_ratio",
                 "alpha", "family", "mde_ratio"]
PAIRWISE_COLUMNS = ["workload", "op", "metric", "primary", "a", "b", "test", "p_value",
                    "p_adj", "alpha", "family", "ratio", "ratio_ci_low", "ratio_ci_high",
                    "se_log", "df", "estimable", "note", "cliffs_delta", "magnitude",
                    "significant", "mde_ratio", "n_a", "n_b", "n_pairs", "sd_log_a",
                    "sd_log_b", "look"]


def compare_targets(metrics: pd.DataFrame, runs: pd.DataFrame | None = None,
                    blocked_allowed: bool = True, declared: dict[str, str] | None = None,
                    campaign_primary: tuple[str, ...] = (), margin: float = DEFAULT_MARGIN,
                    seconds: dict[tuple[str, str], float] | None = None,
                    looks: list[int] | None = None, asked: set[Question] | None = None,
                    machine: dict[tuple[str, str], float] | None = None,
                    weights: dict[str, dict[int, float]] | None = None
                    ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(tests, pairwise) for every headline metric row shared by two or more targets.

    Primary questions (analysis.pairs.questions) form one family across the whole campaign:
    each primary pair's interval and p are Bonferroni-adjusted over every primary pair
    of every workload. Other headline metrics are exploratory: each pair's own 95 %
    interval, unadjusted, and no verdict. A metric that is another one times a fixed
    block size is not compared. `runs` is `per_run(metrics)` when the caller has it;
    `blocked_allowed` is False for imported results, whose iteration numbers are not
    known to be blocks; `declared` maps workloads to the primary metric they declared.
    Every primary pair is decided (analysis.pairs.decisions: faster, slower, the same within
    `margin`, or unresolved with what it would take at `seconds` per run of
    (workload, target)). With `looks` (a campaign that resolves: the iterations at each
    look), each primary pair is the one of its first deciding look (analysis.pairs.sequential).
    `asked`: the primary questions when the caller has them (analysis.pipeline);
    `machine`: each cell's machine seconds (decisions.machine_seconds), what each decision
    cost; `weights`: {workload: {iteration: weight}} of runs of another length
    (analysis.pairs.sequential.iteration_weights).
    """
    runs = per_run(metrics) if runs is None else runs
    values = runs[runs["metric"].isin(HEADLINE_METRICS)].reset_index(drop=True)
    primary = asked if asked is not None else primary_questions(values, declared or {},
                                                                 campaign_primary)
    skipped = derived_metrics(values, primary)
    value = values["value"].to_numpy(dtype=float)
    target = values["target"].astype(str).to_numpy(dtype=object)
    iteration = values["iteration"].to_numpy()
    section = values["sample"].to_numpy() > 0 if "sample" in values else np.zeros(len(values),
                                                                                     bool)
    cells: list[tuple[Question, dict[str, dict[int, float]], bool]] = []
    for key, index in sorted(values.groupby(KEY, sort=True, observed=True).indices.items()):
        question = (str(key[0]), str(key[1]), str(key[2]))
        names = sorted(set(target[index]))
        if len(names) < 2 or question in skipped:
            continue
        groups = {name: _by_iteration(iteration[index][target[index] == name],
                                      value[index][target[index] == name], offset)
                  for offset, name in enumerate(names)}
        cells.append((question, groups, bool(section[index].any())))
    family = family_size(groups for question, groups, _ in cells if question in primary)
    better = dict(zip(values["metric"].astype(str), values["better"].astype(str), strict=True))
    tests, pairs = [], []
    for question, groups, sectioned in cells:
        is_primary = question in primary
        size = family if is_primary else 1
        weighted = (weights or {}).get(question[0])
        found = compare(groups, blocked_allowed and not sectioned, family=size,
                        not_blocks=SECTIONED if sectioned else IMPORTED, weights=weighted)
        cell = {**dict(zip(KEY, question, strict=True)), "primary": is_primary,
                "family": size}
        if isinstance(found, str):
            tests.append({**cell, "test": "none", "statistic": math.nan,
                          "p_value": math.nan, "reason": found, "targets": len(groups)})
            continue
        tests.append({**cell, **_test_row(found), "alpha": ALPHA / size})
        chosen = [(p, math.nan) for p in found.pairs]
        if looks and is_primary:
            from fslab.analysis.pairs.sequential import at_looks

            decided = at_looks(groups, looks, size, margin, better.get(question[2], HIGHER),
                               blocked_allowed and not sectioned, weights=weighted)
            chosen = [decided.get((p.a, p.b), (p, math.nan)) for p in found.pairs]
        pairs += [{**cell, "test": p.model, "p_value": p.p_value, "p_adj": p.p_adj,
                   "alpha": p.alpha, "ratio": p.ratio, "ratio_ci_low": p.ratio_ci_low,
                   "ratio_ci_high": p.ratio_ci_high, "se_log": p.se_log, "df": p.df,
                   "estimable": p.estimable, "note": p.note,
                   "cliffs_delta": p.cliffs_delta, "magnitude": p.magnitude,
                   "significant": p.significant, "mde_ratio": p.mde_ratio,
                   "n_a": p.n_a, "n_b": p.n_b, "n_pairs": p.n_pairs,
                   "sd_log_a": p.sd_log_a, "sd_log_b": p.sd_log_b, "a": p.a, "b": p.b,
                   "look": look}
                  for p, look in chosen]
    return (pd.DataFrame(tests, columns=TESTS_COLUMNS),
            decide(pd.DataFrame(pairs, columns=PAIRWISE_COLUMNS), better, margin, seconds or {},
                   _next_alpha(looks), machine))


def _next_alpha(looks: list[int] | None) -> float | None:
    """A campaign that resolves: the α its next look spends (None: a plain campaign)."""
    if not looks:
        return None
    from fslab.analysis.pairs.sequential import look_alpha

    return look_alpha(len(looks) + 1)


def family_size(comparisons: Iterable[dict[str, dict[int, float]]]) -> int:
    """How many pairs the primary questions compare in all: k(k − 1)/2 per question
    over its usable targets (the Bonferroni m of the campaign's family)."""
    total = 0
    for groups in comparisons:
        k = len(usable(groups)[0])
        total += k * (k - 1) // 2
    return max(total, 1)


def _by_iteration(iterations: np.ndarray, values: np.ndarray, target: int = 0
                  ) -> dict[int, float]:
    """{iteration: value}; several values for one iteration (imports that could not tell
    iterations apart, sections of one run) are kept apart under negative keys, distinct
    for each `target` (its number in the comparison), so they never pair up."""
    out: dict[int, float] = {}
    base = -(target + 1) * SEPARATE_KEYS
    for number, (i, v) in enumerate(zip(iterations.tolist(), values.tolist(), strict=True)):
        out[int(i) if int(i) not in out else base - number] = float(v)
    return out


SEPARATE_KEYS = 10**9  # more values than one target ever has in one comparison


def _test_row(found: Comparison) -> dict[str, object]:
    """One comparison's row of tests.csv."""
    sds = [p.noise for p in found.pairs]  # what the minimum detectable ratio rests on
    ns = sorted({n for p in found.pairs for n in (p.n_a, p.n_b)})
    mdes = [p.mde_ratio for p in found.pairs if p.mde_ratio == p.mde_ratio]
    return {"test": found.model, "statistic": found.statistic, "p_value": found.p_value,
            "reason": found.reason, "blocked": found.blocked,
            "targets": len({name for p in found.pairs for name in (p.a, p.b)}),
            "dropped": "; ".join(f"{k} ({v})" for k, v in sorted(found.dropped.items())),
            "n": "/".join(map(str, ns)),
            # typical run-to-run noise behind the comparisons (SD of logs ≈ relative SD;
            # blocked: of the within-iteration differences, per target)
            "noise": float(np.median(sds)) if sds else math.nan,
            "spread_ratio": found.spread_ratio,
            "mde_ratio": float(np.median(mdes)) if mdes else math.nan}


def significant(p: float) -> bool:
    return bool(p == p and p < ALPHA)
