"""Does the ranking survive aging? For every pair of file systems and every aged level of
the `age` factor, on each workload's primary metric: the ratio fresh, the ratio aged and
their quotient, the interaction, decided.

- The ratios fresh (a at the reference level over b) and aged (a over b at the aged level)
  are the verdicts' own pairs, read off pairwise.csv as they are (their interval, their
  decision: one pair never gets two answers).
- The interaction is (a/b aged) / (a/b fresh). A fresh file system per iteration puts all
  four cells of a pair and level in the same iteration (a block: age is a factor of the
  targets, its levels measured in the same rounds), so each iteration gives one contrast,
  log a_aged − log b_aged − log a_fresh + log b_fresh, and the interaction's interval is
  the paired t on those contrasts (the pairs' one decision rule and margin:
  analysis.pairs.pair), Bonferroni-adjusted over every interaction of the campaign
  (workloads × pairs × aged levels). Its coverage and its false "the ranking changes"
  rate are checked on the simulator with known interactions (benchmarks/aging_ranking).

The decision, from the interaction and the two relations (the verdicts' faster, slower,
the same or unresolved for a against b at each level):
- "the ranking changes": the interaction excludes 1 and the relations, both decided, differ
  (a ahead fresh, b ahead aged; or one ahead and then the same);
- "the gap changes": the interaction excludes 1, the order the same or not known aged;
- "the same": the interaction lies inside the margin — aging changes both alike;
- "the ranking holds": the interaction not decided, the relations decided and equal;
- "unresolved": anything else.
A false "the ranking changes" needs the interaction's adjusted test to reject: at most
5 % of campaigns where no interaction exists.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pandas as pd

from fslab.analysis.pairs.decisions import decide_pair
from fslab.analysis.pairs.model import ALPHA
from fslab.analysis.step import Step
from fslab.core.campaign_settings import CampaignSettings
from fslab.core.metrics import HIGHER, title
from fslab.core.pair import EQUIVALENT, FASTER, SLOWER, UNRESOLVED, Pair, views
from fslab.core.units import format_bound, turned

AGE, FRESH = "age", "fresh"  # the factor and its reference level (workloads/aging_levels.py)
COLUMNS = ["workload", "metric", "a", "b", "age", "ratio_fresh", "ratio_fresh_ci_low",
           "ratio_fresh_ci_high", "ratio_aged", "ratio_aged_ci_low", "ratio_aged_ci_high",
           "interaction", "interaction_ci_low", "interaction_ci_high", "decision",
           # beyond the contract: what the decision rests on
           "op", "better", "reference", "fresh_decision", "aged_decision",
           "interaction_decision", "interaction_p_adj", "alpha", "family", "n",
           "machine_s", "detail"]
CHANGES, GAP, SAME, HOLDS = ("the ranking changes", "the gap changes", "the same",
                             "the ranking holds")
DECISIONS = (CHANGES, GAP, SAME, HOLDS, UNRESOLVED)
HEADING = "Does the ranking survive aging?"

METHOD = ("Does the ranking survive aging (aging_ranking.csv): for every pair of file "
          "systems, aged level and workload, the ratio a/b fresh and aged are the verdicts' "
          "pairs; their quotient, the interaction, has a paired t interval on the "
          "per-iteration contrasts log a_aged − log b_aged − log a_fresh + log b_fresh (the "
          "four cells of a pair run in the same iteration), Bonferroni-adjusted over every "
          "interaction of the campaign, decided by the verdicts' rule and margin: the "
          "ranking changes (interaction shown, the order differs), the gap changes "
          "(interaction shown, the same order), the same (interaction inside the margin), "
          "the ranking holds (interaction open, the same order at both levels) or "
          "unresolved.")


def aging_ranking(runs: pd.DataFrame, cells: pd.DataFrame, pairwise: Sequence[Pair],
                  margin: float, declared: list[str] | None = None,
                  alpha: float = ALPHA) -> pd.DataFrame:
    """stats/aging_ranking.csv (module doc); empty without an `age` factor of two or more
    levels on two or more file systems. `declared`: the levels in the campaign's order."""
    if AGE not in cells or runs.empty or not pairwise:
        return pd.DataFrame(columns=COLUMNS)
    where = {str(t): (str(base), str(level)) for t, base, level in zip(
        cells["target"], cells["target_base"], cells[AGE], strict=True)
        if isinstance(level, str) and level}
    found = {level for _, level in where.values()}
    levels = [level for level in declared or [] if level in found]
    levels += sorted(found - set(levels))
    reference = FRESH if FRESH in levels else (levels[0] if levels else "")
    aged = [level for level in levels if level != reference]
    variant = {place: name for name, place in where.items()}
    questions: dict[tuple[str, str, str], list[Pair]] = {}
    for pair in pairwise:
        if pair.primary:
            questions.setdefault(pair.question, []).append(pair)
    bases = sorted({base for base, level in where.values() if level == reference})
    planned = []
    for (workload, op, metric), asked in questions.items():
        seen = views(asked)
        values = _values(runs, workload, op, metric)
        for i, a in enumerate(bases):
            for b in bases[i + 1:]:
                fresh_a, fresh_b = variant[(a, reference)], variant[(b, reference)]
                fresh = seen.get((fresh_a, fresh_b))
                for level in aged:
                    va, vb = variant.get((a, level)), variant.get((b, level))
                    if va is None or vb is None or fresh is None:
                        continue
                    planned.append((workload, op, metric, a, b, level, fresh,
                                    seen.get((va, vb)), _quotients(values, va, vb),
                                    _quotients(values, fresh_a, fresh_b)))
    family = max(1, len(planned))
    out = [_row(item, reference, margin, alpha, family) for item in planned]
    return pd.DataFrame(out, columns=COLUMNS)


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


