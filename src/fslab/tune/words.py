"""The words a tune says, each saying only what was shown (the terminal, tune.html and the
tables' reasons read them from here):

- change: shown better — "at least 1.04×" (the interval's worse end, in the metric's
  direction: above 1 is better); with a history of option effects, `change` only where
  the next sitting's interval shows the gain — "at least 1.04× next time" — else "this
  sitting only" with the sittings it would take (tune/carry.py); without one, "this
  sitting's answer";
- keep, and why (KEPT): "not shown to help" ("up to 1.06×, not shown to help": the
  interval's better end), "no effect within ±10 %" (only where the interval lies inside
  the margin: equivalence shown, the rule's EQUIVALENT), "worse" ("at most 0.9×, worse"),
  "not confirmed" (no configuration the confirmation measured changed it), "not within
  the bounds" (shown better, but its configuration breaks a --subject-to bound);
- the whole configuration's gain (the recommendation against the reference) is said
  apart from each option's share (the recommendation with it against without it);
- an alternative level: shown equivalent within the margin; a near twin (tune/twins.py)
  not shown equivalent: "not separated", with the rounds it would need.
"""

from __future__ import annotations

import math

from fslab.analysis.pairs.pair import EQUIVALENT, FASTER, SLOWER, Pair
from fslab.analysis.sittings.words import HOLDS_NEXT
from fslab.core import units
from fslab.core.cell_keys import level_label
from fslab.core.metrics import HIGHER
from fslab.core.units import format_bound
from fslab.tune.carry import NEVER, THIS_ONLY, THIS_SITTINGS, Carried
from fslab.tune.credit import CHANGE, Contribution
from fslab.tune.space import Space

# Why an option's reference level stays (tune_options.csv `kept_because`).
NOT_SHOWN, WORSE, NOT_CONFIRMED, NOT_IN_BOUNDS = ("not shown to help", "worse",
                                                 "not confirmed", "not within the bounds")
AGAIN = "fslab tune --again DIR"


def no_effect(margin: float) -> str:
    """'no effect within ±10%': the fourth reason, equivalence shown."""
    return f"no effect within ±{margin:.0%}"


def kept_because(answer: Pair | None, verdict: str, margin: float) -> str:
    """Why a factor keeps its reference level ('' for a change): what its contribution
    showed (module doc); `answer` None: no configuration confirmed changed it."""
    if verdict == CHANGE:
        return ""
    if answer is None:
        return NOT_CONFIRMED
    if answer.decision == FASTER:
        return NOT_IN_BOUNDS
    if answer.decision == SLOWER:
        return WORSE
    if answer.decision == EQUIVALENT:
        return no_effect(margin)
    return NOT_SHOWN


def advantage(answer: Pair, better: str) -> tuple[float, float, float]:
    """(ratio, worse end, better end) in the metric's direction: above 1 is better."""
    if better == HIGHER:
        return answer.ratio, answer.ratio_ci_low, answer.ratio_ci_high
    return units.turned(answer.ratio, answer.ratio_ci_low, answer.ratio_ci_high)


def interval(answer: Pair, better: str) -> str:
    """'1.03–1.09×' in the metric's direction, or 'no interval'."""
    _, low, high = advantage(answer, better)
    if math.isnan(low):
        return "no interval"
    return f"{format_bound(low)}–{format_bound(high)}×"


def shown(answer: Pair, better: str, margin: float) -> str:
    """What an answer showed of a gain (module doc): 'at least 1.04×', 'up to 1.06×, not
    shown to help', 'no effect within ±10 %', 'at most 0.9×, worse', 'not measured'."""
    ratio, low, high = advantage(answer, better)
    if math.isnan(ratio):
        return "not measured"
    if math.isnan(low):
        return f"{ratio:.3g}×, no interval"
    if answer.decision == FASTER:
        return f"at least {format_bound(low)}×"
    if answer.decision == SLOWER:
        return f"at most {format_bound(high)}×, {WORSE}"
    if answer.decision == EQUIVALENT:
        return no_effect(margin)
    return f"up to {format_bound(high)}×, {NOT_SHOWN}"


