"""The words a tune says, each saying only what was shown (the terminal, tune.html and the
tables' reasons read them from here):

- change: shown better — "at least 1.04×" (the interval's worse end, in the metric's
  direction: above 1 is better);
- keep, not shown to help: "up to 1.06×, not shown" (the better end);
- "no effect within ±10 %" only where the interval lies inside the margin (equivalence
  shown, the rule's EQUIVALENT);
- hurts: "at most 0.9×";
- an alternative level: shown equivalent within the margin; a near twin (tune/twins.py)
  not shown equivalent: "not separated", with the rounds it would need.
"""

from __future__ import annotations

import math

from fslab.analysis.pairs.pair import EQUIVALENT, FASTER, SLOWER, Pair
from fslab.core import units
from fslab.core.cell_keys import level_label
from fslab.core.metrics import HIGHER
from fslab.core.units import format_bound
from fslab.tune.credit import CHANGE, Contribution
from fslab.tune.space import Space


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
    shown', 'no effect within ±10 %', 'at most 0.9×', 'not measured'."""
    ratio, low, high = advantage(answer, better)
    if math.isnan(ratio):
        return "not measured"
    if math.isnan(low):
        return f"{ratio:.3g}×, no interval"
    if answer.decision == FASTER:
        return f"at least {format_bound(low)}×"
    if answer.decision == SLOWER:
        return f"at most {format_bound(high)}×"
    if answer.decision == EQUIVALENT:
        return f"no effect within ±{margin:.0%}"
    return f"up to {format_bound(high)}×, not shown"


def option_line(space: Space, found: Contribution, verdict: str, better: str,
                margin: float) -> str:
    """'atime: noatime at least 1.04× (1.04–1.16×), change; lazytime as good (shown
    equivalent)', 'inode: -I 128 up to 1.06×, not shown (0.95–1.06×); keep -I 256'."""
    factor = space.factors[found.factor]
    level = level_label(factor.name, factor.levels[found.level])
    said = f"{shown(found.answer, better, margin)} ({interval(found.answer, better)})"
    if verdict == CHANGE:
        line = f"{factor.name}: {level} {said}, change"
        same = [level_label(factor.name, factor.levels[i]) for i in found.alternatives]
        apart = [level_label(factor.name, factor.levels[i]) for i in found.not_separated]
        if same:
            line += f"; {', '.join(same)} as good (shown equivalent within ±{margin:.0%})"
        for name, needs in zip(apart, found.needs or [math.nan] * len(apart), strict=True):
            line += f"; {name} not separated from it ({needs_words(needs)})"
        return line
    keep = f"keep {level_label(factor.name, factor.reference)}"
    if found.verdict == CHANGE:
        return f"{factor.name}: {level} {said}, but not within the bounds; {keep}"
    line = f"{factor.name}: {level} {said}; {keep}"
    if found.instead_of is not None and found.instead_answer is not None:
        other = space.factors[found.instead_of[0]]
        name = level_label(other.name, other.levels[found.instead_of[1]])
        line += (f" (either suffices: {level} alone is shown as good as {name} alone, "
                 f"{interval(found.instead_answer, better)})")
    return line


def needs_words(needs: float) -> str:
    """'not shown equivalent; would need 34 rounds', or why it cannot be said."""
    if math.isinf(needs):
        return "not shown equivalent; more rounds than a tune gives would be needed"
    if math.isnan(needs):
        return "not shown equivalent; not measured beside it"
    return f"not shown equivalent; would need {needs:.0f} rounds"


def headline(space: Space, recommended_describe: str, answer: Pair, better: str,
             margin: float) -> str:
    """'-I 128 is 1.06× the reference (95 % CI 1.03–1.09×: at least 1.03× better)'."""
    ratio, _, _ = advantage(answer, better)
    said = shown(answer, better, margin)
    if answer.decision == FASTER:
        said += " better"
    return (f"{recommended_describe} is {ratio:.3g}× the reference (95 % CI "
            f"{interval(answer, better)}: {said})")
