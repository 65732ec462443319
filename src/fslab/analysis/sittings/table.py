"""stats/pooled.csv: every pair of several sittings (or machines) of one campaign pooled
(analysis.sittings.pooled), decided on average and next time by the verdicts' rule (a
PooledQuestion each: analysis/sittings/question.py); and
each sitting's own estimate beside it (pooled_sittings.csv: the forest plot's rows).

Input: the sittings (analysis/sittings/sitting.py), each with its pairs: read off its
pairwise.csv or, for a catalogue, the pairs its runs give; grouped over as one table. The
primary pairs are one family, Bonferroni-adjusted together as the verdicts' are (a single
pair: family 1): every interval of a primary row is at 1 − α/m; the others, exploratory,
at 95 %.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import Literal

import pandas as pd

from fslab.analysis.sittings.looks import PLANNED
from fslab.analysis.sittings.pooled import (
    HOSTS_METHOD,
    METHOD,
    decisions,
    fixed_effect,
    heterogeneity,
    pool,
    ratio_interval,
)
from fslab.analysis.sittings.question import PooledQuestion
from fslab.analysis.sittings.repeat import for_workload
from fslab.analysis.sittings.sequential import over_looks
from fslab.analysis.sittings.sitting import Sitting, table_of
from fslab.analysis.sittings.spread import (
    HISTORY,
    SharedSpread,
    SittingEstimate,
    between_sittings,
    spread_for_job,
)
from fslab.core.environment_record import SittingSpread
from fslab.core.metrics import HIGHER, METRIC_UNITS

ALPHA = 0.05
By = Literal["sitting", "host"]
PAIR = ["workload", "op", "metric", "primary", "a", "b"]
FOREST_COLUMNS = [*PAIR, "unit", "ratio", "ratio_ci_low", "ratio_ci_high", "host"]


def units_of(rows: pd.DataFrame, by: By) -> pd.DataFrame:
    """The units a pool draws from: each sitting, or (by host) each host's sittings
    averaged — its log ratio their mean, its standard error that mean's."""
    if by == "sitting":
        return rows.assign(unit=rows["sitting"])
    keys = [*PAIR, "host"]
    grouped = rows.groupby(keys, sort=False, observed=True)
    out = grouped.agg(estimate=("estimate", "mean"), df=("df", "sum"),
                      machine_s=("machine_s", "sum"), iterations=("iterations", "sum"),
                      se=("se", lambda s: math.sqrt(float((s ** 2).sum())) / len(s)),
                      count=("sitting", "nunique")).reset_index()
    return out.assign(unit=out["host"], sitting=out["host"])


def pooled_table(sittings: Sequence[Sitting], by: By = "sitting", margin: float = 0.10,
                 spread: SittingSpread | None = None, family: int | None = None,
                 next_iterations: float | None = None, planned: int = PLANNED
                 ) -> tuple[list[PooledQuestion], pd.DataFrame]:
    """(pooled, forest): a PooledQuestion for every pair that two or more units measured,
    FOREST_COLUMNS for each unit's own estimate at the same level. Sittings (in the
    order they sat) are pooled with the spread from both sources and decided over their
    looks (analysis/sittings/sequential.py); `spread`: the host's between-sitting spread,
    each workload's own (repeat.for_workload), for sittings of that one host (else the
    stated prior); `family`: the primary questions' Bonferroni family (default: how
    many there are; 1: each at ALPHA); `next_iterations`: the next sitting's (default:
    each question's first sitting's); `planned`: the sittings the error is spent over.
    Hosts (`by` host) are pooled as the exact t on k − 1 (pooled.pool)."""
    units = units_of(table_of(sittings), by)
    groups = [(key, group) for key, group in units.groupby(PAIR, sort=True, observed=True)
              if group["unit"].nunique() >= 2]
    for key, group in groups:
        if group["unit"].nunique() != len(group):
            raise ValueError(f"{'/'.join(map(str, key))}: a sitting is given twice")
    family = family or max(1, sum(1 for key, _ in groups if bool(key[3])))
    together = _Together([(dict(zip(PAIR, key, strict=True)), group)
                          for key, group in groups if bool(key[3])])
    pooled, forest = [], []
    for key, group in groups:
        asked = dict(zip(PAIR, key, strict=True))
        primary = bool(asked["primary"])
        alpha = ALPHA / family if primary else ALPHA
        better = METRIC_UNITS.get(str(asked["metric"]), ("", HIGHER))[1]
        history = None
        if spread is not None and group["host"].nunique() == 1:
            history = for_workload(spread, str(asked["workload"]))
        base = _base(asked, group, alpha, margin, better, family if primary else 1)
        question = (_sittings(base, group, history, next_iterations, planned, together)
                    if by == "sitting" else _hosts(base, group))
        pooled.append(question)
        forest += _forest(asked, group, question.level)
    return pooled, pd.DataFrame(forest, columns=FOREST_COLUMNS)


