"""The screen: a reduced design (tune/design.py: a resolution-IV fraction, or a
generalized subset design for mixed levels) measured in a few rounds on fresh file
systems, and each factor's main effects from it.

The model: the log of each run's value = the reference's level + one term per level that
differs from it + one per round (rounds are blocks: a drifting machine moves every
configuration of a round together), by least squares (statsmodels OLS). A level's
coefficient is the log of its ratio to the factor's reference level, averaged over the
other factors' levels as the design balances them. Every level of every factor is one
Bonferroni family (two-sided, 95 % together).

Each factor then reads one of three ways: it matters (some level's interval excludes 1);
it is within the margin (every level's interval lies inside ±margin: fixed at its
reference, the race does not vary it); or the screen could not tell (kept: the race
will). A factor whose levels help only together with another's shows here as a main
effect of half the joint one, which keeps both for the race.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from fslab.analysis.cells.stats import geomean
from fslab.analysis.pairs.model import ALPHA
from fslab.analysis.pairs.pair import within_margin
from fslab.core.cell_keys import level_label
from fslab.tune.measure import SCREEN, Measure, StageData, Values
from fslab.tune.space import Config, Space

MATTERS, WITHIN, UNTOLD, UNESTIMATED = ("matters", "within the margin", "not resolved",
                                        "not estimated")
Effect = tuple[float, float, float]  # ratio to the reference level, its interval


@dataclass(frozen=True)
class FactorScreen:
    """One factor after the screen: its levels' effects and what they say."""

    index: int
    verdict: str  # MATTERS, WITHIN, UNTOLD or UNESTIMATED
    effects: dict[int, Effect]  # level -> (ratio, low, high) against the reference level

    @property
    def kept(self) -> bool:
        """Whether the race varies it (all but a factor within the margin)."""
        return self.verdict != WITHIN

    def text(self, space: Space, margin: float) -> str:
        """'commit: within ±10 % at every level; kept at commit=5', …"""
        factor = space.factors[self.index]
        reference = level_label(factor.name, factor.reference)
        if self.verdict == WITHIN:
            return f"{factor.name}: within ±{margin:.0%} at every level; kept at {reference}"
        if self.verdict == UNESTIMATED:
            return f"{factor.name}: not estimated by the screen; left to the race"
        shown = "; ".join(f"{level_label(factor.name, factor.levels[i])} {r:.3g}× "
                          f"(CI {lo:.3g}–{hi:.3g}×)"
                          for i, (r, lo, hi) in sorted(self.effects.items()))
        said = "matters" if self.verdict == MATTERS else "not resolved by the screen"
        return f"{factor.name}: {said} ({shown} against {reference})"


@dataclass
class Screen:
    """What the screen measured and found."""

    rows: list[Config]
    rounds: int
    factors: list[FactorScreen]
    measured: StageData
    predicted: dict[Config, float] = field(default_factory=dict)  # log ratio to reference
    # the same with each level's effect at its interval's end nearer 1 (0 where the
    # interval holds 1): what the evidence supports, not what the noise suggests
    supported: dict[Config, float] = field(default_factory=dict)
    # each bounded metric's value by the same model: {metric: {configuration: value}}
    bounded: dict[str, dict[Config, float]] = field(default_factory=dict)
    # the same by the levels whose own 95 % interval excludes 1 (the others count as
    # none): what the data suggest beyond the noise of every estimate, where the family's
    # intervals (`supported`) may miss half of a joint effect
    suggested: dict[Config, float] = field(default_factory=dict)

    def kept(self) -> list[int]:
        return [f.index for f in self.factors if f.kept]

    def breaks(self, space: Space, config: Config) -> bool:
        """Whether the screen's model puts a bounded metric of `config` past its bound."""
        return any(bound.broken_by(value, value) for bound in space.bounds
                   if (value := self.bounded.get(bound.metric, {}).get(config)) is not None)


