"""How each file system aged, for the report's figures (stats/aging_series.csv): the
free-space histogram at each probe along the aging (the aging thesis's 3-D charts, here a
heat map: extent size class × progress), the used extents' sizes at the first probe and
at the end (fresh against aged), and each operation's median latency along the aging.

Read off each aging's summary (parsers/aging_kind.aging_summary: an `fslab age` run's
record, or the run a campaign's aged place was made for), one target × level at a time;
several agings of one (a campaign's iterations) are averaged at each point: free and used
extents by their mean count, latency by its geometric mean.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from fslab.analysis.statistic import Measured, Statistic

COLUMNS = ["kind", "target", "level", "stage", "label", "op", "class_from", "class_to",
           "extents", "bytes", "value", "agings"]
FREE, USED, LATENCY = "free", "used", "latency"
METHOD = ("Aging series (aging_series.csv): per target and level of age, the free-space "
          "histogram (extents by power-of-two size class) at each probe along the aging, "
          "the used extents' size classes at the first probe and at the end, and each "
          "operation's median latency on 20 stretches of the aging, positioned by the share "
          "of its operations done; several agings of one cell averaged point by point "
          "(counts by their mean, latency by its geometric mean).")


def agings(records: tuple[Any, ...] | list[Any]) -> list[tuple[str, str, int, dict[str, Any]]]:
    """(target, level, iteration, summary) of every aging the records hold: an aging run's
    (`fslab age`) and each campaign place's (the run it was made for)."""
    out = []
    for record in records:
        summary = record.workload_metadata.section("aging")
        if summary.get("latency") is not None:
            out.append((str(record.target), str(summary.get("level") or ""),
                        int(record.iteration), summary))
    return out


def series_table(measured: Measured) -> pd.DataFrame:
    """stats/aging_series.csv (module doc); empty without agings."""
    rows: list[dict[str, Any]] = []
    for target, level, _, summary in agings(measured.records):
        total = max(1, int(summary.get("ops") or 1))
        base = {"target": target, "level": level}
        for probe in summary.get("free_space") or []:
            stage = round(int(probe["ops"]) / total, 3)
            rows += [{**base, "kind": FREE, "stage": stage,
                      "label": f"{int(probe['ops']):,} operations", "class_from": low,
                      "class_to": high, "extents": count, "bytes": size}
                     for low, high, count, size in probe["histogram"]]
        used = summary.get("used_extents") or []
        for position, probe in enumerate(used):
            last = position == len(used) - 1 and len(used) > 1
            label = ("aged: the end" if last else
                     f"fresh: the first probe ({int(probe['ops']):,} operations)")
            rows += [{**base, "kind": USED, "stage": float(last), "label": label,
                      "class_from": low, "class_to": high, "extents": count, "bytes": size}
                     for low, high, count, size in probe["histogram"]]
        for op, points in (summary.get("latency") or {}).items():
            rows += [{**base, "kind": LATENCY, "op": op, "stage": round(float(where), 2),
                      "value": float(median)} for where, median, _ in points]
    if not rows:
        return pd.DataFrame(columns=COLUMNS)
    frame = pd.DataFrame(rows)
    for column in ("op", "label"):
        frame[column] = frame.get(column, pd.Series(dtype=object)).fillna("")
    keys = ["kind", "target", "level", "stage", "op", "class_from"]
    frame["class_from"] = frame["class_from"].fillna(-1)
    frame["log_value"] = frame["value"].map(lambda v: math.log(v) if v and v > 0 else math.nan)
    grouped = frame.groupby(keys, sort=True, dropna=False)
    out = grouped.agg(label=("label", "first"), class_to=("class_to", "first"),
                      extents=("extents", "mean"), bytes=("bytes", "mean"),
                      log_value=("log_value", "mean"), agings=("target", "size")).reset_index()
    out["value"] = out["log_value"].map(math.exp)
    out["class_from"] = out["class_from"].where(out["class_from"] >= 0)
    return out[COLUMNS]


STATISTIC = Statistic("aging_series", METHOD, series_table)
