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
from typing import TYPE_CHECKING, Any

import numpy as np

from fslab.core.errors import UserError
from fslab.history import catalogue
from fslab.history.changes import ALPHA, METHOD, detect

if TYPE_CHECKING:
    import pandas as pd

SERIES_KEYS = ("machine_key", "target", "target_signature", "workload",
               "workload_signature", "op", "metric")


@dataclass(frozen=True)
class Point:
    """One point of a series: a label value (or a campaign) and its cell."""

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

    def fields(self) -> dict[str, Any]:
        """This key's fields, to build a Found or Series of it."""
        return {name: getattr(self, name) for name in SeriesKey.__dataclass_fields__}


@dataclass(frozen=True)
class Found(SeriesKey):
    """One change, as `fslab history changes --json` prints it."""

    before: str
    after: str
    ratio: float
    ratio_ci_low: float
    ratio_ci_high: float
    p_value: float
    regression: bool

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def sentence(self, by: str) -> str:
        direction = "worse" if self.regression else "better"
        return (f"{self.target} {self.workload} {self.op} {self.metric}: {self.ratio:.2f}× "
                f"({self.ratio_ci_low:.2f}–{self.ratio_ci_high:.2f}) between {by} "
                f"{self.before} and {self.after}, p = {_p(self.p_value)} ({direction}; "
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
          metrics: list[str] | None = None) -> list[tuple[dict[str, Any], list[Point],
                                                          list[np.ndarray]]]:
    """Every series: (its key, its points in order, each point's log values). Only
    primary metrics unless `metrics` names others; disturbed runs are kept (and counted)."""
    runs, labels = catalogue.series_rows(path)
    if runs.empty:
        return []
    wide = catalogue.labels_wide(labels)
    runs = runs[runs["value"] > 0]
    runs = runs[runs["metric"].isin(metrics)] if metrics else runs[runs["primary"]]
    runs = runs.assign(machine_key="" if across_machines else [
        "|".join(str(wide.get(c, {}).get(k, "")) for k in ("host", "cpu_model", "disk_model"))
        for c in runs["campaign_id"]])
    if by:
        runs = runs.assign(order_label=[wide.get(c, {}).get(by) for c in runs["campaign_id"]])
        runs = runs[runs["order_label"].notna()]
        if runs.empty:
            raise UserError(f"no campaign in the catalogue has the label {by!r}; "
                            "`fslab history list` shows the labels")
    else:
        runs = runs.assign(order_label=runs["started"].astype(str))
    found = []
    for key, group in runs.groupby(list(SERIES_KEYS), sort=True, observed=True):
        points, values = _points(group)
        if len(points) >= 2:
            first = group.iloc[0]
            found.append(({**dict(zip(SERIES_KEYS, key, strict=True)),
                           "machine": "several" if across_machines else str(first["machine"]),
                           "unit": str(first["unit"]), "better": str(first["better"])},
                          points, values))
    return found


def _points(group: pd.DataFrame) -> tuple[list[Point], list[np.ndarray]]:
    points, values = [], []
    for label in sorted(group["order_label"].astype(str).unique(), key=natural_key):
        rows = group[group["order_label"].astype(str) == label]
        per_run = rows.groupby(["campaign_id", "run_id"], observed=True)["value"].mean()
        logs = np.log(per_run.to_numpy(dtype=float))
        mean, n = float(logs.mean()), len(logs)
        half = 0.0
        if n > 1:
            from scipy import stats

            half = float(stats.t.ppf(0.975, n - 1) * logs.std(ddof=1) / np.sqrt(n))
        disturbed = int(rows.drop_duplicates(["campaign_id", "run_id"])["disturbed"].sum())
        points.append(Point(label, tuple(sorted(rows["campaign_id"].unique())), n,
                            float(np.exp(mean)), float(np.exp(mean - half)),
                            float(np.exp(mean + half)), disturbed))
        values.append(logs)
    return points, values


def changes(path: Path | None, by: str | None = None, since: str | None = None,
            across_machines: bool = False, metrics: list[str] | None = None,
            alpha: float = ALPHA) -> list[Series]:
    """Every series with the changes found in it (`since`: only changes whose later
    point is at or after that label value)."""
    built = build(path, by, across_machines, metrics)
    found = detect([values for _, _, values in built], alpha)
    result = []
    for (key, points, _), series_changes in zip(built, found, strict=True):
        kept = []
        for change in series_changes:
            before, after = points[change.index - 1].label, points[change.index].label
            if since is not None and natural_key(after) < natural_key(since):
                continue
            worse = change.ratio < 1 if key["better"] == "higher" else change.ratio > 1
            kept.append(Found(**_identity(key).fields(), before=before, after=after,
                              ratio=change.ratio, ratio_ci_low=change.ratio_ci_low,
                              ratio_ci_high=change.ratio_ci_high, p_value=change.p_value,
                              regression=bool(worse)))
        result.append(Series(**_identity(key).fields(), points=tuple(points),
                             changes=tuple(kept)))
    return result


def _identity(key: dict[str, Any]) -> SeriesKey:
    """The SeriesKey of a built series' key."""
    return SeriesKey(**{name: str(key[name]) for name in SeriesKey.__dataclass_fields__})


def method() -> str:
    return METHOD


def _p(p: float) -> str:
    return f"{p:.3f}" if p >= 0.001 else "< 0.001"
