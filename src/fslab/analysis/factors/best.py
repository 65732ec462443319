"""The best configuration of each swept job, and every one the evidence cannot separate
from it.

A configuration is a target with the workload's levels, named as shortly as the job's
configurations allow ("ext4 iodepth=32"; "data=journal" where only a mount option
varies). The best is the one with the best geometric mean of the job's primary metric, in
the metric's direction. Each other configuration is compared with it:

- two targets on the same variant of the job (ext4 iodepth=32 against xfs iodepth=32) are
  a primary pair of the verdicts already: its row of pairwise.csv is taken as it is
  (ratio, interval, p_adj, decision), so one pair never gets two answers;
- any other pair (another variant: ext4 iodepth=8 against ext4 iodepth=32) by the pairs'
  own model (the paired t on log ratios over the iterations both ran:
  analysis.pairs.model.compare), all such comparisons of the campaign one Bonferroni family.

Those whose interval includes 1 are within reach (the same within the margin, or not
resolved yet); the rest are behind and not listed. A pair that cannot be estimated is
within reach, unresolved. Cache-bound configurations are never crowned
(analysis.cells.cachebound): when one configuration of a job is left it is the best, alone;
when none is, the job's row says so (role `none`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import pandas as pd

from fslab.analysis.cells.stats import geomean
from fslab.analysis.factors.levels import CELL_COLUMNS, keys
from fslab.analysis.pairs.decisions import best_of
from fslab.analysis.pairs.model import ALPHA
from fslab.analysis.pairs.selection import PAIRS, best_and_within_reach
from fslab.core.cell_keys import CellKey, short_names
from fslab.core.metrics import factor_columns
from fslab.core.pair import AGAINST_BEST, EQUIVALENT, UNRESOLVED, Pair

BEST_COLUMNS = ["workload", "op", "metric", "better", "role", "configuration", "target",
                "variant", "geomean", "n", "ratio", "ratio_ci_low", "ratio_ci_high",
                "p_adj", "decision", "compared", "note"]
BEST, WITHIN_REACH, NONE = "best", "within reach", "none"


@dataclass
class Job:
    """One swept job's primary values by configuration, cache-bound ones set aside."""

    job: str
    op: str
    metric: str
    better: str
    groups: dict[CellKey, dict[int, float]]  # configuration -> {iteration: value}
    names: dict[CellKey, tuple[str, str]]  # configuration -> (target, workload)
    shown: dict[CellKey, str]  # configuration -> its name, as short as the job allows
    cache_bound: list[CellKey]

    @cached_property
    def geomeans(self) -> dict[CellKey, float]:
        return {key: geomean(values.values()) for key, values in self.groups.items()}

    @cached_property
    def best(self) -> CellKey | None:
        return best_of(self.geomeans, self.better)

    def same_variant(self, name: CellKey) -> bool:
        """Whether `name` runs the best's variant of the job (its pair is a primary one)."""
        best = self.best
        return best is not None and self.names[name][1] == self.names[best][1]


def best_table(runs: pd.DataFrame, questions: dict[str, tuple[str, str]],
               blocked_allowed: bool, margin: float, cache_bound: set[tuple[str, str]],
               pairwise: Sequence[Pair] = (), alpha: float = ALPHA) -> pd.DataFrame:
    """stats/best.csv: per swept job, its best configuration and those within reach
    (`pairwise`: the campaign's pairs, whose primary ones answer for themselves)."""
    jobs = [job for job in (_job(runs, name, op, metric, cache_bound)
                            for name, (op, metric) in questions.items()) if job]
    primary = [{name: _primary_row(pairwise, job, name) for name in job.groups
                if name != job.best} for job in jobs]
    family = sum(1 for rows in primary for found in rows.values() if found is None) or 1
    out: list[dict[str, object]] = []
    for job, rows in zip(jobs, primary, strict=True):
        out += _job_rows(job, blocked_allowed, margin, family, alpha, rows)
    table = pd.DataFrame(out, columns=BEST_COLUMNS)
    return table.astype({"n": "Int64", "compared": "Int64"})


