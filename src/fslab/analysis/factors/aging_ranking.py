"""Does the ranking survive aging? For every pair of file systems and every aged level of
the `age` factor, on each workload's primary metric: the ratio fresh, the ratio aged and
their quotient, the interaction, decided — only where the data can tell.

- The fresh side of an aged level is its twin (`twin-LEVEL`: a fresh file system holding
  a copy of the aged tree, run/aging_places.py) for a workload that reads or rewrites the
  aged files, and the plain `fresh` file system for one that needs no tree; the row's
  `reference` says which.
- The four cells of a pair and level (a and b, fresh side and aged) ran in the same
  iterations (a fresh file system per iteration: age is a factor of the targets, its
  levels measured in the same rounds). Every figure of a row rests on the iterations all
  four ran: one whose aging failed leaves the ratios fresh and aged and the interaction
  alike (`n`, and `left_out` beside it). On those iterations the ratios fresh and aged
  and each file system's aged/fresh ratio are the verdicts' own pairs (pairwise.csv, its
  family and margin), decided again on fewer iterations where some were left out.
- The interaction is (a/b aged) / (a/b fresh): each iteration gives one contrast, log
  a_aged − log b_aged − log a_fresh + log b_fresh, and its interval is the paired t on
  those contrasts, Bonferroni-adjusted over every interaction of the campaign (workloads
  × pairs × aged levels). Its coverage and its false "the ranking changes" rate are
  checked on the simulator with known interactions (benchmarks/aging_ranking).
- A row any of whose four cells is cache-bound (analysis/cells/cachebound.py: it measured
  the page cache or more than the disk delivers) says so: `cache_bound`, and its decision
  begins with "cache-bound: ".
- `fill_a`, `fill_b`: the fill at the start of the aged runs, in percent of the space root
  can write (host/space.py), their mean over those iterations (`fill_a_fresh`,
  `fill_b_fresh` the fresh side's).

The decision (the verdicts' faster, slower, the same or unresolved for a against b at
each level, and the interaction's):
- "the ranking changes": the order decided both fresh and aged, the other way aged, and
  the interaction decided;
- "the lead disappears": the order decided fresh, and a and b the same within the margin
  aged;
- "the gap changes": the interaction decided and the order decided aged (the same way as
  fresh, or not known fresh);
- "the same": the interaction inside the margin: aging changes both alike;
- "the ranking holds": the interaction not decided, the order decided (or the same within
  the margin) and equal at both levels;
- "unresolved": anything else, with what resolving the interaction would take.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from fslab.analysis.factors.aging_answers import CACHE_BOUND, aging_verdicts, decide, detail
from fslab.analysis.factors.aging_labels import aging_labels, run_fill
from fslab.analysis.pairs.decisions import decide_pair
from fslab.analysis.pairs.model import ALPHA
from fslab.analysis.pairs.pair import (
    UNRESOLVED,
    Pair,
    views,
)
from fslab.analysis.step import Step
from fslab.core.age_factor import AGE, FRESH, twin_level, twinned
from fslab.core.campaign_settings import CampaignSettings
from fslab.core.metrics import HIGHER

COLUMNS = ["workload", "metric", "a", "b", "age", "ratio_fresh", "ratio_fresh_ci_low",
           "ratio_fresh_ci_high", "ratio_aged", "ratio_aged_ci_low", "ratio_aged_ci_high",
           "interaction", "interaction_ci_low", "interaction_ci_high", "decision",
           "cache_bound", "fill_a", "fill_b",
           # beyond the contract: what the decision rests on
           "op", "better", "reference", "levels", "fresh_decision", "aged_decision",
           "interaction_decision", "interaction_p_adj", "interaction_needs", "alpha",
           "family", "n", "left_out", "age_ratio_a", "age_ratio_a_ci_low",
           "age_ratio_a_ci_high", "age_decision_a", "age_ratio_b", "age_ratio_b_ci_low",
           "age_ratio_b_ci_high", "age_decision_b", "fill_a_fresh", "fill_b_fresh",
           "cache_bound_cells", "machine_s", "detail"]

METHOD = ("Does the ranking survive aging (aging_ranking.csv): for every pair of file "
          "systems, aged level and workload, on the iterations all four cells ran (a and b, "
          "aged and fresh side: the aged level's fresh twin for a workload that reads the "
          "aged tree, else a plain fresh file system), the ratios a/b fresh and aged (the "
          "verdicts' pairs) and their quotient, the interaction: a paired t interval on the "
          "per-iteration contrasts log a_aged − log b_aged − log a_fresh + log b_fresh, "
          "Bonferroni-adjusted over every interaction of the campaign, decided by the "
          "verdicts' rule and margin: the ranking changes (both orders decided, the other "
          "way aged), the lead disappears (decided fresh, the same aged), the gap changes "
          "(interaction shown, the aged order known), the same (interaction inside the "
          "margin), the ranking holds (the same order at both levels) or unresolved; a row "
          "with a cache-bound cell says so first.")


@dataclass(frozen=True)
class Side:
    """One cell of a question: a file system's variant at a level of age."""

    base: str
    level: str
    rest: tuple[tuple[str, str], ...]  # the target's other levels (fstrim=1 …)
    target: str