def _quotients(values: dict[str, dict[int, float]], a: str, b: str) -> dict[int, float]:
    """{iteration: a/b} over the iterations both ran."""
    first, second = values.get(a, {}), values.get(b, {})
    return {i: first[i] / second[i] for i in sorted(set(first) & set(second))}


def _row(item: tuple[Any, ...], reference: str, margin: float, alpha: float,
         family: int) -> dict[str, Any]:
    workload, op, metric, a, b, level, fresh, aged, q_aged, q_fresh = item
    nan = math.nan
    better = fresh.better
    answer = decide_pair(q_aged, q_fresh, better, margin, paired=True, alpha=alpha,
                         family=family)
    aged_word = aged.decision if aged is not None else UNRESOLVED
    decision = decide(answer.decision, fresh.decision, aged_word)
    row = {"workload": workload, "metric": metric, "a": a, "b": b, "age": level,
           "ratio_fresh": fresh.ratio, "ratio_fresh_ci_low": fresh.ratio_ci_low,
           "ratio_fresh_ci_high": fresh.ratio_ci_high,
           "ratio_aged": aged.ratio if aged is not None else nan,
           "ratio_aged_ci_low": aged.ratio_ci_low if aged is not None else nan,
           "ratio_aged_ci_high": aged.ratio_ci_high if aged is not None else nan,
           "interaction": answer.ratio, "interaction_ci_low": answer.ratio_ci_low,
           "interaction_ci_high": answer.ratio_ci_high, "decision": decision, "op": op,
           "better": better, "reference": reference, "fresh_decision": fresh.decision,
           "aged_decision": aged_word, "interaction_decision": answer.decision,
           "interaction_p_adj": answer.p_adj, "alpha": alpha / family, "family": family,
           "n": answer.n_pairs if answer.compared else len(set(q_aged) & set(q_fresh)),
           # the machine seconds of the four cells' runs (their agings included)
           "machine_s": fresh.machine_s + (aged.machine_s if aged is not None else nan)}
    row["detail"] = detail(row, answer.note)
    return row


def decide(interaction: str, fresh: str, aged: str) -> str:
    """The module doc's rule: the interaction's decision and a's relation to b at each
    level (faster, slower, equivalent, unresolved) to one of DECISIONS."""
    if interaction in (FASTER, SLOWER):
        both = UNRESOLVED not in (fresh, aged)
        return CHANGES if both and fresh != aged else GAP
    if interaction == EQUIVALENT:
        return SAME
    if UNRESOLVED not in (fresh, aged) and fresh == aged:
        return HOLDS
    return UNRESOLVED


