"""Chart specifications (Plotly JSON: data + layout) built from result tables. No HTML here."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from fslab.core.metrics import HEADLINE_METRICS, HIGHER, headline_metrics, title
from fslab.core.units import display_scale, turned
from fslab.report.page import Chart

PERCENTILES = [("clat_p50_ns", "p50"), ("clat_p90_ns", "p90"), ("clat_p99_ns", "p99"),
               ("clat_p99_9_ns", "p99.9"), ("clat_p99_99_ns", "p99.99")]


def _layout(title: str, y_title: str, **extra: Any) -> Chart:
    return {"title": {"text": title}, "yaxis": {"title": {"text": y_title}},
            "margin": {"t": 50, "l": 70, "r": 20, "b": 60}, "height": 380,
            "legend": {"orientation": "h"}, **extra}


def _finite(values: Any) -> list[float | None]:
    return [None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)
            for v in values]


def bar_charts(summary: pd.DataFrame, workload: str) -> list[Chart]:
    """One bar chart per headline metric: a bar per target, an error bar for its 95 % CI."""
    cells = summary[summary["workload"] == workload]
    charts = []
    for metric in headline_metrics(set(cells["metric"])):
        rows = cells[cells["metric"] == metric]
        unit = rows["unit"].iloc[0]
        scale, label = display_scale(rows["mean"].tolist(), unit)
        direction = "higher is better" if rows["better"].iloc[0] == HIGHER else "lower is better"
        traces = []
        for op, group in rows.groupby("op", sort=True):
            center = group["geomean"].fillna(group["mean"]) if "geomean" in group else group["mean"]
            traces.append({
                "type": "bar", "name": str(op), "x": group["target"].tolist(),
                "y": _finite(center / scale),
                "error_y": {"type": "data", "symmetric": False,
                            "array": _finite((group["ci_high"] - center) / scale),
                            "arrayminus": _finite((center - group["ci_low"]) / scale)},
                "hovertemplate": "%{x} " + str(op) + ": %{y:.4g} " + label + "<extra></extra>",
            })
        charts.append({"data": traces, "layout": _layout(
            f"{workload}: {title(metric, long=True)} ({direction}), geometric mean, 95 % CI",
            label, barmode="group")})
    return charts


def strip_chart(values: pd.DataFrame, workload: str) -> Chart | None:
    """Every iteration's value of the workload's primary metric, per target (box + points)."""
    rows = values[(values["workload"] == workload)]
    metric = next((m for m in HEADLINE_METRICS if m in set(rows["metric"])), None)
    if metric is None:
        return None
    rows = rows[(rows["metric"] == metric) & (rows["op"] != "total")]
    scale, label = display_scale(rows["value"].tolist(), rows["unit"].iloc[0])
    traces = []
    for (target, op), group in rows.groupby(["target", "op"], sort=True):
        traces.append({"type": "box", "name": f"{target} {op}",
                       "y": _finite(group["value"] / scale),
                       "boxpoints": "all", "jitter": 0.4, "pointpos": 0,
                       "text": [f"iteration {i}" for i in group["iteration"]],
                       "hovertemplate": "%{text}: %{y:.4g} " + label + "<extra></extra>"})
    return {"data": traces, "layout": _layout(
        f"{workload}: {title(metric, long=True)} of every iteration", label,
        showlegend=False)}


def qq_chart(values: pd.DataFrame, workload: str) -> Chart | None:
    """Normal QQ plot of the residuals of the primary metric on the model's scale: log
    value − its target's mean log (analysis.pairs.model compares logs), a diagnostic only."""
    from scipy import stats

    rows = values[values["workload"] == workload]
    metric = next((m for m in HEADLINE_METRICS if m in set(rows["metric"])), None)
    if metric is None:
        return None
    rows = rows[(rows["metric"] == metric) & (rows["op"] != "total") & (rows["value"] > 0)]
    logs = np.log(rows["value"].astype(float))
    residuals = logs - logs.groupby([rows["target"], rows["op"]]).transform("mean")
    residuals = residuals[np.isfinite(residuals)].to_numpy()
    if len(residuals) < 3:
        return None
    scale = residuals.std(ddof=1) or 1.0
    (theoretical, ordered), (slope, intercept, _) = stats.probplot(residuals / scale)
    line_x = [float(min(theoretical)), float(max(theoretical))]
    return {"data": [
        {"type": "scatter", "mode": "markers", "name": "residuals",
         "x": theoretical.tolist(), "y": ordered.tolist()},
        {"type": "scatter", "mode": "lines", "name": "normal",
         "x": line_x, "y": [slope * x + intercept for x in line_x]},
    ], "layout": _layout(f"{workload}: QQ plot of {title(metric, long=True)} log residuals "
                         "(standardised)", "sample quantile",
                         xaxis={"title": {"text": "normal quantile"}})}


def percentile_chart(summary: pd.DataFrame, workload: str) -> Chart | None:
    """Latency percentile curves p50 … p99.99, one line per target and op (log scale)."""
    cells = summary[(summary["workload"] == workload)
                    & summary["metric"].isin([m for m, _ in PERCENTILES])]
    if cells.empty:
        return None
    traces = []
    for (target, op), group in cells.groupby(["target", "op"], sort=True):
        by_metric = group.set_index("metric")["mean"]
        points = [(label, by_metric[m] / 1e3) for m, label in PERCENTILES if m in by_metric]
        traces.append({"type": "scatter", "mode": "lines+markers", "name": f"{target} {op}",
                       "x": [p for p, _ in points], "y": _finite([v for _, v in points])})
    return {"data": traces, "layout": _layout(
        f"{workload}: completion-latency percentiles (mean over iterations)", "µs",
        yaxis={"type": "log", "title": {"text": "µs (log)"}})}


