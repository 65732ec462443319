"""One compared pair: the record every reader of a comparison reads, and its row.

A `Pair` is a against b on one question (workload, op, metric, the metric's direction):
the ratio a/b of geometric means with the interval and test of the one model of pairs
(analysis.pairs.model), the spreads it rests on, the smallest ratio it could have shown,
and — once the rule has read it (analysis.pairs.pair.decide, the one place it is
applied) — its answer, what an unresolved one needs and what its runs cost. The model
makes the record, the rule gives it its decision, and the verdicts, the ranking, the best
configuration, compare, the history, the tuner and the report read it. "Which is better,
x or y" is `pair.seen_from(x)`: the same record with x as a. The record and its file sit
below the analysis, as the run record does: a reader of stats/ (the report) reads them
without the analysis.

pairwise.csv is its serialisation: one row per record (`to_row` / `from_row`), its columns
the fields in their order (`estimable`, which the note implies, beside the note). A new
column is one field with a default; `from_row` leaves out columns it does not know and
gives a missing one its default, so a pairwise.csv of an older or newer fslab reads.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Any

from fslab.core import units
from fslab.core.metrics import HIGHER, METRIC_UNITS

if TYPE_CHECKING:
    import pandas as pd

NAN = math.nan
FASTER, SLOWER, EQUIVALENT, UNRESOLVED = "faster", "slower", "equivalent", "unresolved"
IMPROVED, REGRESSED, SAME, BEHIND = "improved", "regressed", "same", "behind"
# The one word table: how each reader says the rule's four answers. Between targets
# (verdicts, pairwise.csv); over time (a new result against an old one: compare,
# history); a tuner's candidate against the reference; a configuration against the best
# (best.csv, a race: faster or slower than the best can only mean behind it).
BETWEEN, OVER_TIME, AGAINST_REFERENCE, AGAINST_BEST = ("between", "over time",
                                                       "against the reference",
                                                       "against the best")
WORDS = {
    BETWEEN: {FASTER: FASTER, SLOWER: SLOWER, EQUIVALENT: EQUIVALENT, UNRESOLVED: UNRESOLVED},
    OVER_TIME: {FASTER: IMPROVED, SLOWER: REGRESSED, EQUIVALENT: SAME,
                UNRESOLVED: UNRESOLVED},
    AGAINST_REFERENCE: {FASTER: FASTER, SLOWER: SLOWER, EQUIVALENT: SAME,
                        UNRESOLVED: UNRESOLVED},
    AGAINST_BEST: {FASTER: BEHIND, SLOWER: BEHIND, EQUIVALENT: EQUIVALENT,
                   UNRESOLVED: UNRESOLVED},
}


@dataclass(frozen=True)
class Spread:
    """What a pair's test rests on, for its sample size: the iterations it has now, and
    either the SD of its per-iteration log differences (paired) or each side's variance
    of logs (Welch, both sides at n)."""

    now: int
    paired_sd: float = math.nan
    var_a: float = math.nan
    var_b: float = math.nan

    @property
    def paired(self) -> bool:
        return self.paired_sd == self.paired_sd



@dataclass(frozen=True)
class Pair:
    """a against b on one question: the model's estimate and, decided, the rule's answer
    (module doc). Every field is a column of pairwise.csv."""

    # what was asked
    workload: str = ""
    op: str = ""
    metric: str = ""
    primary: bool = False  # a verdict's question (the others are estimates)
    # who
    a: str = ""
    b: str = ""
    # the estimate: ratio a/b of geometric means and its inference
    test: str = ""  # the model that compared them; "" when they could not be (note: why)
    p_value: float = NAN  # unadjusted
    p_adj: float = NAN  # Bonferroni over the family
    alpha: float = NAN  # the level of the interval and of the detectable ratio (α / family)
    family: int = 1  # the pairs adjusted together
    ratio: float = NAN
    ratio_ci_low: float = NAN
    ratio_ci_high: float = NAN
    se_log: float = NAN  # standard error of log(ratio)
    df: float = NAN
    note: str = ""  # why there is no interval ("" when there is one)
    cliffs_delta: float = NAN
    magnitude: str = ""
    significant: bool = False  # p_adj < α: the interval excludes 1
    mde_ratio: float = NAN  # found 4 times in 5 at this n and spread ("could have found")
    n_a: int = 0
    n_b: int = 0
    n_pairs: int = 0  # iterations both ran (a paired pair)
    sd_log_a: float = NAN
    sd_log_b: float = NAN
    look: int | None = None  # a campaign that resolves: the look that decided it (1-based)
    # the decision (decide): a against b
    decision: str = ""  # FASTER, SLOWER, EQUIVALENT, UNRESOLVED; "" not decided (an estimate)
    margin: float = NAN
    needs_iterations: float = NAN  # unresolved: where it resolves 4 times in 5 (∞: > 100)
    needs_seconds: float = NAN  # what those iterations cost at this campaign's run times
    machine_s: float = NAN  # the machine seconds of the runs behind it
    # added with the record (issue 54)
    better: str = HIGHER  # the metric's direction
    t: float = NAN  # the test statistic
    noise: float = NAN  # run-to-run spread per target on the log scale (≈ relative SD)
    # where a repeat sitting on this host should fall, from its history (issue 51:
    # analysis/sittings/on_repeat.py), and the earlier sittings that rests on (0: none)
    repeat_low: float = NAN
    repeat_high: float = NAN
    repeat_sittings: int = 0

    @property
    def estimable(self) -> bool:
        """Whether there is an interval (no note saying why not)."""
        return not self.note

    @property
    def compared(self) -> bool:
        """Whether the model compared them (else the ratio is of geometric means alone)."""
        return bool(self.test)

    @property
    def question(self) -> tuple[str, str, str]:
        return self.workload, self.op, self.metric

    @property
    def spread(self) -> Spread:
        """What its test rests on: paired (2 or more iterations in common), the SD of its
        per-iteration log differences; else each side's variance of logs."""
        if self.n_pairs >= 2:
            return Spread(self.n_pairs, paired_sd=self.se_log * math.sqrt(self.n_pairs))
        return Spread(min(self.n_a, self.n_b), var_a=self.sd_log_a ** 2,
                      var_b=self.sd_log_b ** 2)

    @property
    def iterations(self) -> int:
        """The iterations its test rests on now."""
        return self.spread.now

    @property
    def advantage(self) -> tuple[float, float, float]:
        """(ratio, low, high) in the metric's direction: above 1 where a is better."""
        if self.better == HIGHER:
            return self.ratio, self.ratio_ci_low, self.ratio_ci_high
        return units.turned(self.ratio, self.ratio_ci_low, self.ratio_ci_high)

    def turned(self) -> Pair:
        """b against a: the ratio and interval turned over, the answer said the other way."""
        ratio, low, high = units.turned(self.ratio, self.ratio_ci_low, self.ratio_ci_high)
        return replace(self, a=self.b, b=self.a, ratio=ratio, ratio_ci_low=low,
                       ratio_ci_high=high, n_a=self.n_b, n_b=self.n_a,
                       sd_log_a=self.sd_log_b, sd_log_b=self.sd_log_a,
                       cliffs_delta=-self.cliffs_delta, t=-self.t,
                       decision=swapped(self.decision))

    def seen_from(self, x: str) -> Pair:
        """The pair with `x` (a or b) as a: x against the other."""
        if x == self.a:
            return self
        if x != self.b:
            raise ValueError(f"{x!r} is not in the pair {self.a!r}, {self.b!r}")
        return self.turned()

    def word(self, reading: str = BETWEEN) -> str:
        """The decision as `reading` (WORDS) says it."""
        return word(self.decision, reading)

    def to_row(self) -> dict[str, object]:
        """Its row of pairwise.csv (COLUMNS)."""
        row = {name: getattr(self, name) for name in FIELDS}
        row["estimable"] = self.estimable
        return {column: row[column] for column in COLUMNS}

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> Pair:
        """A record of one row of pairwise.csv (a mapping, a pandas row): columns it does
        not know are left out, missing ones take their default; a row written before the
        `better` column takes its metric's own direction."""
        found: dict[str, Any] = {name: READ[kind](row[name]) for name, kind in FIELDS.items()
                                 if name in row}
        if not found.get("better"):
            found["better"] = METRIC_UNITS.get(found.get("metric", ""), ("", HIGHER))[1]
        return cls(**found)