def aging_ranking(runs: pd.DataFrame, cells: pd.DataFrame, pairwise: Sequence[Pair],
                  margin: float, declared: list[str] | None = None,
                  summary: pd.DataFrame | None = None, records: Sequence[Any] = (),
                  alpha: float = ALPHA) -> pd.DataFrame:
    """stats/aging_ranking.csv (module doc); empty without an `age` factor of two or more
    levels on two or more file systems. `declared`: the levels in the campaign's order."""
    if AGE not in cells or runs.empty or not pairwise:
        return pd.DataFrame(columns=COLUMNS)
    questions: dict[tuple[str, str, str], list[Pair]] = {}
    for pair in pairwise:
        if pair.primary:
            questions.setdefault(pair.question, []).append(pair)
    bound = _cache_bound(summary)
    fills = _fills(records)
    planned = []
    for (workload, op, metric), asked in questions.items():
        sides = _sides(cells, workload)
        values = _values(runs, workload, op, metric)
        seen = views(asked)
        for rest in sorted({s.rest for s in sides.values()}):
            found = {(s.base, s.level): s.target for s in sides.values() if s.rest == rest}
            bases = sorted({base for base, _ in found})
            first = next(iter(_plain_levels(found, declared)), "")
            for level in _aged_levels(found, declared):
                for i, a in enumerate(bases):
                    for b in bases[i + 1:]:
                        reference = _reference(found, values, a, b, level, first)
                        if reference is None:
                            continue
                        four = (found[(a, reference)], found[(b, reference)],
                                found[(a, level)], found[(b, level)])
                        planned.append((workload, op, metric, a, b, level, reference, rest,
                                        four, values, seen,
                                        [t for t in four if (t, workload, op, metric)
                                         in bound], fills))
    family = max(1, len(planned))
    return pd.DataFrame([_row(item, margin, alpha, family) for item in planned],
                        columns=COLUMNS)


def _sides(cells: pd.DataFrame, workload: str) -> dict[str, Side]:
    """The cells of one workload by target: each one's file system, level and other
    levels."""
    rows = cells[cells["workload"].astype(str) == workload]
    others = [c for c in cells.columns if c not in ("target", "workload", "target_base",
                                                    "job", AGE)]
    out = {}
    for row in rows.to_dict("records"):
        level = row.get(AGE)
        if not isinstance(level, str) or not level:
            continue
        rest = tuple((c, str(row[c])) for c in others
                     if isinstance(row.get(c), str) and row[c] != "")
        out[str(row["target"])] = Side(str(row["target_base"]), level, rest,
                                       str(row["target"]))
    return out


