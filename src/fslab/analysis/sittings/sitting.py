"""A sitting (DESIGN.md, "Answers that hold next time"): one results directory — fresh
file systems, one machine, one stretch of time — as pooling reads it, whatever it came
from: its id (the campaign id), the host it sat on and each pair it compared as a log
ratio with its standard error (`SittingPair`); from a results directory, also where it is,
its campaign and what its runs measured (the checks before a pool: api/pool.py); from the
catalogue, its pairs as the history derived them (history/sittings.py).

Its table (`table_of`: SITTING_PAIRS, one row per sitting × pair) is what the pooled
analysis groups over and what the catalogue keeps of each sitting (history/
sitting_pairs.py); `sittings_of` reads such a table back.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from fslab.core.campaign_settings import CampaignSettings
from fslab.core.pair import Pair

if TYPE_CHECKING:
    import pandas as pd


class SittingPair(NamedTuple):
    """One pair of one sitting as pooling reads it: its question, a against b, the log
    ratio with its standard error and degrees of freedom, the machine seconds of its runs
    and the iterations it rests on."""

    workload: str
    op: str
    metric: str
    primary: bool
    a: str
    b: str
    estimate: float  # log(a / b)
    se: float
    df: float
    machine_s: float
    iterations: int

    @classmethod
    def of(cls, pair: Pair) -> SittingPair:
        """A compared pair's (its estimate NaN where the ratio is not positive)."""
        return cls(pair.workload, pair.op, pair.metric, pair.primary, pair.a, pair.b,
                   math.log(pair.ratio) if pair.ratio > 0 else math.nan, pair.se_log,
                   pair.df, pair.machine_s, pair.iterations)

    @property
    def pooled(self) -> bool:
        """Whether it has an interval to pool (a spread and an estimate)."""
        return self.se > 0 and not math.isnan(self.estimate)


# The table of sittings' pairs: a row per sitting × pair.
SITTING_PAIRS = ["sitting", "host", *SittingPair._fields]


@dataclass(frozen=True)
class Sitting:
    """One sitting (module doc)."""

    sitting: str  # its id: the campaign id of its results directory
    host: str
    pairs: tuple[SittingPair, ...] = ()
    path: Path | None = None  # a results directory's
    settings: CampaignSettings | None = None  # its campaign.toml, typed
    workloads: frozenset[str] = frozenset()  # what its runs measured

    def with_pairs(self, pairs: Iterable[Pair]) -> Sitting:
        """The sitting with these compared pairs."""
        return replace(self, pairs=tuple(SittingPair.of(pair) for pair in pairs))


def table_of(sittings: Iterable[Sitting]) -> pd.DataFrame:
    """The sittings' pairs that have an interval to pool as one table (SITTING_PAIRS),
    sitting after sitting."""
    import pandas as pd

    return pd.DataFrame([(s.sitting, s.host, *pair) for s in sittings for pair in s.pairs
                         if pair.pooled], columns=SITTING_PAIRS)


def sittings_of(table: pd.DataFrame) -> list[Sitting]:
    """The sittings of a table of SITTING_PAIRS, in the order they first appear."""
    found: dict[str, tuple[str, list[SittingPair]]] = {}
    for row in table[SITTING_PAIRS].itertuples(index=False):
        _, pairs = found.setdefault(str(row.sitting), (str(row.host), []))
        pairs.append(SittingPair(
            str(row.workload), str(row.op), str(row.metric), bool(row.primary), str(row.a),
            str(row.b), float(row.estimate), float(row.se), float(row.df),
            float(row.machine_s), _whole(row.iterations)))
    return [Sitting(sitting, host, tuple(pairs)) for sitting, (host, pairs) in found.items()]


def _whole(value: object) -> int:
    """A count as a table holds it (0 where a row from before it was recorded has none)."""
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return 0
    return int(number) if math.isfinite(number) else 0
