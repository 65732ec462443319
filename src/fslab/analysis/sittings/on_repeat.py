"""Would this sitting's answers hold on a repeat here? Each primary pair's repeat interval
(analysis.sittings.repeat) from its host's between-sitting spread, which a campaign
recorded with --catalogue read from the catalogue as it started (environment.json
"sitting" → "spread"): pairwise.csv's repeat_low, repeat_high and repeat_sittings, and a
sentence per primary answer in the verdicts."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from fslab.analysis.pairs.decisions import UNRESOLVED, decided
from fslab.analysis.sittings.repeat import Spread, as_percent, repeat_interval
from fslab.core.metrics import HIGHER, METRIC_UNITS

HOLDS, MAY_NOT = "holds on a repeat here", "may not hold on a repeat"
NO_HISTORY = ("Repeats: the catalogue holds no two sittings of one campaign on {host}, so "
              "nothing says yet whether these answers hold on a repeat here; run this "
              "campaign again as a new sitting (fslab run --again DIR --catalogue C) to "
              "make that history.")


def spread_of(recorded: dict[str, Any]) -> Spread:
    """The Spread a run recorded (environment.json "sitting" → "spread")."""
    return Spread(float(recorded["tau"]), float(recorded["tau_df"]),
                  int(recorded["sittings"]), float(recorded.get("raw_tau", math.nan)),
                  float(recorded.get("df", 0.0)))


def with_repeat(pairwise: pd.DataFrame, spread: Spread) -> pd.DataFrame:
    """pairwise.csv with repeat_low, repeat_high and repeat_sittings: each primary pair's
    repeat interval (none without history: repeat_sittings 0)."""
    out = pairwise.copy()
    lows, highs = [], []
    for _, row in out.iterrows():
        low = high = math.nan
        if bool(row["primary"]) and spread.sittings and float(row["se_log"]) > 0:
            low, high = repeat_interval(math.log(float(row["ratio"])), float(row["se_log"]),
                                        float(row["df"]), spread, float(row["alpha"]))
        lows.append(math.exp(low))
        highs.append(math.exp(high))
    out["repeat_low"], out["repeat_high"] = lows, highs
    out["repeat_sittings"] = [spread.sittings if bool(p) else 0 for p in out["primary"]]
    return out


def repeat_words(row: pd.Series, spread: Spread) -> str:
    """'ext4 vs xfs on a repeat here: 1.05–1.40× — holds on a repeat here' (or may not)."""
    from fslab.core.units import format_bound

    better = METRIC_UNITS.get(str(row["metric"]), ("", HIGHER))[1]
    low, high = float(row["repeat_low"]), float(row["repeat_high"])
    again = decided(True, low > 1 or high < 1, float(row["ratio"]), low, high, better,
                    float(row["margin"]))
    holds = again == str(row["decision"])
    verdict = HOLDS if holds else (f"{MAY_NOT}: sittings here differ by "
                                   f"±{as_percent(spread.tau):.0f} %")
    return (f"{row['a']} / {row['b']} on a repeat: {format_bound(low)}–{format_bound(high)}× "
            f"({spread.sittings} earlier sittings) — {verdict}")


def repeat_rows(rows: list[dict[str, str]], pairwise: pd.DataFrame, spread: Spread,
                host: str) -> list[dict[str, str]]:
    """The verdicts' rows with, after each workload's, a sentence per decided primary
    pair on whether it holds on a repeat (or one line saying there is no history yet)."""
    if not spread.sittings:
        return [*rows, {"kind": "repeats", "workload": "", "text": NO_HISTORY.format(host=host)}]
    decided_pairs = pairwise[pairwise["primary"].astype(bool)
                             & (pairwise["decision"] != UNRESOLVED)
                             & pairwise["repeat_low"].notna()]
    said = {str(w): [{"kind": "repeat", "workload": str(w), "text": repeat_words(r, spread)}
                     for _, r in group.iterrows()]
            for w, group in decided_pairs.groupby("workload", sort=False)}
    out: list[dict[str, str]] = []
    for index, row in enumerate(rows):
        out.append(row)
        workload = row.get("workload", "")
        following = rows[index + 1]["workload"] if index + 1 < len(rows) else None
        if workload in said and following != workload:
            out += said.pop(workload)
    return out + [line for lines in said.values() for line in lines]