def option_line(space: Space, found: Contribution, verdict: str, better: str,
                margin: float, carry: Carried | None = None) -> str:
    """'atime: noatime at least 1.04× (1.04–1.16×), change; lazytime as good (shown
    equivalent)', 'inode: -I 128 up to 1.06×, not shown to help (0.95–1.06×); keep -I 256
    (not shown to help)'; a change with what it says of the next sitting (`carry`)."""
    factor = space.factors[found.factor]
    level = level_label(factor.name, factor.levels[found.level])
    said = f"{shown(found.answer, better, margin)} ({interval(found.answer, better)})"
    if verdict == CHANGE:
        line = f"{factor.name}: {level} {said}{change_words(carry, better)}"
        same = [level_label(factor.name, factor.levels[i]) for i in found.alternatives]
        apart = [level_label(factor.name, factor.levels[i]) for i in found.not_separated]
        if same:
            line += f"; {', '.join(same)} as good (shown equivalent within ±{margin:.0%})"
        for name, needs in zip(apart, found.needs or [math.nan] * len(apart), strict=True):
            line += f"; {name} not separated from it ({needs_words(needs)})"
        return line
    keep = (f"keep {level_label(factor.name, factor.reference)} "
            f"({kept_because(found.answer, verdict, margin)})")
    if found.verdict == CHANGE:
        return f"{factor.name}: {level} {said}, but not within the bounds; {keep}"
    line = f"{factor.name}: {level} {said}; {keep}"
    if found.instead_of is not None and found.instead_answer is not None:
        other = space.factors[found.instead_of[0]]
        name = level_label(other.name, other.levels[found.instead_of[1]])
        line += (f" (either suffices: {level} alone is shown as good as {name} alone, "
                 f"{interval(found.instead_answer, better)})")
    return line


def change_words(carry: Carried | None, better: str) -> str:
    """How a change ends its line, by what it says of the next sitting (tune/carry.py):
    ', change (this sitting's answer)', ' in this sitting; at least 1.04× next time
    (1.04–1.5×): change', ' in this sitting; next sitting 0.95–1.6×: this sitting only:
    run `fslab tune --again DIR`: about 2 more sittings would carry it …'."""
    if carry is None or carry.verdict == THIS_SITTINGS:
        return f", change ({THIS_SITTINGS})" if carry is not None else ", change"
    _, low, high = directed(carry.ratio, carry.next_low, carry.next_high, better)
    span = f"{format_bound(low)}–{format_bound(high)}×"
    if carry.verdict == HOLDS_NEXT:
        return f" in this sitting; at least {format_bound(low)}× next time ({span}): change"
    return f" in this sitting; next sitting {span}: {THIS_ONLY}: {sittings_words(carry)}"


def sittings_words(carry: Carried) -> str:
    """'run `fslab tune --again DIR`: about 2 more sittings would carry it, if its share
    holds', or why no number would."""
    if carry.needed == NEVER:
        return (f"run `{AGAIN}` to see; no number of sittings within the planned ones "
                "would carry it if its share holds (it moves between sittings about as "
                "much as it gains)")
    more = "sitting" if carry.needed == 1 else "sittings"
    return f"run `{AGAIN}`: about {carry.needed} more {more} would carry it, if its share holds"


def directed(ratio: float, low: float, high: float, better: str
             ) -> tuple[float, float, float]:
    """(ratio, worse end, better end) of a ratio's interval in the metric's direction."""
    return (ratio, low, high) if better == HIGHER else units.turned(ratio, low, high)


def needs_words(needs: float) -> str:
    """'not shown equivalent; would need 34 rounds', or why it cannot be said."""
    if math.isinf(needs):
        return "not shown equivalent; more rounds than a tune gives would be needed"
    if math.isnan(needs):
        return "not shown equivalent; not measured beside it"
    return f"not shown equivalent; would need {needs:.0f} rounds"


def headline(recommended_describe: str, answer: Pair, better: str, margin: float) -> str:
    """'the whole configuration, -I 128, is 1.06× the reference (95 % CI 1.03–1.09×: at
    least 1.03× better)': the recommendation as a whole, apart from each option's share."""
    ratio, _, _ = advantage(answer, better)
    said = shown(answer, better, margin)
    if answer.decision == FASTER:
        said += " better"
    return (f"the whole configuration, {recommended_describe}, is {ratio:.3g}× the "
            f"reference (95 % CI {interval(answer, better)}: {said})")