def _base(asked: dict[str, object], group: pd.DataFrame, alpha: float, margin: float,
          better: str, family: int) -> PooledQuestion:
    """What every pooled question records of its units, whatever the pool (the pool's
    own figures follow: _sittings, _hosts)."""
    tau, i2, _ = heterogeneity(group["estimate"].to_numpy(float),
                               group["se"].to_numpy(float))
    return PooledQuestion(workload=str(asked["workload"]), op=str(asked["op"]),
                metric=str(asked["metric"]), primary=bool(asked["primary"]),
                a=str(asked["a"]), b=str(asked["b"]), k=len(group), tau=tau, i2=i2,
                machine_s=float(group["machine_s"].sum(min_count=1)),
                units=";".join(map(str, group["unit"])), alpha=alpha, margin=margin,
                family=family, better=better,
                iterations=";".join(str(n) for n in _iterations(group)))


def _iterations(group: pd.DataFrame) -> list[int]:
    """Each unit's iterations (a row from before they were recorded: its df + 1)."""
    found = group["iterations"] if "iterations" in group else pd.Series(math.nan,
                                                                        index=group.index)
    return [int(n) if n == n and n > 0 else round(float(d)) + 1
            for n, d in zip(found, group["df"], strict=True)]


class _Together:
    """The pool's primary questions, for what they together say of τ over their first k
    sittings (spread.spread_for_job; module doc of analysis/sittings/spread.py): the
    questions measured in the same sittings, grouped by workload. A question missing
    from a sitting the others sat is read with those that sat the same sittings."""

    def __init__(self, questions: Sequence[tuple[dict[str, object], pd.DataFrame]]):
        self._questions = [(asked, tuple(map(str, group["unit"])), _estimates(group))
                           for asked, group in questions]
        self._cache: dict[tuple[str, ...], SharedSpread] = {}

    def over(self, units: tuple[str, ...], k: int, job: str) -> SharedSpread:
        """What the primary questions sat in `units[:k]` say of τ over those sittings, as
        `job` reads it (spread.spread_for_job)."""
        key = (*units[:k], "\0", job)
        if key not in self._cache:
            jobs: dict[str, list[tuple[dict[str, object], list[SittingEstimate]]]] = {}
            for asked, own, estimates in self._questions:
                if own[:k] == units[:k]:
                    jobs.setdefault(_job(asked), []).append((asked, estimates[:k]))
            self._cache[key] = spread_for_job(
                {name: ([e for _, e in questions], _contrasts([a for a, _ in questions]))
                 for name, questions in jobs.items()}, job)
        return self._cache[key]


def _job(asked: dict[str, object]) -> str:
    """The group a sitting moves together: a workload (its ops and metrics alike)."""
    return str(asked["workload"])


def _contrasts(questions: Sequence[dict[str, object]]) -> int:
    """The independent contrasts of one workload's pairs: its targets less the groups
    the pairs join them into (three pairs of three targets: two)."""
    parent: dict[str, str] = {}

    def root(name: str) -> str:
        while parent.setdefault(name, name) != name:
            name = parent[name]
        return name

    for asked in questions:
        parent[root(str(asked["a"]))] = root(str(asked["b"]))
    return len(parent) - len({root(name) for name in parent})


def _estimates(group: pd.DataFrame) -> list[SittingEstimate]:
    """A question's sittings, in the order they sat, as the spread reads them."""
    return [SittingEstimate(float(r.estimate), float(r.se), n, float(r.df))
            for r, n in zip(group.itertuples(), _iterations(group), strict=True)]


