"""Series across campaigns and the changes found in them.

A series is one (machine, target, workload, op, metric) across campaigns, compared only
like with like: the same target configuration and workload definition (their
signatures), the same machine (host, CPU and disk model) unless across machines. Its
points are ordered by a label the user names (version-sorted: 6.9 before 6.10), or by
start time; campaigns with the same label value are one point (their iterations pooled).
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from fslab.analysis.cells.stats import log_ci_of
from fslab.analysis.pairs.pair import decide
from fslab.analysis.sittings.repeat import PRIOR, for_workload
from fslab.core.pair import IMPROVED, OVER_TIME, REGRESSED, SAME, UNRESOLVED, Pair
from fslab.core.units import DEFAULT_MARGIN
from fslab.history import catalogue
from fslab.history.changes import ALPHA, METHOD, Change, Points, detect
from fslab.history.sittings import level_spread

if TYPE_CHECKING:
    from fslab.core.environment_record import SittingSpread

SERIES_KEYS = catalogue.SERIES_KEYS


class Point(NamedTuple):
    """One point of a series: a label value (or a campaign) and its cell (a tuple: a
    catalogue of 1,000 campaigns has 10^5 of them)."""

    label: str
    campaigns: tuple[str, ...]
    n: int
    geomean: float
    ci_low: float
    ci_high: float
    disturbed: int


@dataclass(frozen=True)
class SeriesKey:
    """What a series is of: one machine's target × workload × op × metric."""

    machine: str
    target: str
    workload: str
    op: str
    metric: str
    unit: str
    better: str

    def fields(self) -> dict[str, str]:
        """This key's fields, to build a Found or Series of it."""
        return {name: str(getattr(self, name)) for name in SeriesKey.__dataclass_fields__}


@dataclass(frozen=True)
class Found(SeriesKey):
    """One change, as `fslab history changes --json` prints it."""

    before: str
    after: str
    ratio: float
    ratio_ci_low: float
    ratio_ci_high: float
    p_value: float
    decision: str  # regressed, improved, same (within the margin) or unresolved
    margin: float

    @property
    def regression(self) -> bool:
        """A decided regression: what `fslab history changes` exits 1 on."""
        return self.decision == REGRESSED

    def to_json(self) -> dict[str, object]:
        return {**asdict(self), "regression": self.regression}

    def sentence(self, by: str) -> str:
        said = {REGRESSED: "worse", IMPROVED: "better",
                SAME: f"the same within ±{self.margin:.0%}",
                UNRESOLVED: "not resolved: the interval reaches past 1"}[self.decision]
        return (f"{self.target} {self.workload} {self.op} {self.metric}: {self.ratio:.2f}× "
                f"({self.ratio_ci_low:.2f}–{self.ratio_ci_high:.2f}) between {by} "
                f"{self.before} and {self.after}, p = {_p(self.p_value)} ({said}; "
                f"{self.machine})")


@dataclass(frozen=True)
class Series(SeriesKey):
    """A series with its points and the changes found in it."""

    points: tuple[Point, ...]
    changes: tuple[Found, ...]


def natural_key(value: str) -> tuple[Any, ...]:
    """Version order: numbers as numbers ('6.9' < '6.10'), text as text."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part)
                 for part in re.split(r"(\d+)", str(value)) if part != "")


def build(path: Path | None, by: str | None = None, across_machines: bool = False,
          metrics: list[str] | None = None) -> list[tuple[SeriesKey, list[Point], Points]]:
    """Every series: (its key, its points in order, their log summaries). Only primary
    metrics unless `metrics` names others; disturbed runs are kept (and counted). The
    points are summarised where the rows lie (catalogue.series_points); each point's
    interval is the summary's own (analysis.cells.stats.log_ci_of)."""
    point = catalogue.series_points(path, by, across_machines, metrics)
    if point.empty:
        return []
    point["order_label"] = point["order_label"].astype(str)
    center, low, high = log_ci_of(point["n"].to_numpy(), point["mean"].to_numpy(),
                                  point["sd"].to_numpy())
    point = point.assign(geomean=center, ci_low=low, ci_high=high,
                         ss=point["sd"].fillna(0.0) ** 2 * (point["n"] - 1))
    labels = sorted(point["order_label"].unique(), key=natural_key)
    point["rank"] = point["order_label"].map({label: i for i, label in enumerate(labels)})
    point = point.sort_values([*SERIES_KEYS, "rank"], kind="stable")
    found = []
    for key, rows in point.groupby(list(SERIES_KEYS), sort=False, observed=True):
        if len(rows) < 2:
            continue
        points = [Point(label, tuple(ids), n, g, lo, hi, d)
                  for label, ids, n, g, lo, hi, d in zip(
                      rows["order_label"].tolist(), rows["campaigns"].tolist(),
                      rows["n"].astype(int).tolist(), rows["geomean"].tolist(),
                      rows["ci_low"].tolist(), rows["ci_high"].tolist(),
                      rows["disturbed"].astype(int).tolist(), strict=True)]
        counts = rows["n"].to_numpy(dtype=float)
        summary = Points(rows["mean"].to_numpy(dtype=float), counts,
                         float(rows["ss"].sum()), int((counts - 1).sum()))
        first = rows.iloc[0]
        named = {k: str(v) for k, v in zip(SERIES_KEYS, key, strict=True)}
        found.append((tuple(named.values()), SeriesKey(
            machine="several" if across_machines else str(first["machine"]),
            target=named["target"], workload=named["workload"], op=named["op"],
            metric=named["metric"], unit=str(first["unit"]), better=str(first["better"])),
            points, summary))
    found.sort(key=lambda item: item[0])
    return [(series, points, summary) for _, series, points, summary in found]