def _plain_levels(found: dict[tuple[str, str], str], declared: list[str] | None) -> list[str]:
    """The levels present, twins aside, in the campaign's order."""
    present = {level for _, level in found if not twinned(level)}
    levels = [level for level in declared or [] if level in present]
    return levels + sorted(present - set(levels))


def _aged_levels(found: dict[tuple[str, str], str], declared: list[str] | None) -> list[str]:
    """The aged levels present, in the campaign's order: every level but fresh (without
    fresh and twins, every level but the first, the reference)."""
    levels = _plain_levels(found, declared)
    if FRESH in levels or any(twinned(level) for _, level in found):
        return [level for level in levels if level != FRESH]
    return levels[1:]


def _reference(found: dict[tuple[str, str], str], values: dict[str, dict[int, float]],
               a: str, b: str, level: str, first: str) -> str | None:
    """The fresh side of `level` for a and b: its twin where both ran it, else fresh
    (else the first level), None when a side is missing."""
    for reference in (twin_level(level), FRESH, first):
        if reference == level:
            continue
        keys = [(a, reference), (b, reference), (a, level), (b, level)]
        if all(key in found and values.get(found[key]) for key in keys):
            return reference
    return None


def _values(runs: pd.DataFrame, workload: str, op: str, metric: str
            ) -> dict[str, dict[int, float]]:
    """{target: {iteration: value}} of one question (the runs' values, sections aside)."""
    rows = runs[(runs["workload"].astype(str) == workload) & (runs["op"].astype(str) == op)
                & (runs["metric"].astype(str) == metric)]
    if "sample" in rows:
        rows = rows[rows["sample"] == 0]
    out: dict[str, dict[int, float]] = {}
    for target, iteration, value in zip(rows["target"].astype(str), rows["iteration"],
                                        rows["value"], strict=True):
        if value == value and float(value) > 0:
            out.setdefault(target, {})[int(iteration)] = float(value)
    return out


def _cache_bound(summary: pd.DataFrame | None) -> set[tuple[str, str, str, str]]:
    """(target, workload, op, metric) of every cache-bound cell of summary.csv."""
    if summary is None or summary.empty or "cache_bound" not in summary:
        return set()
    marked = summary[summary["cache_bound"].fillna(False).astype(bool)]
    return {(str(r.target), str(r.workload), str(r.op), str(r.metric))
            for r in marked.itertuples()}


def _fills(records: Sequence[Any]) -> dict[tuple[str, str], dict[int, float]]:
    """(target, workload) -> {iteration: fill at the run's start}."""
    out: dict[tuple[str, str], dict[int, float]] = {}
    for record in records:
        fill = run_fill(record)
        if fill is not None:
            out.setdefault((str(record.target), str(record.workload)), {})[
                int(record.iteration)] = fill
    return out


def _on(values: dict[int, float], iterations: set[int]) -> dict[int, float]:
    return {i: v for i, v in values.items() if i in iterations}


def _pair(seen: dict[tuple[str, str], Pair], x: str, y: str, values: dict[str, dict[int, float]],
          common: set[int], margin: float, better: str) -> Pair:
    """x against y, the verdicts' own pair; decided again (its family and margin) on the
    common iterations when it rests on others."""
    found = seen.get((x, y))
    own = set(values.get(x, {})) & set(values.get(y, {}))
    if found is not None and own == common and found.n_pairs == len(common):
        return found
    family = found.family if found is not None else max(p.family for p in seen.values())
    return decide_pair(_on(values.get(x, {}), common), _on(values.get(y, {}), common),
                       better, margin, paired=True, family=family)


