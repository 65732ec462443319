"""Would this sitting's answers hold on a repeat here? Each primary pair's repeat interval
(analysis.sittings.repeat) from its host's between-sitting spread — its workload's own
where the history has it — which a campaign recorded with --catalogue read from the
catalogue as it started (environment.json "sitting" → "spread"): pairwise.csv's
repeat_low, repeat_high and repeat_sittings, and a sentence per primary answer in the
verdicts. A repeat is what `fslab run --again` runs: the campaign's own iterations, a
resolved campaign's first look's (fewer than it ended with: its noise weighs more)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

from fslab.analysis.pairs.pair import decide
from fslab.analysis.sittings.repeat import as_percent, for_workload, repeat_interval
from fslab.analysis.step import Step
from fslab.core.campaign_settings import CampaignSettings
from fslab.core.environment_record import Environment, SittingSpread
from fslab.core.pair import UNRESOLVED, Pair
from fslab.core.units import format_bound

HOLDS, MAY_NOT = "holds on a repeat here", "may not hold on a repeat"
NO_HISTORY = ("Repeats: the catalogue holds no two sittings of one campaign on {host}, so "
              "nothing says yet whether these answers hold on a repeat here; run this "
              "campaign again as a new sitting (fslab run --again DIR --catalogue C) to "
              "make that history.")


def with_repeat(pairs: Sequence[Pair], spread: SittingSpread, repeat_iterations: int = 0
                ) -> list[Pair]:
    """The pairs with each primary one's repeat interval (repeat_low, repeat_high) from
    its workload's spread, and the earlier sittings it rests on (repeat_sittings; 0
    without history: no interval). `repeat_iterations`: what a repeat runs (0: as many
    as each pair rests on)."""
    out = []
    for pair in pairs:
        if pair.primary and spread.sittings and pair.se_log > 0:
            ratio = pair.iterations / repeat_iterations if repeat_iterations else 1.0
            own = for_workload(spread, pair.workload)
            low, high = repeat_interval(math.log(pair.ratio), pair.se_log, pair.df, own,
                                        pair.alpha, max(ratio, 1.0))
            pair = replace(pair, repeat_low=math.exp(low), repeat_high=math.exp(high),
                           repeat_sittings=own.sittings)
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
    own = for_workload(spread, pair.workload)
    verdict = HOLDS if on_a_repeat(pair) == pair.decision else (
        f"{MAY_NOT}: a sitting's ratio moves ±{as_percent(own.tau):.0f} % (1 SD) here")
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


def _repeats(compared: list[Pair], environment: Environment, settings: CampaignSettings
             ) -> tuple[list[Pair], list[dict[str, str]]]:
    """(every pair, with its repeat interval where the run recorded its host's spread;
    the verdicts' rows on repeats)."""
    sitting = environment.sitting
    if sitting is None or sitting.spread is None:
        return compared, []
    pairs = with_repeat(compared, sitting.spread, settings.looks[0] if settings.looks else 0)
    return pairs, repeat_sentences(pairs, sitting.spread, sitting.host)


# Every reader of the pairs reads them with their repeat intervals (none without history);
# pairwise.csv is their table (analysis/stats_files.py: DERIVED).
STEP = Step("repeats", reads=("compared", "environment", "settings"),
            makes=("pairs", "repeat_rows"), run=_repeats,
            tables={"pairwise": "pairwise.csv"})