def _relation(a: str, b: str, decision: str) -> str:
    return {FASTER: f"{a} ahead", SLOWER: f"{b} ahead", EQUIVALENT: "the same"}.get(
        decision, "not resolved")


def _ratio(value: float, low: float, high: float) -> str:
    if value != value:
        return "not measured"
    interval = (f" (CI {format_bound(low)}–{format_bound(high)}×)"
                if low == low and high == high else " (no interval)")
    return f"{value:.3g}×{interval}"


def detail(row: dict[str, Any], note: str = "") -> str:
    """The decision in a sentence: which way, and the three ratios behind it."""
    a, b, level = row["a"], row["b"], row["age"]
    fresh = _relation(a, b, row["fresh_decision"])
    aged = _relation(a, b, row["aged_decision"])
    what = row["decision"]
    if what == CHANGES:
        head = f"the ranking changes: {fresh} fresh, {aged} at {level}"
    elif what == GAP:
        gains = (row["interaction"] > 1) == (row["better"] == HIGHER)
        head = (f"the gap changes: {a if gains else b} gains {_ratio(*_gain(row))} with "
                f"age ({fresh} fresh, {aged} at {level})")
    elif what == HOLDS:
        head = f"the ranking holds: {fresh} fresh and at {level}"
    elif what == SAME:
        head = f"the same: aging changes {a} and {b} alike ({fresh} fresh, {aged} at {level})"
    else:
        head = f"unresolved ({fresh} fresh, {aged} at {level})"
    fresh_ratio, aged_ratio, quotient = (
        _ratio(row[name], row[f"{name}_ci_low"], row[f"{name}_ci_high"])
        for name in ("ratio_fresh", "ratio_aged", "interaction"))
    text = (f"{head}; {a}/{b} fresh {fresh_ratio}, at {level} {aged_ratio}, "
            f"interaction {quotient}")
    return text + (f"; {note}" if note else "")


def _gain(row: dict[str, Any]) -> tuple[float, float, float]:
    """The interaction as the gaining side's factor (≥ 1 in the metric's direction)."""
    value, low, high = row["interaction"], row["interaction_ci_low"], row["interaction_ci_high"]
    if (value > 1) == (row["better"] == HIGHER):
        return value, low, high
    return turned(value, low, high)


def aging_verdicts(table: pd.DataFrame, labels: list[str]) -> list[dict[str, str]]:
    """The verdicts' first part: the heading, how the interactions were adjusted, one
    sentence per pair, level and workload, and the labels (aging/outcomes)."""
    if table.empty:
        return ([_verdict("aging_heading", "", HEADING), _verdict(
            "aging_family", "", "No two file systems ran at the reference level and an aged "
            "one: nothing to rank.")] + [_verdict("aging_label", "", line) for line in labels]
                if labels else [])
    family = int(table["family"].max())
    level = 100 * (1 - ALPHA / family)
    counts = table["decision"].value_counts()
    rows = [_verdict("aging_heading", "", HEADING), _verdict("aging_family", "", (
        f"{family} interaction{'s' * (family != 1)} (workloads × pairs of file systems × "
        f"aged levels), each a {level:.4g} % interval: Bonferroni over all of them, so "
        "all hold at once with 95 % confidence; the ratios fresh and aged are the "
        "verdicts' own pairs. " + ", ".join(f"{name}: {counts.get(name, 0)}"
                                            for name in DECISIONS if counts.get(name, 0))
        + " (stats/aging_ranking.csv)."))]
    for row in table.itertuples():
        rows.append(_verdict("aging", str(row.workload), (
            f"{row.workload} {title(str(row.metric))}, {row.a} vs {row.b} at {row.age}: "
            f"{row.detail}")))
    rows += [_verdict("aging_label", "", line) for line in labels]
    return rows


def _verdict(kind: str, workload: str, text: str) -> dict[str, str]:
    return {"kind": kind, "workload": workload, "text": text}


