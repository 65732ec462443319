"""The tuner's decisions, as pure functions of measured values: which factors the screen
keeps, which configurations a look of the race drops, and the confirmation's answer —
each by the statistics fslab decides everything else with (analysis.pairs: one log-scale
model of pairs, the one decision rule, error spending across looks)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import pandas as pd

from fslab.analysis.cells.stats import log_ci
from fslab.analysis.pairs.decisions import (
    EQUIVALENT,
    FASTER,
    SLOWER,
    UNRESOLVED,
    decided,
    within_margin,
)
from fslab.analysis.pairs.model import ALPHA, compare
from fslab.analysis.pairs.power import PairSpread, needs_iterations
from fslab.analysis.pairs.sequential import look_alpha
from fslab.core.cells import level_label
from fslab.core.metrics import HIGHER
from fslab.core.units import turned
from fslab.tune.space import Bound, Config, Space

Groups = dict[Config, dict[int, float]]  # configuration -> {iteration: value}


@dataclass(frozen=True)
class Screened:
    """One factor after the screen: kept (it can matter) or fixed at its reference."""

    index: int
    kept: bool
    text: str
    effects: dict[int, tuple[float, float, float]]  # level -> (ratio, low, high)


def screened(effects: pd.DataFrame, space: Space, margin: float) -> list[Screened]:
    """Per factor, from the screen's effects.csv (the sweep's model: analysis.factors.
    effects, a simultaneous interval for every level against the reference): fixed at
    its reference when every level's interval lies within ±margin, else kept."""
    out = []
    for index, factor in enumerate(space.factors):
        rows = effects[effects["factor"].astype(str) == factor.name] if not effects.empty \
            else effects
        found: dict[int, tuple[float, float, float]] = {}
        for row in rows.itertuples():
            if str(row.level) in factor.levels:
                found[factor.levels.index(str(row.level))] = (
                    float(row.ratio), float(row.ratio_ci_low), float(row.ratio_ci_high))
        negligible = len(found) == len(factor.levels) - 1 and all(
            low == low and within_margin(low, high, margin) for _, low, high in found.values())
        reference = level_label(factor.name, factor.reference)
        if negligible:
            text = (f"{factor.name}: within ±{margin:.0%} at every level; kept at "
                    f"{reference}")
        elif not found:
            text = f"{factor.name}: not estimated by the screen; kept in the race"
        else:
            shown = "; ".join(f"{level_label(factor.name, factor.levels[i])} {r:.3g}× "
                              f"(CI {lo:.3g}–{hi:.3g}×)" for i, (r, lo, hi) in sorted(
                                  found.items()))
            text = f"{factor.name}: can matter ({shown} against {reference})"
        out.append(Screened(index, not negligible, text, found))
    return out


@dataclass
class Look:
    """One look of the race: the best so far, what it drops and why, and whether the
    survivors are the same within the margin."""

    number: int
    best: Config
    alpha: float  # the campaign-wide α this look spends (α/2^k)
    dropped: dict[Config, str] = field(default_factory=dict)
    intervals: dict[Config, tuple[float, float, float]] = field(default_factory=dict)
    all_same: bool = False


