"""One pooled question: the record every reader of a pool reads (the words, the report,
`fslab pool`, `fslab run --again`), its row of stats/pooled.csv, and the pair records
its two intervals are decided as.

pooled.csv is its serialisation, as pairwise.csv is a Pair's (analysis/pairs/pair.py):
one row per record (`to_row` / `from_row`), its columns the fields in their order; a
missing column takes its default and an unknown one is left out, so a pooled.csv of an
older or newer fslab reads.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Any

from fslab.analysis.sittings.pooled import as_pair
from fslab.core.metrics import HIGHER, METRIC_UNITS
from fslab.core.pair import READ, Pair

if TYPE_CHECKING:
    import pandas as pd

NAN = math.nan


@dataclass(frozen=True)
class PooledQuestion:
    """One question (pair × workload × op × metric) pooled over k sittings or machines,
    on the ratio scale, decided on average and next time (analysis/sittings/pooled.py)."""

    workload: str = ""
    op: str = ""
    metric: str = ""
    primary: bool = False
    a: str = ""
    b: str = ""
    k: int = 0  # the sittings (or machines) pooled
    ratio: float = NAN
    ratio_ci_low: float = NAN  # the mean's interval
    ratio_ci_high: float = NAN
    next_low: float = NAN  # where the next sitting's estimate should fall (NaN: not said)
    next_high: float = NAN
    tau: float = NAN  # Paule–Mandel τ of these sittings (log scale)
    i2: float = NAN
    decision: str = ""  # on average ("" for an exploratory question)
    next_decision: str = ""  # next time
    machine_s: float = NAN
    by: str = "sitting"  # the unit: sitting or host
    units: str = ""  # the units' ids, ';'-joined
    alpha: float = NAN  # every interval's level (α / family for a primary question)
    family: int = 1
    margin: float = NAN
    se_log: float = NAN  # the mean's standard error (log scale)
    fixed_ci_low: float = NAN  # the fixed-effect pool of the same runs, for comparison
    fixed_ci_high: float = NAN
    note: str = ""
    method: str = ""
    # the host's history: the τ̃ the intervals borrowed (NaN: not borrowed) and the
    # earlier sittings it rests on
    tau_borrowed: float = NAN
    tau_sittings: int = 0
    better: str = HIGHER  # the metric's direction
    # issue 58: what each unit measured and what the next interval is for
    iterations: str = ""  # each unit's iterations, ';'-joined in the units' order
    next_iterations: float = NAN  # m: the next sitting's iterations
    # the looks: the level both intervals are read at, the sitting whose look decided
    # (0: none yet), the sittings the error is spent over (analysis/sittings/looks.py)
    level: float = NAN
    decided_at: int = 0
    planned: int = 0
    decided_low: float = NAN  # the interval of the look that decided, at its level
    decided_high: float = NAN
    # the spread between units both intervals rest on (analysis/sittings/spread.py):
    # τ's posterior median and 95 % upper bound, what was known before (spread.HISTORY,
    # STATED or NOT_BORROWED), the history's τ̃ offered and Cochran's Q against it
    spread_tau: float = NAN
    spread_tau_high: float = NAN
    spread_source: str = ""
    history_tau: float = NAN
    q: float = NAN
    q_p: float = NAN
    # τ read from the pool's primary questions together (spread.shared_spread): how many
    # (1: this one alone — a single question, or its sittings disagree beyond theirs)
    # and the independent contrasts they hold
    spread_questions: int = 1
    spread_contrasts: float = 1.0

    @property
    def question(self) -> tuple[str, str, str, str, str]:
        return self.workload, self.op, self.metric, self.a, self.b

    def mean_pair(self) -> Pair:
        """The pooled mean as the pair record its decision read (pooled.as_pair)."""
        return self._pair(self.ratio_ci_low, self.ratio_ci_high, self.decision)

    def deciding_pair(self) -> Pair:
        """The interval of the look that decided, as a pair record: what the words show
        of a decision the current look's interval no longer shows on its own."""
        return self._pair(self.decided_low, self.decided_high, self.decision)

    @property
    def shown_now(self) -> bool:
        """Whether the current look's interval decides as the question was decided."""
        from fslab.analysis.pairs.pair import decide

        pair = self.mean_pair()
        return decide(pair, self.margin, needs=False).decision == self.decision

    def next_pair(self) -> Pair:
        """The next sitting's interval as a pair record about the same estimate."""
        return self._pair(self.next_low, self.next_high, self.next_decision,
                          "" if math.isfinite(self.next_low) else self.note or "no interval")

    def _pair(self, low: float, high: float, decision: str, note: str = "") -> Pair:
        return replace(as_pair(self.ratio, low, high, self.better, note),
                       workload=self.workload, op=self.op, metric=self.metric,
                       primary=self.primary, a=self.a, b=self.b, se_log=self.se_log,
                       alpha=self.alpha, family=self.family, margin=self.margin,
                       decision=decision)

    def to_row(self) -> dict[str, object]:
        """Its row of pooled.csv (COLUMNS)."""
        return {name: getattr(self, name) for name in FIELDS}

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> PooledQuestion:
        """A record of one row of pooled.csv (a mapping, a pandas row)."""
        found: dict[str, Any] = {name: READ[kind](row[name]) for name, kind in FIELDS.items()
                                 if name in row}
        if not found.get("better"):
            found["better"] = METRIC_UNITS.get(found.get("metric", ""), ("", HIGHER))[1]
        return cls(**found)


FIELDS = {f.name: str(f.type) for f in fields(PooledQuestion)}
COLUMNS = list(FIELDS)


def table_of(questions: Iterable[PooledQuestion]) -> pd.DataFrame:
    """pooled.csv of these records."""
    import pandas as pd

    return pd.DataFrame([q.to_row() for q in questions], columns=COLUMNS)


def questions_of(table: pd.DataFrame) -> list[PooledQuestion]:
    """The records of a pooled table (stats/pooled.csv as read, or table_of's)."""
    return [PooledQuestion.from_row(row) for row in table.to_dict("records")]