def _text(value: Any) -> str:
    return "" if value is None or (isinstance(value, float) and value != value) else str(value)


def _number(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return NAN


def _whole(value: Any) -> int:
    number = _number(value)
    return int(number) if math.isfinite(number) else 0


def _maybe_whole(value: Any) -> int | None:
    number = _number(value)
    return int(number) if math.isfinite(number) else None


def _flag(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in ("true", "1")
    return bool(value) and value == value


# How a cell of each field's type is read (from_row); the types as the fields declare them.
READ: dict[str, Callable[[Any], Any]] = {"str": _text, "float": _number, "int": _whole,
                                         "bool": _flag, "int | None": _maybe_whole}
FIELDS = {f.name: str(f.type) for f in fields(Pair)}
# pairwise.csv's columns: the fields in order, `estimable` beside the note.
COLUMNS = [*list(FIELDS)[:list(FIELDS).index("note")], "estimable",
           *list(FIELDS)[list(FIELDS).index("note"):]]


def word(decision: str, reading: str = BETWEEN) -> str:
    """How `reading` (WORDS) says one of the rule's answers ("" undecided)."""
    return WORDS[reading].get(decision, decision)


def swapped(decision: str) -> str:
    """The answer said the other way round (b against a): faster and slower trade places."""
    return {FASTER: SLOWER, SLOWER: FASTER}.get(decision, decision)


def views(pairs: Iterable[Pair]) -> dict[tuple[str, str], Pair]:
    """{(x, y): the pair of x and y seen from x}, both ways round: how a reader finds
    'x against y' among one question's pairs."""
    out: dict[tuple[str, str], Pair] = {}
    for pair in pairs:
        out[(pair.a, pair.b)] = pair
        out[(pair.b, pair.a)] = pair.turned()
    return out


def table_of(pairs: Iterable[Pair]) -> pd.DataFrame:
    """pairwise.csv of these records, one row each."""
    import pandas as pd

    return pd.DataFrame([pair.to_row() for pair in pairs], columns=COLUMNS)


def pairs_of(table: pd.DataFrame) -> list[Pair]:
    """The records of a pairwise table (stats/pairwise.csv as read, or table_of's)."""
    if table.empty:
        return []
    return [Pair.from_row(row) for row in table.to_dict("records")]
