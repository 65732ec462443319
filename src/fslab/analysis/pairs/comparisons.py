"""Between-target comparisons for every workload × op × headline metric (analysis.pairs.model):
tests.csv (the model per comparison and why) and pairwise.csv (every pair's ratio,
interval, the level it was computed at, adjusted p and the smallest ratio it could have
shown), with the primary questions (analysis.pairs.questions) as one campaign-wide family."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import replace

import numpy as np
import pandas as pd

from fslab.analysis.cells.observations import per_run
from fslab.analysis.pairs import decisions, model
from fslab.analysis.pairs.decisions import machine_seconds, seconds_per_iteration
from fslab.analysis.pairs.model import ALPHA, IMPORTED, Comparison, compare, usable
from fslab.analysis.pairs.pair import decide
from fslab.analysis.pairs.questions import QuestionKey, derived_metrics, primary_questions
from fslab.analysis.pairs.sequential import at_looks, look_alpha
from fslab.analysis.step import Step
from fslab.core.campaign_settings import CampaignSettings
from fslab.core.metrics import HEADLINE_METRICS, HIGHER
from fslab.core.pair import Pair
from fslab.core.record import RunRecord
from fslab.core.units import DEFAULT_MARGIN

KEY = ["workload", "op", "metric"]
SECTIONED = ("sections of one run each (aging runs): sections of different runs are not "
             "blocks of each other")
TESTS_COLUMNS = ["workload", "op", "metric", "primary", "test", "statistic", "p_value",
                 "reason", "blocked", "targets", "dropped", "n", "noise", "spread_ratio",
                 "alpha", "family", "mde_ratio"]


def compared_pairs(metrics: pd.DataFrame, runs: pd.DataFrame | None = None,
                   blocked_allowed: bool = True, declared: dict[str, str] | None = None,
                   campaign_primary: tuple[str, ...] = (), margin: float = DEFAULT_MARGIN,
                   seconds: dict[tuple[str, str], float] | None = None,
                   looks: list[int] | None = None, asked: set[QuestionKey] | None = None,
                   machine: dict[tuple[str, str], float] | None = None,
                   weights: dict[str, dict[int, float]] | None = None
                   ) -> tuple[pd.DataFrame, list[Pair]]:
    """(tests, every pair as a record) for every headline metric row shared by two or
    more targets.

    Primary questions (analysis.pairs.questions) form one family across the whole campaign:
    each primary pair's interval and p are Bonferroni-adjusted over every primary pair
    of every workload. Other headline metrics are exploratory: each pair's own 95 %
    interval, unadjusted, and no verdict. A metric that is another one times a fixed
    block size is not compared. `runs` is `per_run(metrics)` when the caller has it;
    `blocked_allowed` is False for imported results, whose iteration numbers are not
    known to be blocks; `declared` maps workloads to the primary metric they declared.
    Every primary pair is decided (analysis.pairs.pair.decide: faster, slower, the same within
    `margin`, or unresolved with what it would take at `seconds` per run of
    (workload, target)). With `looks` (a campaign that resolves: the iterations at each
    look), each primary pair is the one of its first deciding look (analysis.pairs.sequential).
    `asked`: the primary questions when the caller has them (analysis.pipeline);
    `machine`: each cell's machine seconds (decisions.machine_seconds), what each decision
    cost; `weights`: {workload: {iteration: weight}} of runs of another length
    (core.campaign_settings.CampaignSettings.weights).
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
    cells: list[tuple[QuestionKey, dict[str, dict[int, float]], bool]] = []
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
    next_alpha = _next_alpha(looks)
    tests: list[dict[str, object]] = []
    pairs: list[Pair] = []
    for question, groups, sectioned in cells:
        is_primary = question in primary
        size = family if is_primary else 1
        weighted = (weights or {}).get(question[0])
        direction = better.get(question[2], HIGHER)
        found = compare(groups, blocked_allowed and not sectioned, family=size,
                        not_blocks=SECTIONED if sectioned else IMPORTED, weights=weighted,
                        better=direction)
        cell = {**dict(zip(KEY, question, strict=True)), "primary": is_primary,
                "family": size}
        if isinstance(found, str):
            tests.append({**cell, "test": "none", "statistic": math.nan,
                          "p_value": math.nan, "reason": found, "targets": len(groups)})
            continue
        tests.append({**cell, **_test_row(found), "alpha": ALPHA / size})
        chosen: list[tuple[Pair, int | None]] = [(p, None) for p in found.pairs]
        if looks and is_primary:
            decided = at_looks(groups, looks, size, margin, direction,
                               blocked_allowed and not sectioned, weights=weighted)
            chosen = [decided.get((p.a, p.b), (p, None)) for p in found.pairs]
        for p, look in chosen:
            pair = replace(p, workload=question[0], op=question[1], metric=question[2],
                           primary=is_primary, look=look)
            if is_primary:
                level = None if next_alpha is None else next_alpha / size
                pair = decide(pair, margin, needs_level=level,
                              per_iteration_s=_both(seconds or {}, pair),
                              machine_s=_both(machine or {}, pair))
            pairs.append(pair)
    return pd.DataFrame(tests, columns=TESTS_COLUMNS), pairs


def _both(seconds: dict[tuple[str, str], float], pair: Pair) -> float:
    """The seconds of a pair's two cells (NaN where one has none)."""
    return sum(seconds.get((pair.workload, target), math.nan) for target in (pair.a, pair.b))


def _next_alpha(looks: list[int] | None) -> float | None:
    """A campaign that resolves: the α its next look spends (None: a plain campaign)."""
    if not looks:
        return None

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


def _compared(metrics: pd.DataFrame, runs: pd.DataFrame, records: list[RunRecord],
              blocked: bool, declared: dict[str, str], asked: set[QuestionKey],
              settings: CampaignSettings) -> tuple[pd.DataFrame, list[Pair]]:
    """(tests.csv, every pair as compared) of a campaign (their table, pairwise.csv, once
    the repeat intervals join them: analysis/sittings/on_repeat.py)."""
    tests, pairs = compared_pairs(metrics, runs, blocked_allowed=blocked, declared=declared,
                                  asked=asked, margin=settings.margin,
                                  seconds=seconds_per_iteration(records),
                                  machine=machine_seconds(records),
                                  weights=settings.weights, looks=list(settings.looks))
    return tests, pairs


STEP = Step("comparisons", reads=("metrics", "runs", "records", "blocked", "declared", "asked",
                                  "settings"),
            makes=("tests", "compared"), run=_compared,
            rests_on=(("model", model.METHOD), ("decisions", decisions.METHOD)),
            tables={"tests": "tests.csv"})
