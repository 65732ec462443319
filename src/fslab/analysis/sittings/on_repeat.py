"""Would this sitting's answers hold on a repeat here? Each primary pair's repeat interval
(analysis.sittings.repeat) from its host's between-sitting spread, which a campaign
recorded with --catalogue read from the catalogue as it started (environment.json
"sitting" → "spread"): pairwise.csv's repeat_low, repeat_high and repeat_sittings, and a
sentence per primary answer in the verdicts."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

import pandas as pd

from fslab.analysis.pairs.pair import UNRESOLVED, Pair, decide, table_of
from fslab.analysis.sittings.repeat import SittingSpread, as_percent, repeat_interval
from fslab.analysis.step import Step
from fslab.core.environment_record import Environment

HOLDS, MAY_NOT = "holds on a repeat here", "may not hold on a repeat"
NO_HISTORY = ("Repeats: the catalogue holds no two sittings of one campaign on {host}, so "
              "nothing says yet whether these answers hold on a repeat here; run this "
              "campaign again as a new sitting (fslab run --again DIR --catalogue C) to "
              "make that history.")


def spread_of(recorded: dict[str, float]) -> SittingSpread:
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


def repeat_sentences(pairs: Sequence[Pair], spread: SittingSpread, host: str
                     ) -> list[dict[str, str]]:
    """A verdicts' row per decided primary pair on whether it holds on a repeat, each
    under its workload (the verdicts put them after the workload's own rows), or one line
    saying there is no history yet."""
    if not spread.sittings:
        return [{"kind": "repeats", "workload": "", "text": NO_HISTORY.format(host=host)}]
    return [{"kind": "repeat", "workload": pair.workload, "text": repeat_words(pair, spread)}
            for pair in pairs if pair.primary and pair.decision not in ("", UNRESOLVED)
            and math.isfinite(pair.repeat_low)]


def _repeats(compared: list[Pair], environment: Environment
             ) -> tuple[list[Pair], pd.DataFrame, list[dict[str, str]]]:
    """(every pair, with its repeat interval where the run recorded its host's spread;
    pairwise.csv; the verdicts' rows on repeats)."""
    sitting = environment.sitting
    if sitting is None or sitting.spread is None:
        return compared, table_of(compared), []
    spread = spread_of(sitting.spread)
    pairs = with_repeat(compared, spread)
    return pairs, table_of(pairs), repeat_sentences(pairs, spread, sitting.host)


# Every reader of the pairs reads them with their repeat intervals (none without history).
STEP = Step("repeats", reads=("compared", "environment"),
            makes=("pairs", "pairwise", "repeat_rows"), run=_repeats,
            tables={"pairwise": "pairwise.csv"})
