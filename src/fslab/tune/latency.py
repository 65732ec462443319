"""A --subject-to bound kept by the next file system, not by a typical one.

A person who deploys a configuration runs it on a new fresh file system, and its p99 is
what that one file system gives: a draw, not the geometric mean of the ones measured. So a
bound is checked with a one-sided prediction bound for one new fresh file system's value
on fresh data (each confirmation round is one fresh file system): on the logs, mean +
t(n − 1, 1 − α)·s·√(1 + 1/n) (Hahn & Meeker 1991, §4.7) — the value a new file system
stays below with probability 1 − α (log-normal values). With several bounds each is at
α over their number; a choice among several configurations divides by those tried too.

That is a bound for a new file system **in this sitting**. The next sitting moves a
configuration's latency as a whole (the machine's state: issue 58), by τ on the log
scale, and this sitting's mean carries its own such move: where the host's history of
tune sittings has the bounded metric's level (history/option_effects.py, kind LEVEL),
the bound is for a new file system in the next sitting — mean + t(ν)·√(s²(1 + 1/n) +
2τ̃²), ν by Welch–Satterthwaite over s²'s n − 1 and τ̃²'s degrees of freedom — and the
words say which.
"""

from __future__ import annotations

import math
from collections.abc import Collection
from dataclasses import dataclass

import numpy as np
from scipy import special

from fslab.analysis.sittings.repeat import satterthwaite
from fslab.core.environment_record import SittingSpread
from fslab.core.metrics import METRIC_UNITS
from fslab.core.units import format_value
from fslab.tune.measure import StageData
from fslab.tune.space import Bound, Config


@dataclass(frozen=True)
class Standing:
    """A configuration against one bound: the prediction bound of its next value."""

    bound: Bound
    edge: float  # upper prediction bound (a <= bound), lower (>=); NaN: too few values
    rounds: int
    level: float  # one-sided
    tau: float = math.nan  # the between-sitting spread it includes (NaN: this sitting's)

    @property
    def keeps(self) -> bool:
        if math.isnan(self.edge):
            return False
        return self.edge <= self.bound.value if self.bound.at_most else \
            self.edge >= self.bound.value

    def text(self) -> str:
        """'p99 up to 4.1 ms on a new file system (prediction, 8 rounds): keeps
        p99_clat<=5ms'."""
        if math.isnan(self.edge):
            return f"{self.bound.text} could not be checked ({self.rounds} values)"
        unit = METRIC_UNITS[self.bound.metric][0]
        side = "up to" if self.bound.at_most else "at least"
        said = "keeps" if self.keeps else "breaks"
        when = ("in this sitting" if math.isnan(self.tau) else
                f"next sitting (this host's history: a sitting moves it ±"
                f"{100 * math.expm1(self.tau):.0f} %)")
        return (f"{self.bound.metric} {side} {format_value(self.edge, unit)} on a new file "
                f"system {when} ({1 - self.level:.3g} prediction, {self.rounds} rounds): "
                f"{said} {self.bound.text}")


def prediction_bound(values: Collection[float], level: float, upper: bool,
                     spread: SittingSpread | None = None) -> float:
    """The one-sided (1 − `level`) prediction bound of one new value (module doc), in
    the next sitting where `spread` gives the level's between-sitting spread: NaN with
    fewer than 2 positive values."""
    logs = np.log([v for v in values if v > 0 and math.isfinite(v)])
    n = len(logs)
    if n < 2:
        return math.nan
    noise = float(logs.var(ddof=1)) * (1 + 1 / n)
    between = 2 * spread.tau ** 2 if spread is not None else 0.0
    df = satterthwaite([(noise, n - 1), (between, spread.tau_df)]) if spread is not None \
        else n - 1
    half = float(special.stdtrit(min(df, 1e6), 1 - level)) * math.sqrt(noise + between)
    centre = float(logs.mean())
    return math.exp(centre + half if upper else centre - half)


def standings(measured: StageData, bounds: tuple[Bound, ...], config: Config, rounds: range,
              alpha: float, tried: int = 1, spread: SittingSpread | None = None
              ) -> list[Standing]:
    """`config` against every bound on `rounds` (each at α over the bounds and the
    configurations `tried`), in the next sitting where `spread` is the level's."""
    level = alpha / max(1, len(bounds)) / max(1, tried)
    out = []
    for bound in bounds:
        values = [v for r, v in measured.bounded.get(bound.metric, {}).get(config, {}).items()
                  if r in rounds]
        out.append(Standing(bound, prediction_bound(values, level, bound.at_most, spread),
                            len(values), level,
                            spread.tau if spread is not None else math.nan))
    return out


def keeps_all(measured: StageData, bounds: tuple[Bound, ...], config: Config, rounds: range,
              alpha: float, tried: int = 1, spread: SittingSpread | None = None) -> bool:
    """Whether the next fresh file system of `config` is shown to keep every bound."""
    return all(s.keeps for s in standings(measured, bounds, config, rounds, alpha, tried,
                                          spread))