def verdict_heatmap(summary: pd.DataFrame) -> Chart | None:
    """Each target's mean relative to the best target, per workload · op · metric row."""
    cells = summary[summary["metric"].isin(["iops", "bw_bytes", "ops_per_s", "clat_p99_ns"])
                    & (summary["op"] != "total")]
    if cells.empty or cells["target"].nunique() < 2:
        return None
    targets = sorted(cells["target"].unique())
    rows, z, text = [], [], []
    for (workload, op, metric), group in cells.groupby(["workload", "op", "metric"], sort=True):
        means = group.set_index("target")["mean"]
        higher = group["better"].iloc[0] == HIGHER
        best = means.max() if higher else means.min()
        rows.append(f"{workload} {op} {title(metric, long=True)}")
        ratios = [(means[t] / best if higher else best / means[t]) if t in means and best
                  else None for t in targets]
        z.append(_finite(ratios))
        text.append(["–" if r is None else f"{r:.2f}" for r in _finite(ratios)])
    return {"data": [{"type": "heatmap", "x": targets, "y": rows, "z": z, "text": text,
                      "texttemplate": "%{text}", "zmin": 0, "zmax": 1,
                      "colorscale": [[0, "#d73027"], [0.5, "#fee08b"], [1, "#1a9850"]],
                      "colorbar": {"title": {"text": "× best"}},
                      "hovertemplate": "%{y}<br>%{x}: %{text} × the best<extra></extra>"}],
            "layout": {**_layout("Share of the best target (1 = best; direction honoured)",
                                 ""), "height": max(300, 28 * len(rows) + 120),
                       "margin": {"l": 260, "t": 50, "r": 20, "b": 60}}}


def ranking_chart(ranking: pd.DataFrame, headline_row: Any) -> Chart | None:
    """One primary question: each target's geometric mean relative to the best (log axis),
    the pair's interval as error bars, ">"-separated groups in colours of their own."""
    rows = ranking[(ranking["workload"] == headline_row.workload)
                   & (ranking["op"] == headline_row.op)
                   & (ranking["metric"] == headline_row.metric)].sort_values("rank")
    if len(rows) < 2:
        return None
    higher = str(rows["better"].iloc[0]) == HIGHER
    best = str(rows["best"].iloc[0])
    # target / best on the metric's own scale: ≤ 1 where higher is better, ≥ 1 otherwise
    # (the ranking's advantage is best / target: turned around where higher is better)
    relative, lows, highs = [], [], []
    for target, advantage, low, high in zip(
            rows["target"], rows["advantage"].astype(float), rows["ci_low"].astype(float),
            rows["ci_high"].astype(float), strict=True):
        shown = (1.0, 1.0, 1.0) if target == best else (
            turned(advantage, low, high) if higher else (advantage, low, high))
        relative.append(shown[0])
        lows.append(shown[1])
        highs.append(shown[2])
    groups = (rows["group"].fillna(0).astype(int).tolist() if "group" in rows
              else [0] * len(rows))  # ranking.csv before the column: one colour
    palette = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"]
    colours = [palette[g % len(palette)] for g in groups]
    targets = list(rows["target"].astype(str))
    trace = {"type": "scatter", "mode": "markers", "x": _finite(relative), "y": targets,
             "marker": {"size": 12, "color": colours},
             "error_x": {"type": "data", "symmetric": False,
                         "array": _finite(np.array(highs) - np.array(relative)),
                         "arrayminus": _finite(np.array(relative) - np.array(lows))},
             "hovertemplate": "%{y}: %{x:.3g}× " + best + "<extra></extra>"}
    direction = "higher is better" if higher else "lower is better"
    name = title(str(headline_row.metric), long=True)
    return {"data": [trace], "layout": _layout(
        f"{headline_row.workload}: {name} relative to {best} ({direction}) — "
        f"{headline_row.ranking}", "", height=120 + 45 * len(rows),
        xaxis={"type": "log", "title": {"text": f"× {best} (95 % simultaneous interval)"}},
        yaxis={"autorange": "reversed"}, showlegend=False)}


def intervals_chart(workload: str, rows: pd.DataFrame) -> Chart | None:
    """Throughput against time in the run, one line per target (its first iteration)."""
    metric = "iops" if (rows["metric"] == "iops").any() else "bw_bytes"
    picked = rows[rows["metric"] == metric]
    if picked.empty:
        return None
    traces = []
    for target, cells in picked.groupby("target", sort=True, observed=True):
        first = cells[cells["iteration"] == cells["iteration"].min()]
        total = first.groupby("t_s")["value"].sum()  # reads and writes of a mixed job
        traces.append({"x": total.index.tolist(), "y": total.tolist(), "name": str(target),
                       "mode": "lines", "type": "scatter"})
    title = "IOPS" if metric == "iops" else "bandwidth (bytes/s)"
    return {"data": traces, "layout": {
        "title": {"text": f"{workload}: {title} over the run (first iteration)"},
        "height": 300, "xaxis": {"title": {"text": "seconds into the measured window"}},
        "yaxis": {"title": {"text": title}, "rangemode": "tozero"}}}