def aging_labels(records: list[Any], settings: CampaignSettings) -> list[str]:
    """One line each for what the reader must know of the agings behind the answer: images
    aged once and reused, a level that ran out of space before its utilisation (or
    stopped short, its runs failed), room made for the runs' files, and what this machine
    cannot reproduce of a published aging (run.json: each place's `aging`)."""
    places: dict[tuple[str, int], dict[str, Any]] = {}
    failed: dict[str, set[int]] = {}
    for record in records:
        aging = described_aging(record.target_description)
        if isinstance(aging, dict):
            places.setdefault((record.target, record.iteration), aging)
        if record.failure == "aging":
            failed.setdefault(record.target, set()).add(record.iteration)
    lines = []
    if settings.table.get("age_reuse"):
        lines.append("Aged images reused (age_reuse = true): each file system × level was "
                     "aged once and every run started from a copy of that image, so these "
                     "intervals hold for those aged images only, not for another aging of "
                     "the same level.")
    elif settings.fresh == "campaign" and places:
        lines.append("One file system per target × level for the whole campaign (fresh = "
                     "\"campaign\"): each was aged once, so these intervals hold for those "
                     "agings only.")
    short: dict[str, list[dict[str, Any]]] = {}
    room: dict[str, list[float]] = {}
    for (target, _), aging in sorted(places.items()):
        if aging.get("short") == "out of space":
            short.setdefault(target, []).append(aging)
        used = (aging.get("released") or {}).get("used_after")
        if isinstance(used, int | float):
            room.setdefault(target, []).append(float(used))
    for target, agings in short.items():
        most = [float(a["used_max"]) for a in agings if a.get("used_max") is not None]
        lines.append(f"{target} ran out of space before its target utilisation of "
                     f"{float(agings[0]['utilization']):.0%} in {len(agings)} aging"
                     f"{'s' * (len(agings) != 1)} (at {min(most):.1%}–{max(most):.1%} used): "
                     "measured as full as that file system gets.")
    for target, iterations in sorted(failed.items()):
        lines.append(f"{target}: the aging stopped short of its level's utilisation in "
                     f"{len(iterations)} iteration{'s' * (len(iterations) != 1)}; those "
                     "runs failed (failure kind aging, the reason in the failed runs).")
    for target, used in sorted(room.items()):
        span = (f"{min(used):.0%}" if round(min(used), 2) == round(max(used), 2)
                else f"{min(used):.0%}–{max(used):.0%}")
        lines.append(f"{target}: random aged files were deleted to make room for the runs' "
                     f"files (the thesis's protocol, section 6.2): its runs began at {span} "
                     "used.")
    said: dict[str, list[str]] = {}  # what cannot be reproduced here -> the levels
    for aging in places.values():
        for line in aging.get("not_here") or []:
            levels = said.setdefault(str(line), [])
            if aging.get("level") not in levels:
                levels.append(str(aging.get("level")))
    return lines + [f"{', '.join(levels)}: {line}" for line, levels in said.items()]


def described_aging(description: Any) -> dict[str, Any] | None:
    """A place's `aging` as its description holds it (run/aging_places.py: the level, the
    seed, how it went), a dict or a record with `details`; None for any other place."""
    found = description.get("aging") if isinstance(description, dict) else \
        (getattr(description, "details", None) or {}).get("aging")
    return found if isinstance(found, dict) else None


def _step(runs: pd.DataFrame, cells: pd.DataFrame, pairs: list[Pair],
          settings: CampaignSettings, records: list[Any]
          ) -> tuple[pd.DataFrame, list[dict[str, str]]]:
    """(aging_ranking.csv, the verdicts' first rows: the question, its answers, the
    labels)."""
    table = aging_ranking(runs, cells, pairs, settings.margin, settings.levels.get(AGE, []))
    return table, aging_verdicts(table, aging_labels(records, settings))


STEP = Step("aging_ranking", reads=("runs", "cells", "pairs", "settings", "records"),
            makes=("aging_ranking", "aging_rows"), run=_step, method=METHOD,
            tables={"aging_ranking": "aging_ranking.csv"},
            optional=frozenset({"aging_ranking"}),
            stated=lambda done: not done["aging_ranking"].empty)
