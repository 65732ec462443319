"""Would this sitting's answers hold on a repeat here? Each primary pair's repeat interval
(analysis.sittings.repeat) from its host's between-sitting spread, which a campaign
recorded with --catalogue read from the catalogue as it started (environment.json
"sitting" → "spread"): pairwise.csv's repeat_low, repeat_high and repeat_sittings, and a
sentence per primary answer in the verdicts."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from fslab.analysis.pairs.pair import UNRESOLVED, Pair, decide
from fslab.analysis.sittings.repeat import SittingSpread, as_percent, repeat_interval

HOLDS, MAY_NOT = "holds on a repeat here", "may not hold on a repeat"
NO_HISTORY = ("Repeats: the catalogue holds no two sittings of one campaign on {host}, so "
              "nothing says yet whether these answers hold on a repeat here; run this "
              "campaign again as a new sitting (fslab run --again DIR --catalogue C) to "
              "make that history.")


def spread_of(recorded: dict[str, Any]) -> SittingSpread:
    """The SittingSpread a run recorded (environment.json "sitting" → "spread")."""
    return SittingSpread(float(recorded["tau"]), float(recorded["tau_df"]),
                  int(recorded["sittings"]), float(recorded.get("raw_tau", math.nan)),
                  float(recorded.get("df", 0.0)))


def with_repeat(pairs: Sequence[Pair], spread: SittingSpread) -> list[Pair]:
    """The pairs with each primary one's repeat interval (repeat_low, repeat_high) and the
    earlier sittings it rests on (repeat_sittings; 0 without history: no interval)."""
    out = []
    for pair in pairs:
        if pair.primary and spread.sittings and pair.se_log > 0:
            low, high = repeat_interval(math.log(pair.ratio), pair.se_log, pair.df, spread,
                                        pair.alpha)
            pair = replace(pair, repeat_low=math.exp(low), repeat_high=math.exp(high),
                           repeat_sittings=spread.sittings)
        out.append(pair)
    return out


def on_a_repeat(pair: Pair) -> str:
    """The rule's answer read off the pair's repeat interval (analysis.pairs.pair.decide
    on the same pair with that interval): what a repeat here would decide."""
    again = replace(pair, ratio_ci_low=pair.repeat_low, ratio_ci_high=pair.repeat_high,
                    significant=pair.repeat_low > 1 or pair.repeat_high < 1)
    return decide(again, pair.margin, needs=False).decision


def repeat_words(pair: Pair, spread: SittingSpread) -> str:
    """'ext4 / xfs on a repeat: 1.05–1.40× (5 earlier sittings) — holds on a repeat here'."""
    from fslab.core.units import format_bound

    verdict = HOLDS if on_a_repeat(pair) == pair.decision else (
        f"{MAY_NOT}: sittings here differ by ±{as_percent(spread.tau):.0f} %")
    return (f"{pair.a} / {pair.b} on a repeat: {format_bound(pair.repeat_low)}–"
            f"{format_bound(pair.repeat_high)}× ({pair.repeat_sittings} earlier sittings) — "
            f"{verdict}")


def repeat_rows(rows: list[dict[str, str]], pairs: Sequence[Pair], spread: SittingSpread,
                host: str) -> list[dict[str, str]]:
    """The verdicts' rows with, after each workload's, a sentence per decided primary
    pair on whether it holds on a repeat (or one line saying there is no history yet)."""
    if not spread.sittings:
        return [*rows, {"kind": "repeats", "workload": "", "text": NO_HISTORY.format(host=host)}]
    said: dict[str, list[dict[str, str]]] = {}
    for pair in pairs:
        if pair.primary and pair.decision not in ("", UNRESOLVED) and \
                math.isfinite(pair.repeat_low):
            said.setdefault(pair.workload, []).append(
                {"kind": "repeat", "workload": pair.workload, "text": repeat_words(pair, spread)})
    out: list[dict[str, str]] = []
    for index, row in enumerate(rows):
        out.append(row)
        workload = row.get("workload", "")
        following = rows[index + 1]["workload"] if index + 1 < len(rows) else None
        if workload in said and following != workload:
            out += said.pop(workload)
    return out + [line for lines in said.values() for line in lines]