def with_prior(path: Path | None, built: list[tuple[SeriesKey, list[Point], Points]],
               across_machines: bool) -> list[tuple[SeriesKey, list[Point], Points]]:
    """The series with how far a point moves between sittings known before: its
    machine's level spread from the catalogue (history/sittings.level_spread, its
    workload's own), else the stated prior; a point is one sitting's level, so its
    between variance is half a change's (τ²/2)."""
    from dataclasses import replace

    spreads: dict[str, SittingSpread] = {}
    out = []
    for key, points, values in built:
        if across_machines:
            spread = PRIOR
        elif key.machine not in spreads:
            spread = spreads[key.machine] = level_spread(path, key.machine)
        else:
            spread = spreads[key.machine]
        own = for_workload(spread, key.workload)
        out.append((key, points, replace(values, prior=own.tau ** 2 / 2,
                                          prior_df=own.tau_df)))
    return out


def change_decision(change: Change, better: str, alpha: float, margin: float) -> str:
    """The verdicts' rule (analysis.pairs.pair.decide) for a change after/before, as a
    pair: regressed or improved when its search-adjusted p is below α and its interval
    excludes 1, the same when the interval lies within ±margin, else unresolved."""
    low, high = change.ratio_ci_low, change.ratio_ci_high
    pair = Pair(a="after", b="before", test="change point", ratio=change.ratio, ratio_ci_low=low,
                ratio_ci_high=high, p_value=change.p_value, p_adj=change.p_value,
                alpha=alpha, significant=change.p_value <= alpha and not low <= 1 <= high,
                better=better, note="" if low == low and high == high else "no interval")
    return decide(pair, margin, needs=False).word(OVER_TIME)


def changes(path: Path | None, by: str | None = None, since: str | None = None,
            across_machines: bool = False, metrics: list[str] | None = None,
            alpha: float = ALPHA, margin: float = DEFAULT_MARGIN,
            within_sitting: bool = False) -> list[Series]:
    """Every series with the changes found in it (`since`: only changes whose later
    point is at or after that label value), each decided by the verdicts' rule
    (change_decision); each campaign a sitting, its own shift counted (with_prior) unless
    `within_sitting`."""
    built = build(path, by, across_machines, metrics)
    if not within_sitting:
        built = with_prior(path, built, across_machines)
    found = detect([values for _, _, values in built], alpha)
    result = []
    for (key, points, _), series_changes in zip(built, found, strict=True):
        kept = []
        for change in series_changes:
            before, after = points[change.index - 1].label, points[change.index].label
            if since is not None and natural_key(after) < natural_key(since):
                continue
            kept.append(Found(**key.fields(), before=before, after=after,
                              ratio=change.ratio, ratio_ci_low=change.ratio_ci_low,
                              ratio_ci_high=change.ratio_ci_high, p_value=change.p_value,
                              decision=change_decision(change, key.better, alpha,
                                                       margin),
                              margin=margin))
        result.append(Series(**key.fields(), points=tuple(points),
                             changes=tuple(kept)))
    return result


def method() -> str:
    return METHOD


def _p(p: float) -> str:
    return f"{p:.3f}" if p >= 0.001 else "< 0.001"