def race_look(number: int, groups: Groups, objective_better: str, margin: float,
              bounds: dict[Config, str] | None = None) -> Look:
    """Look `number` (1, 2, …) of the race over the survivors' values: each is compared
    with the best by the one model of pairs (paired on the rounds both ran), at the
    look's α/2^k (the spending --resolve uses) Bonferroni-shared by the candidates; one
    whose interval lies below the best is dropped, as is one `bounds` names."""
    means = {c: _geomean(v) for c, v in groups.items()}
    pick = max if objective_better == HIGHER else min
    best = pick(means, key=lambda c: means[c])
    alpha = look_alpha(number)
    look = Look(number, best, alpha)
    for config, why in (bounds or {}).items():
        look.dropped[config] = why
    others = [c for c in groups if c != best and c not in look.dropped]
    if not others:
        return look
    found = compare({_key(c): v for c, v in groups.items()}, True, alpha,
                    family=len(others))
    if isinstance(found, str):
        return look
    same = 0
    for pair in found.pairs:
        names = {pair.a, pair.b}
        if _key(best) not in names:
            continue
        other = next(c for c in others if _key(c) in names) if names & {_key(c) for c in
                                                                          others} else None
        if other is None:
            continue
        ratio, low, high = pair.ratio, pair.ratio_ci_low, pair.ratio_ci_high
        if pair.a == _key(best):  # best/other: turned to other/best
            ratio, low, high = turned(ratio, low, high)
        look.intervals[other] = (ratio, low, high)
        answer = decided(pair.estimable, pair.significant, ratio, low, high,
                         objective_better, margin)
        if answer == SLOWER:
            look.dropped[other] = (f"below the best at look {number} ({ratio:.3g}×, "
                                   f"CI {low:.3g}–{high:.3g}×)")
        same += answer == EQUIVALENT
    survivors = [c for c in others if c not in look.dropped]
    look.all_same = bool(survivors) and same == len(survivors) and all(
        within_margin(*look.intervals[c][1:], margin) for c in survivors)
    return look


def bound_breakers(groups: dict[Config, dict[int, float]], bound: Bound,
                   alpha: float) -> dict[Config, str]:
    """The configurations whose interval of a bounded metric (each its own, at level
    `alpha` shared by them: Bonferroni) lies beyond the bound."""
    out = {}
    level = 1 - alpha / max(1, len(groups))
    for config, values in groups.items():
        interval = log_ci(list(values.values()), level)
        if interval.n < 2:
            continue
        if bound.broken_by(interval.ci_low, interval.ci_high):
            out[config] = f"breaks {bound.text} (CI {interval.ci_low:.4g}–{interval.ci_high:.4g})"
    return out


@dataclass(frozen=True)
class Confirmed:
    """The confirmation: winner/reference with its interval, and the campaign's rule."""

    ratio: float
    low: float
    high: float
    decision: str  # faster / slower / same / unresolved (the winner against the reference)
    needs: float  # iterations a side that would resolve it (unresolved)


def confirm(winner: dict[int, float], reference: dict[int, float], better: str,
            margin: float, alpha: float = ALPHA) -> Confirmed:
    """The winner against the reference on the confirmation's own rounds, decided by the
    campaign's rule (one question: its own 95 % interval)."""
    found = compare({"reference": reference, "winner": winner}, True, alpha, family=1)
    if isinstance(found, str):
        return Confirmed(math.nan, math.nan, math.nan, UNRESOLVED, math.nan)
    (pair,) = found.pairs  # a = reference, b = winner: turned to winner/reference
    ratio, low, high = turned(pair.ratio, pair.ratio_ci_low, pair.ratio_ci_high)
    answer = decided(pair.estimable, pair.significant, ratio, low, high, better, margin)
    decision = {FASTER: "faster", SLOWER: "slower", EQUIVALENT: "same"}.get(answer,
                                                                           UNRESOLVED)
    needs = math.nan
    if decision == UNRESOLVED and pair.estimable:
        spread = PairSpread(pair.n_pairs, paired_sd=pair.se_log * math.sqrt(pair.n_pairs)) \
            if pair.n_pairs >= 2 else PairSpread(min(pair.n_a, pair.n_b),
                                                 var_a=pair.sd_log_a ** 2,
                                                 var_b=pair.sd_log_b ** 2)
        needs = needs_iterations(ratio, spread, alpha, margin)
    return Confirmed(ratio, low, high, decision, needs)


def _geomean(values: dict[int, float]) -> float:
    logs = [math.log(v) for v in values.values() if v > 0]
    return math.exp(sum(logs) / len(logs)) if logs else math.nan


def _key(config: Config) -> str:
    return "c" + "-".join(map(str, config))