def _job(runs: pd.DataFrame, name: str, op: str, metric: str,
         cache_bound: set[tuple[str, str]]) -> Job | None:
    """The job's values, or None when it has fewer than two configurations."""
    if runs.empty:
        return None
    rows = runs[(runs["job"].astype(str) == name)
                & (runs["op"].astype(str) == op) & (runs["metric"].astype(str) == metric)]
    if rows.empty:
        return None
    factors = [f for f in factor_columns(rows.columns) if f not in CELL_COLUMNS]
    cells = rows[[*CELL_COLUMNS, *factors]].drop_duplicates(["target", "workload"])
    found = keys(cells)
    of = {(str(t), str(w)): key for t, w, key in zip(cells["target"], cells["workload"],
                                                     found, strict=True)}
    shown = dict(zip(found, short_names(found), strict=True))
    groups: dict[CellKey, dict[int, float]] = {}
    names: dict[CellKey, tuple[str, str]] = {}
    bound: list[CellKey] = []
    for target, workload, iteration, value in zip(rows["target"], rows["workload"],
                                                  rows["iteration"], rows["value"],
                                                  strict=True):
        config = of[(str(target), str(workload))]
        if (str(target), str(workload)) in cache_bound:
            if config not in bound:
                bound.append(config)
            continue
        groups.setdefault(config, {})[int(iteration)] = float(value)
        names[config] = (str(target), str(workload))
    if len(groups) + len(bound) < 2:
        return None
    return Job(name, op, metric, str(rows["better"].iloc[0]), groups, names, shown, bound)


def _job_rows(job: Job, blocked_allowed: bool, margin: float, family: int, alpha: float,
              primary: dict[CellKey, Pair | None]) -> list[dict[str, object]]:
    """The job's best and those within reach; `primary` holds each other configuration's
    primary pair with the best where it has one (_primary_row)."""
    base = {"workload": job.job, "op": job.op, "metric": job.metric, "better": job.better}
    set_aside = (f"{len(job.cache_bound)} cache-bound, not crowned: "
                 + ", ".join(job.shown[k] for k in job.cache_bound)) if job.cache_bound else ""
    best = job.best
    if best is None:
        return [{**base, "role": NONE, "configuration": "", "ratio": math.nan,
                 "note": set_aside or "no configuration measured a positive value"}]
    geomeans = job.geomeans
    out: list[dict[str, object]] = [{**base, "role": BEST, "configuration": job.shown[best],
            "target": job.names[best][0],
            "variant": job.names[best][1], "geomean": geomeans[best],
            "n": len(job.groups[best]), "ratio": 1.0, "note": set_aside}]
    others = [name for name in job.groups if name != best]
    out[0]["compared"] = len(others)
    if not others:
        return out
    found = best_and_within_reach(job.groups, job.better, margin, alpha, model=PAIRS,
                                  family=family, blocked=blocked_allowed)
    near: list[tuple[float, dict[str, object]]] = []  # by how far the ratio is from 1
    for other in others:
        pair, note = primary.get(other), ""  # a primary pair answers for itself
        if pair is None:
            pair = found.against[other]
            note = "" if pair.estimable else (
                f"not tested: {pair.note}" if not pair.compared else "no interval")
        decision = pair.word(AGAINST_BEST)
        if decision not in (EQUIVALENT, UNRESOLVED):
            continue
        near.append((abs(math.log(pair.ratio)) if pair.ratio > 0 else math.inf, {
            **base, "role": WITHIN_REACH, "configuration": job.shown[other],
            "target": job.names[other][0], "variant": job.names[other][1],
            "geomean": geomeans[other], "n": len(job.groups[other]), "ratio": pair.ratio,
            "ratio_ci_low": pair.ratio_ci_low, "ratio_ci_high": pair.ratio_ci_high,
            "p_adj": pair.p_adj, "decision": decision, "note": note}))
    return out + [row for _, row in sorted(near, key=lambda item: item[0])]


def _primary_row(pairwise: Sequence[Pair], job: Job, other: CellKey) -> Pair | None:
    """The verdicts' own primary pair of `other` and the best (seen from `other`: other /
    best) when `other` runs the best's variant on another target; None otherwise."""
    if not job.same_variant(other):
        return None
    best = job.best
    assert best is not None
    (mine, variant), theirs = job.names[best], job.names[other][0]
    for pair in pairwise:
        if pair.primary and pair.decision and pair.question == (variant, job.op, job.metric) \
                and {pair.a, pair.b} == {mine, theirs}:
            return pair.seen_from(theirs)
    return None
