"""A tuner's space: its factors and their levels (the first of each the reference: what
the user runs today), its objective, the latency bounds a winner must keep, and how one
configuration is named, counted and compared with the reference."""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from fslab.core.cell_keys import CellKey, level_label
from fslab.core.errors import UserError
from fslab.core.metrics import METRIC_ALIASES, METRIC_UNITS, metric_named
from fslab.core.units import parse_duration_ns, parse_rate
from fslab.plan.sweep import Factor, campaign_factors
from fslab.plan.target_factors import is_target_factor, with_level
from fslab.targets import TargetSpec

Config = tuple[int, ...]  # one level index per factor, in the space's order


@dataclass(frozen=True)
class Bound:
    """A limit a winner keeps: metric, direction, value (SI units); its text names the
    metric as the tables' columns do ('clat_p99_ns<=2ms', whichever name was typed)."""

    text: str
    metric: str
    at_most: bool
    value: float

    def broken_by(self, low: float, high: float) -> bool:
        """Whether a configuration's interval of the metric lies beyond the bound."""
        return low > self.value if self.at_most else high < self.value


@dataclass(frozen=True)
class Space:
    """The factors of a tune (plan.sweep.Factor each: name and levels, reference first)."""

    factors: tuple[Factor, ...]
    objective: str = ""  # a metric; "" = each workload's primary one
    bounds: tuple[Bound, ...] = ()
    unsafe_allowed: bool = False
    notes: list[str] = field(default_factory=list, compare=False)

    @property
    def names(self) -> list[str]:
        return [f.name for f in self.factors]

    @property
    def reference(self) -> Config:
        return tuple(0 for _ in self.factors)

    @property
    def size(self) -> int:
        """Configurations in the full factorial."""
        return math.prod(len(f.levels) for f in self.factors)

    def every(self) -> list[Config]:
        return list(itertools.product(*(range(len(f.levels)) for f in self.factors)))

    def levels(self, config: Config) -> dict[str, str]:
        """{factor: level} of a configuration."""
        return {f.name: f.levels[i] for f, i in zip(self.factors, config, strict=True)}

    def changes(self, config: Config) -> int:
        """How many factors it sets away from the reference."""
        return sum(1 for i in config if i)

    def describe(self, config: Config) -> str:
        """'noatime, commit=60, -I 256' (the levels that differ from the reference), or
        'the reference'."""
        parts = [level_label(f.name, f.levels[i])
                 for f, i in zip(self.factors, config, strict=True) if i]
        return ", ".join(parts) or "the reference"

    def target_factors(self) -> list[Factor]:
        return [f for f in self.factors if is_target_factor(f.name)]


@dataclass(frozen=True)
class Configuration:
    """One configuration of a tune's space, each factor at one of its levels, from the
    space to tuned.toml: the race keys it by its levels' indices (`config`, in the
    space's order); a stage measures it as one cell of its campaign (`cell`), whose runs
    are read back to it by the levels they recorded (`of_row`); the tables and lines show
    its levels (`levels`); and what a person sets up is its target with the
    target factors' levels and the jobs' options (`target`, `job_options`: tuned.toml,
    the mkfs/mount/zfs lines)."""

    space: Space
    config: Config

    @property
    def levels(self) -> dict[str, str]:
        """{factor: level}, in the space's order."""
        return self.space.levels(self.config)

    def cell(self, target: str, job: str) -> CellKey:
        """The cell of a stage's campaign that measures it for `target` and `job`."""
        return CellKey(target, job, tuple(self.levels.items()))

    def target(self, spec: TargetSpec) -> TargetSpec:
        """`spec` with each target factor's level set (an empty level sets nothing)."""
        for name, level in self.levels.items():
            if is_target_factor(name) and level:
                spec = with_level(spec, name, level)
        return spec

    def job_options(self) -> dict[str, str]:
        """The levels of the factors that are options of the jobs (fio's)."""
        return {name: level for name, level in self.levels.items()
                if not is_target_factor(name)}

    @classmethod
    def of_row(cls, space: Space, row: Mapping[str, object]) -> Configuration | None:
        """The configuration a run's row names by its levels (a factor it lacks: its
        reference); None for levels outside the space."""
        indices = []
        for factor in space.factors:
            value = row.get(factor.name)
            text = factor.reference if value is None or value != value else str(value)
            if text not in factor.levels:
                return None
            indices.append(factor.levels.index(text))
        return cls(space, tuple(indices))


def space_of(levels: dict[str, list[Any]], objective: str = "", bounds: Sequence[str] = (),
             unsafe_allowed: bool = False) -> Space:
    """A space from {factor: levels} (--factor flags or a [tune] table), checked: names
    and levels as --sweep takes them, every factor with two levels or more."""
    if not levels:
        raise UserError("nothing to tune: give --factor NAME=V1,V2 (repeatable) or a [tune] "
                        "table, e.g. --factor mount_options.atime=relatime,noatime")
    factors = campaign_factors(dict(levels), {})
    for factor in factors:
        if len(factor.levels) < 2:
            raise UserError(f"--factor {factor.name}: give two levels or more (the first is "
                            "the reference: what you run today)")
    if objective and metric_named(objective) is None:
        raise UserError(f"objective {objective!r}: a metric fslab measures, e.g. iops, "
                        "bw_bytes, ops_per_s, clat_p99_ns")
    objective = metric_named(objective) or "" if objective else ""
    return Space(tuple(factors), objective, tuple(parse_bound(b) for b in bounds),
                 unsafe_allowed)


def parse_bound(text: str) -> Bound:
    """'p99_clat<=2ms', 'clat_p99_ns<=2ms' or 'p99 clat<=2ms' -> Bound (metrics.metric_named);
    one clear line otherwise."""
    match = re.fullmatch(r"\s*([A-Za-z0-9_. ]+?)\s*(<=|>=)\s*(\S+)\s*", text)
    if not match:
        raise UserError(f"bad --subject-to {text!r}: use METRIC<=VALUE or METRIC>=VALUE, "
                        "e.g. 'p99_clat<=2ms'")
    name, operator, value = match.groups()
    metric = metric_named(name)
    if metric is None:
        raise UserError(f"--subject-to {text!r}: unknown metric {name!r} (a metric name "
                        f"such as clat_p99_ns, or {', '.join(METRIC_ALIASES)})")
    unit = METRIC_UNITS[metric][0]
    if unit == "ns":
        number = float(parse_duration_ns(value))
    elif unit == "bytes/s":
        number = float(parse_rate(value))
    else:
        try:
            number = float(value)
        except ValueError:
            raise UserError(f"--subject-to {text!r}: {value!r} is not a number") from None
    return Bound(f"{metric}{operator}{value}", metric, operator == "<=", number)