def _row(item: tuple[Any, ...], margin: float, alpha: float, family: int) -> dict[str, Any]:
    (workload, op, metric, a, b, level, reference, rest, four, values, seen, bound,
     fills) = item
    fresh_a, fresh_b, aged_a, aged_b = four
    ran = [set(values.get(target, {})) for target in four]
    common = set.intersection(*ran)
    better = next(iter(seen.values())).better if seen else HIGHER
    fresh = _pair(seen, fresh_a, fresh_b, values, common, margin, better)
    aged = _pair(seen, aged_a, aged_b, values, common, margin, better)
    age_a = _pair(seen, aged_a, fresh_a, values, common, margin, better)
    age_b = _pair(seen, aged_b, fresh_b, values, common, margin, better)
    quotients = {i: values[aged_a][i] / values[aged_b][i] for i in common}
    base = {i: values[fresh_a][i] / values[fresh_b][i] for i in common}
    answer = decide_pair(quotients, base, better, margin, paired=True, alpha=alpha,
                         family=family)
    word = decide(answer.decision, fresh.decision, aged.decision)

    def fill(target: str) -> float:
        found = [f for i, f in fills.get((target, workload), {}).items() if i in common]
        return round(100 * sum(found) / len(found), 2) if found else math.nan

    nan = math.nan
    row = {"workload": workload, "metric": metric, "a": a, "b": b, "age": level,
           "ratio_fresh": fresh.ratio, "ratio_fresh_ci_low": fresh.ratio_ci_low,
           "ratio_fresh_ci_high": fresh.ratio_ci_high, "ratio_aged": aged.ratio,
           "ratio_aged_ci_low": aged.ratio_ci_low, "ratio_aged_ci_high": aged.ratio_ci_high,
           "interaction": answer.ratio, "interaction_ci_low": answer.ratio_ci_low,
           "interaction_ci_high": answer.ratio_ci_high,
           "decision": f"{CACHE_BOUND}: {word}" if bound else word,
           "cache_bound": bool(bound), "fill_a": fill(aged_a), "fill_b": fill(aged_b),
           "op": op, "better": better, "reference": reference,
           "levels": " ".join(f"{f}={v}" for f, v in rest), "fresh_decision": fresh.decision,
           "aged_decision": aged.decision, "interaction_decision": answer.decision,
           "interaction_p_adj": answer.p_adj,
           "interaction_needs": answer.needs_iterations if answer.decision == UNRESOLVED
           else nan, "alpha": alpha / family, "family": family, "n": len(common),
           "left_out": len(set.union(*ran) - common),
           **_age_columns("a", age_a), **_age_columns("b", age_b),
           "fill_a_fresh": fill(fresh_a), "fill_b_fresh": fill(fresh_b),
           "cache_bound_cells": ", ".join(bound),
           # the machine seconds of the four cells' runs (their agings included)
           "machine_s": fresh.machine_s + aged.machine_s}
    row["detail"] = detail(row, answer.note)
    return row


def _age_columns(side: str, pair: Pair) -> dict[str, Any]:
    return {f"age_ratio_{side}": pair.ratio, f"age_ratio_{side}_ci_low": pair.ratio_ci_low,
            f"age_ratio_{side}_ci_high": pair.ratio_ci_high,
            f"age_decision_{side}": pair.decision or UNRESOLVED}


def _step(runs: pd.DataFrame, cells: pd.DataFrame, pairs: list[Pair],
          settings: CampaignSettings, records: list[Any], summary: pd.DataFrame
          ) -> tuple[pd.DataFrame, list[dict[str, str]]]:
    """(aging_ranking.csv, the verdicts' first rows: the question, its answers, the
    labels)."""
    table = aging_ranking(runs, cells, pairs, settings.margin, settings.levels.get(AGE, []),
                          summary, records)
    return table, aging_verdicts(table, aging_labels(records, settings))


STEP = Step("aging_ranking", reads=("runs", "cells", "pairs", "settings", "records",
                                    "summary"),
            makes=("aging_ranking", "aging_rows"), run=_step, method=METHOD,
            tables={"aging_ranking": "aging_ranking.csv"},
            optional=frozenset({"aging_ranking"}),
            stated=lambda done: not done["aging_ranking"].empty)