def screen(measure: Measure, space: Space, rows: Sequence[Config], rounds: int,
           margin: float) -> Screen:
    """Measure the design's `rows` in `rounds` rounds and read each factor (module doc)."""
    measured = measure(SCREEN, range(1, rounds + 1), list(rows))
    values = {c: v for c, v in measured.values.items() if c not in measured.unmeasured}
    effects = main_effects(values, space)
    factors = [read_factor(index, effects.get(index, {}), len(f.levels), margin)
               for index, f in enumerate(space.factors)]
    own = main_effects(values, space, family=False)
    return Screen(list(rows), rounds, factors, measured, predicted_logs(space, effects),
                  predicted_logs(space, {i: {level: (_nearer_one(low, high), low, high)
                                             for level, (_, low, high) in levels.items()}
                                         for i, levels in effects.items()}),
                  {metric: predicted_values(values_of, space) for metric, values_of in
                   measured.bounded.items()},
                  predicted_logs(space, {i: {level: effect for level, effect in levels.items()
                                             if not effect[1] <= 1 <= effect[2]}
                                         for i, levels in own.items()}))


def predicted_values(values: Values, space: Space) -> dict[Config, float]:
    """Each configuration's value by the main-effects model of `values` (the reference's
    geometric mean times its predicted ratio): a bounded metric's, to rank with."""
    start = geomean(values.get(space.reference, {}).values())
    if math.isnan(start):
        return {}
    return {c: start * math.exp(v) for c, v in predicted_logs(space, main_effects(
        values, space)).items()}


def _nearer_one(low: float, high: float) -> float:
    """The end of an interval nearer 1 (1 when it holds 1)."""
    return low if low > 1 else (high if high < 1 else 1.0)


def read_factor(index: int, effects: dict[int, Effect], levels: int,
                margin: float) -> FactorScreen:
    """One factor's verdict from its levels' intervals (module doc)."""
    if len(effects) < levels - 1:
        return FactorScreen(index, UNESTIMATED, effects)
    if any(not low <= 1 <= high for _, low, high in effects.values()):
        return FactorScreen(index, MATTERS, effects)
    if all(low == low and within_margin(low, high, margin) for _, low, high in effects.values()):
        return FactorScreen(index, WITHIN, effects)
    return FactorScreen(index, UNTOLD, effects)


def main_effects(values: Values, space: Space, alpha: float = ALPHA, family: bool = True
                 ) -> dict[int, dict[int, Effect]]:
    """{factor: {level: (ratio, low, high)}} against each factor's reference level, from
    the least squares of logs on level indicators and round blocks (module doc), each
    interval Bonferroni over every level (`family`) or its own; empty where the runs
    leave no residual to judge by."""
    from statsmodels.regression.linear_model import OLS

    cells = [(config, r, math.log(v)) for config, by_round in values.items()
             for r, v in by_round.items() if v > 0]
    terms = [(i, level) for i, f in enumerate(space.factors) for level in
             range(1, len(f.levels)) if any(c[i] == level for c, _, _ in cells)]
    rounds = sorted({r for _, r, _ in cells})
    width = 1 + len(terms) + len(rounds) - 1
    if len(cells) <= width or not terms:
        return {}
    design = np.zeros((len(cells), width))
    design[:, 0] = 1.0
    for row, (config, r, _) in enumerate(cells):
        for column, (i, level) in enumerate(terms, start=1):
            design[row, column] = float(config[i] == level)
        if r != rounds[0]:
            design[row, len(terms) + rounds.index(r)] = 1.0
    fit = OLS(np.array([y for _, _, y in cells]), design).fit()
    if not fit.df_resid >= 1 or np.linalg.matrix_rank(design) < width:
        return {}
    intervals = fit.conf_int(alpha=alpha / len(terms) if family else alpha)
    out: dict[int, dict[int, Effect]] = {}
    for column, (i, level) in enumerate(terms, start=1):
        low, high = intervals[column]
        out.setdefault(i, {})[level] = (math.exp(fit.params[column]), math.exp(low),
                                        math.exp(high))
    return out


def predicted_logs(space: Space, effects: dict[int, dict[int, Effect]]) -> dict[Config, float]:
    """Each configuration's log ratio to the reference by the main-effects model: the sum
    of its levels' log effects (a level not estimated: none)."""
    out = {}
    for config in space.every():
        out[config] = sum(math.log(effects[i][v][0]) for i, v in enumerate(config)
                          if v and v in effects.get(i, {}))
    return out