def _sittings(base: PooledQuestion, group: pd.DataFrame, history: SittingSpread | None,
              next_iterations: float | None, planned: int, together: _Together
              ) -> PooledQuestion:
    """One question's sittings (`base`: what _base records of them) pooled with the
    spread from both sources and, a primary one, decided over its looks with τ read
    from the pool's primary questions together (`together`)."""
    alpha, better, margin = base.alpha, base.better, base.margin
    counts = _iterations(group)
    sittings = _estimates(group)
    m = float(next_iterations or counts[0])
    primary = base.primary
    if primary:
        units = tuple(map(str, group["unit"]))
        job = base.workload
        over = over_looks(sittings, history, alpha, better, margin, m, planned,
                          shared=lambda k: together.over(units, k, job))
        last = over.last
        between, level = last.between, last.level
        low, high, next_low, next_high = last.low, last.high, last.next_low, last.next_high
        decision, following, decided_at = over.decision, last.next_decision, over.decided_at
        if decided_at:
            decided = over.looks[decided_at - 2]
            decided_low, decided_high = math.exp(decided.low), math.exp(decided.high)
    else:
        between, level = between_sittings(sittings, history), alpha
        low, high = between.mean_interval(level)
        next_low, next_high = between.next_interval(level, m)
        decision = following = ""
        decided_at = 0
    if not decided_at:
        decided_low = decided_high = math.nan
    _, fixed_low, fixed_high = fixed_effect(group["estimate"], group["se"], group["df"],
                                            level)
    borrowed = between.source == HISTORY
    return replace(
        base, ratio=math.exp(between.estimate), ratio_ci_low=math.exp(low),
        ratio_ci_high=math.exp(high), next_low=math.exp(next_low),
        next_high=math.exp(next_high), decision=decision, next_decision=following,
        by="sitting", se_log=between.se, fixed_ci_low=math.exp(fixed_low),
        fixed_ci_high=math.exp(fixed_high), method=METHOD,
        tau_borrowed=between.prior.tau if borrowed else math.nan,
        tau_sittings=between.prior.sittings if borrowed else 0, next_iterations=m,
        level=level, decided_at=decided_at, planned=planned if primary else 0,
        decided_low=decided_low, decided_high=decided_high,
        spread_tau=between.tau, spread_tau_high=between.tau_high,
        spread_source=between.source, history_tau=between.history_tau, q=between.q,
        q_p=between.q_p, spread_questions=between.shared,
        spread_contrasts=together.over(tuple(map(str, group["unit"])), len(group),
                                       base.workload).contrasts
        if primary and between.shared > 1 else 1.0)


def _hosts(base: PooledQuestion, group: pd.DataFrame) -> PooledQuestion:
    """One question's hosts pooled by the exact t on k − 1 (no history speaks for
    machines not yet measured)."""
    alpha = base.alpha
    found = pool(group["estimate"].to_numpy(float), group["se"].to_numpy(float), alpha,
                 None, float(group["df"].mean()))
    ratio, low, high, next_low, next_high = ratio_interval(found)
    decision, following = (decisions(found, base.better, base.margin)
                           if base.primary else ("", ""))
    _, fixed_low, fixed_high = fixed_effect(group["estimate"], group["se"], group["df"],
                                            alpha)
    return replace(
        base, ratio=ratio, ratio_ci_low=low, ratio_ci_high=high, next_low=next_low,
        next_high=next_high, decision=decision, next_decision=following, by="host",
        se_log=found.se, fixed_ci_low=math.exp(fixed_low),
        fixed_ci_high=math.exp(fixed_high), note=found.note, method=HOSTS_METHOD,
        level=alpha, spread_tau=found.tau)


def _forest(asked: dict[str, object], group: pd.DataFrame, level: float
            ) -> list[dict[str, object]]:
    """Each unit's own estimate and interval at `level` (its t on its own df)."""
    from scipy.special import stdtrit

    out = []
    for unit in group.itertuples():
        crit = float(stdtrit(max(float(unit.df), 1.0), 1 - level / 2))
        out.append({**asked, "unit": str(unit.unit), "ratio": math.exp(float(unit.estimate)),
                    "ratio_ci_low": math.exp(float(unit.estimate) - crit * unit.se),
                    "ratio_ci_high": math.exp(float(unit.estimate) + crit * unit.se),
                    "host": str(unit.host)})
    return out
