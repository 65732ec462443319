"""Charts of a sweep (Plotly JSON), as people read them: a numeric factor as a scaling
curve (the primary metric and p99 latency against the factor on log axes, side by side,
one line per configuration with its interval band), two numeric factors as a heat map
per target, a categorical factor as a forest chart of its levels' effects."""

from __future__ import annotations

import math
from html import escape
from typing import Any

import pandas as pd

from fslab.core.cell_keys import CellKey, level_label, numeric, ordered, short_names
from fslab.core.metrics import title
from fslab.core.units import display_scale
from fslab.report.page import Chart

LATENCY = "clat_p99_ns"
PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22", "#17becf"]


def _rgba(colour: str, alpha: float) -> str:
    red, green, blue = (int(colour[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgba({red},{green},{blue},{alpha})"


def job_cells(summary: pd.DataFrame, job: str, op: str, metric: str) -> pd.DataFrame:
    """The summary rows of one job's cells for one op and metric."""
    rows = summary[(summary["job"].astype(str) == job) & (summary["metric"] == metric)]
    if op in set(rows["op"]):
        return rows[rows["op"] == op]
    return rows[rows["op"] == rows["op"].iloc[0]] if not rows.empty else rows


def _lines(cells: pd.DataFrame, factor: str, others: list[str]) -> list[tuple[str, pd.DataFrame]]:
    """The cells split into lines along `factor`: one per target and level of the others,
    each named as shortly as the lines allow (core/cell_keys.short_names)."""
    present = [f for f in others if f in cells]
    groups, keys = [], []
    for _, rows in cells.groupby(["target", *present], sort=True, dropna=False):
        rows = rows[rows[factor].notna()].copy()
        if rows.empty:
            continue
        first = rows.iloc[0]
        keys.append(CellKey(str(first["target_base"]), str(first["job"]),
                            tuple((f, str(first[f])) for f in present
                                  if isinstance(first[f], str))))
        rows["x"] = rows[factor].map(lambda v: numeric(str(v)))
        groups.append(rows.sort_values("x"))
    return list(zip(short_names(keys), groups, strict=True))


def scaling_chart(summary: pd.DataFrame, job: str, op: str, metric: str, factor: str,
                  others: list[str], caption: str) -> Chart | None:
    """The primary metric (left) and p99 completion latency (right) against a numeric
    factor, log axes, one line per configuration with its 95 % interval as a band."""
    panels = [(metric, "x", "y"), (LATENCY, "x2", "y2")]
    traces: list[Chart] = []
    layout: Chart = {}
    drawn = 0
    for index, (shown, xaxis, yaxis) in enumerate(panels):
        cells = job_cells(summary, job, op, shown)
        if cells.empty or factor not in cells:
            continue
        drawn += 1
        scale, label = display_scale(cells["geomean"].tolist(), str(cells["unit"].iloc[0]))
        for number, (name, rows) in enumerate(_lines(cells, factor, others)):
            colour = PALETTE[number % len(PALETTE)]
            x = rows["x"].tolist()
            centre = (rows["geomean"].fillna(rows["mean"]) / scale).tolist()
            low, high = (rows["ci_low"] / scale).tolist(), (rows["ci_high"] / scale).tolist()
            common = {"xaxis": xaxis, "yaxis": yaxis, "legendgroup": name,
                      "hoverinfo": "skip", "showlegend": False, "mode": "lines",
                      "line": {"width": 0}}
            traces.append({**common, "type": "scatter", "x": x, "y": _finite(high)})
            traces.append({**common, "type": "scatter", "x": x, "y": _finite(low),
                           "fill": "tonexty", "fillcolor": _rgba(colour, 0.18)})
            traces.append({"type": "scatter", "mode": "lines+markers", "name": name,
                           "legendgroup": name, "showlegend": index == 0,
                           "xaxis": xaxis, "yaxis": yaxis, "x": x, "y": _finite(centre),
                           "line": {"color": colour},
                           "hovertemplate": f"{name} {factor}=%{{x}}: %{{y:.4g}} {label}"
                                            "<extra></extra>"})
        suffix = "" if index == 0 else "2"
        ticks = sorted({(numeric(str(v)), str(v)) for v in cells[factor].dropna()})
        layout[f"xaxis{suffix}"] = {"type": "log", "title": {"text": f"{factor} (log)"},
                                    "tickvals": [t for t, _ in ticks],
                                    "ticktext": [escape(text) for _, text in ticks],
                                    "domain": [0, 0.46] if index == 0 else [0.54, 1],
                                    "anchor": f"y{suffix}"}
        layout[f"yaxis{suffix}"] = {"type": "log", "anchor": f"x{suffix}",
                                    "title": {"text": f"{title(shown)} ({label}, log)"}}
    if not drawn:
        return None
    return {"data": traces, "layout": {
        "title": {"text": escape(f"{job}: {title(metric)} and p99 latency against {factor} "
                                 "(geometric means, 95 % intervals)")
                          + f"<br><sup>{caption}</sup>"},
        "height": 430, "margin": {"t": 80, "l": 70, "r": 20, "b": 60},
        "legend": {"orientation": "h", "y": -0.2}, **layout}}


def heatmaps(summary: pd.DataFrame, job: str, op: str, metric: str, factors: tuple[str, str],
             declared: dict[str, list[str]], caption: str) -> list[Chart]:
    """Two numeric factors: the metric's geometric mean over both, one heat map per target
    (geometric mean over the other factors' levels)."""
    cells = job_cells(summary, job, op, metric)
    first, second = factors
    cells = cells[cells[first].notna() & cells[second].notna()]
    out = []
    for target, rows in cells.groupby(cells["target_base"].astype(str), sort=True):
        xs = ordered(rows[first].astype(str).tolist(), declared.get(first))
        ys = ordered(rows[second].astype(str).tolist(), declared.get(second))
        logs = rows.assign(log=rows["geomean"].map(lambda v: math.log(v) if v > 0 else math.nan))
        means = logs.groupby([rows[first].astype(str), rows[second].astype(str)])["log"].mean()
        scale, label = display_scale(rows["geomean"].tolist(), str(rows["unit"].iloc[0]))
        z = [[math.exp(means[(x, y)]) / scale if (x, y) in means.index else None for x in xs]
             for y in ys]
        out.append({"data": [{"type": "heatmap", "x": xs, "y": ys, "z": z,
                              "colorbar": {"title": {"text": label}},
                              "hovertemplate": f"{first}=%{{x}} {second}=%{{y}}: %{{z:.4g}} "
                                               f"{label}<extra></extra>"}],
                    "layout": {"title": {"text": escape(f"{job} on {target}: {title(metric)} "
                                                        f"by {first} and {second}")
                                                 + f"<br><sup>{caption}</sup>"},
                               "height": 400, "xaxis": {"title": {"text": first},
                                                        "type": "category"},
                               "yaxis": {"title": {"text": second}, "type": "category"}}})
    return out


def forest_chart(effects: pd.DataFrame, job: str, factor: str, caption: str) -> Chart | None:
    """A factor's levels as ratios to its reference, with their simultaneous intervals."""
    rows = effects[(effects["workload"] == job) & (effects["factor"] == factor)
                   & effects["ratio"].notna()]
    if rows.empty:
        return None
    reference = level_label(factor, str(rows["reference"].iloc[0]))
    labels = [level_label(factor, str(level)) for level in rows["level"]]
    ratio = rows["ratio"].astype(float)
    trace = {"type": "scatter", "mode": "markers", "x": _finite(ratio), "y": labels,
             "marker": {"size": 11},
             "error_x": {"type": "data", "symmetric": False,
                         "array": _finite(rows["ratio_ci_high"].astype(float) - ratio),
                         "arrayminus": _finite(ratio - rows["ratio_ci_low"].astype(float))},
             "hovertemplate": "%{y}: %{x:.3g}× " + f"{escape(reference)}<extra></extra>"}
    return {"data": [trace], "layout": {
        "title": {"text": escape(f"{job}: {title(str(rows['metric'].iloc[0]))} relative "
                                 f"to {reference}") + f"<br><sup>{factor}; {caption}</sup>"},
        "height": 160 + 45 * len(rows), "showlegend": False,
        "margin": {"t": 90, "l": 20, "r": 20, "b": 50},
        "yaxis": {"automargin": True, "ticksuffix": " "},
        "xaxis": {"type": "log", "title": {"text": "ratio (simultaneous 95 % interval)"}},
        "shapes": [{"type": "line", "x0": 1, "x1": 1, "yref": "paper", "y0": 0, "y1": 1,
                    "line": {"dash": "dot", "color": "#777"}}]}}


def _finite(values: Any) -> list[float | None]:
    return [None if v is None or not isinstance(v, int | float) or not math.isfinite(v)
            else float(v) for v in values]
