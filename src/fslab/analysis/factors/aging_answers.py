"""The words of "does the ranking survive aging?" (analysis/factors/aging_ranking.py):
the rule that turns a row's interaction and its two orders into one decision, the
sentence each row is said in, and the verdicts' part that says them all — one table of
words, the issue's own ("the ranking changes" only with the aged order decided the other
way, "the lead disappears" when fresh is decided and aged the same within the margin,
"the gap changes" only with the aged order known), and a cache-bound row never answering
without saying so."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from fslab.analysis.pairs.model import ALPHA
from fslab.analysis.pairs.pair import EQUIVALENT, FASTER, SLOWER, UNRESOLVED
from fslab.core.age_factor import twinned
from fslab.core.metrics import HIGHER, title
from fslab.core.units import format_bound, turned

CHANGES, LEAD_GONE, GAP, SAME, HOLDS = ("the ranking changes", "the lead disappears",
                                        "the gap changes", "the same", "the ranking holds")
DECISIONS = (CHANGES, LEAD_GONE, GAP, SAME, HOLDS, UNRESOLVED)
CACHE_BOUND = "cache-bound"  # a row's decision begins with this when a cell is
HEADING = "Does the ranking survive aging?"
ORDERED = (FASTER, SLOWER)


def decide(interaction: str, fresh: str, aged: str) -> str:
    """The module doc's rule: the interaction's decision and a's relation to b at each
    level (faster, slower, equivalent, unresolved) to one of DECISIONS."""
    shown = interaction in ORDERED
    if shown and fresh in ORDERED and aged in ORDERED and fresh != aged:
        return CHANGES
    if fresh in ORDERED and aged == EQUIVALENT:
        return LEAD_GONE
    if shown and aged in ORDERED and fresh in (aged, EQUIVALENT, UNRESOLVED):
        return GAP
    if interaction == EQUIVALENT:
        return SAME
    if not shown and fresh == aged and fresh != UNRESOLVED:
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
    """The decision in a sentence: which way, the three ratios behind it, each file
    system's aged/fresh ratio, the iterations and the fills."""
    a, b, level = row["a"], row["b"], row["age"]
    fresh = _relation(a, b, row["fresh_decision"])
    aged = _relation(a, b, row["aged_decision"])
    what = row["decision"].removeprefix(f"{CACHE_BOUND}: ")
    if what == CHANGES:
        head = f"the ranking changes: {fresh} fresh, {aged} at {level}"
    elif what == LEAD_GONE:
        head = f"the lead disappears: {fresh} fresh, the same within the margin at {level}"
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
    if row["cache_bound"]:
        head = (f"{CACHE_BOUND} ({row['cache_bound_cells']}: the page cache, not the file "
                f"system, answered) — {head}")
    fresh_ratio, aged_ratio, quotient = (
        _ratio(row[name], row[f"{name}_ci_low"], row[f"{name}_ci_high"])
        for name in ("ratio_fresh", "ratio_aged", "interaction"))
    text = (f"{head}; {a}/{b} fresh {fresh_ratio}, at {level} {aged_ratio}, "
            f"interaction {quotient}")
    needs = row["interaction_needs"]
    if needs == needs:
        text += ("; the interaction would need more than 100 iterations" if needs == math.inf
                 else f"; the interaction needs about {needs:.0f} iterations")
    text += "; aged/fresh " + ", ".join(
        f"{name} {_ratio(row[f'age_ratio_{side}'], row[f'age_ratio_{side}_ci_low'], row[f'age_ratio_{side}_ci_high'])} "  # noqa: E501
        f"({row[f'age_decision_{side}']})" for side, name in (("a", a), ("b", b)))
    left = f", {row['left_out']} left out (a cell did not run)" if row["left_out"] else ""
    text += f"; on {row['n']} iterations{left}"
    if row["fill_a"] == row["fill_a"] or row["fill_b"] == row["fill_b"]:
        text += (f"; runs began at {_percent(row['fill_a'])} ({a}) and "
                 f"{_percent(row['fill_b'])} ({b}) of the space root can write")
    return text + (f"; {note}" if note else "")


def _percent(value: float) -> str:
    return "–" if value != value else f"{value:.1f} %"


def _gain(row: dict[str, Any]) -> tuple[float, float, float]:
    """The interaction as the gaining side's factor (≥ 1 in the metric's direction)."""
    value, low, high = row["interaction"], row["interaction_ci_low"], row["interaction_ci_high"]
    if (value > 1) == (row["better"] == HIGHER):
        return value, low, high
    return turned(value, low, high)


def where(row: Any) -> str:
    """'thesis-80 (against its fresh twin)' or 'thesis-99 fstrim=0': the level a row is at
    and its fresh side, as the verdicts name it."""
    levels = f" {row.levels}" if isinstance(row.levels, str) and row.levels else ""
    against = " (against its fresh twin)" if twinned(str(row.reference)) else ""
    return f"{row.age}{levels}{against}"


def aging_verdicts(table: pd.DataFrame, labels: list[str]) -> list[dict[str, str]]:
    """The verdicts' first part: the heading, how the interactions were adjusted, one
    sentence per pair, level and workload, and the labels (aging_labels)."""
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
        "verdicts' own pairs, on the iterations all four cells ran. "
        + ", ".join(f"{name}: {counts[name]}" for name in sorted(counts.index, key=_order))
        + " (stats/aging_ranking.csv)."))]
    for row in table.itertuples():
        rows.append(_verdict("aging", str(row.workload), (
            f"{row.workload} {title(str(row.metric))}, {row.a} vs {row.b} at "
            f"{where(row)}: {row.detail}")))
    rows += [_verdict("aging_label", "", line) for line in labels]
    return rows


def _verdict(kind: str, workload: str, text: str) -> dict[str, str]:
    return {"kind": kind, "workload": workload, "text": text}


def _order(decision: str) -> tuple[int, str]:
    """A decision's place in DECISIONS (a cache-bound one after the others)."""
    word = decision.removeprefix(f"{CACHE_BOUND}: ")
    return (DECISIONS.index(word) if word in DECISIONS else len(DECISIONS)) + \
        len(DECISIONS) * (word != decision), decision
