"""The pooled answers in a report (`fslab pool`, `fslab run --again`): the pooled verdicts,
then per primary question a forest plot — each sitting's own interval, the pooled
estimate with its interval, and where the next sitting should fall."""

from __future__ import annotations

import math

import pandas as pd

from fslab.core.metrics import title
from fslab.core.units import format_bound
from fslab.report.page import Chart, Page, esc

PAIR = ["workload", "op", "metric", "a", "b"]
ON_AVERAGE, NEXT = "pooled: on average", "next {unit}"


def forest_chart(question: pd.Series, units: pd.DataFrame) -> Chart:
    """A forest plot (Plotly spec) of one pooled question: one row per unit with its
    interval, the pooled mean's, the next unit's; ratios a/b on a log axis."""
    by = str(question["by"])
    unit = "machine" if by == "host" else "sitting"
    labels = [f"{unit} {i + 1} ({str(row.unit)[:8]})" for i, row in
              enumerate(units.itertuples())]
    ratios = units["ratio"].astype(float).tolist()
    lows = units["ratio_ci_low"].astype(float).tolist()
    highs = units["ratio_ci_high"].astype(float).tolist()
    traces: list[Chart] = [_points(f"each {unit}", labels, ratios, lows, highs, "#1f77b4",
                                  "circle")]
    ratio = float(question["ratio"])
    traces.append(_points(ON_AVERAGE, [ON_AVERAGE], [ratio],
                          [float(question["ratio_ci_low"])],
                          [float(question["ratio_ci_high"])], "#d62728", "diamond"))
    next_low, next_high = float(question["next_low"]), float(question["next_high"])
    if math.isfinite(next_low):
        label = NEXT.format(unit=unit)
        traces.append(_points(label, [label], [ratio], [next_low], [next_high], "#ff7f0e",
                              "diamond-open"))
    order = list(reversed(labels + [ON_AVERAGE] + ([NEXT.format(unit=unit)]
                                                   if math.isfinite(next_low) else [])))
    what = title(str(question["metric"]), long=True)
    level = 100 * (1 - float(question["alpha"]))
    return {"data": traces, "layout": {
        "title": {"text": f"{question['workload']}: {what}, {question['a']} / "
                          f"{question['b']} over {int(question['k'])} {unit}s "
                          f"({level:.4g} % intervals)"},
        "xaxis": {"type": "log", "title": {"text": f"{question['a']} / {question['b']}"}},
        "yaxis": {"categoryorder": "array", "categoryarray": order, "automargin": True},
        "shapes": [{"type": "line", "x0": 1, "x1": 1, "xref": "x", "yref": "paper",
                    "y0": 0, "y1": 1, "line": {"dash": "dot", "color": "#888"}}],
        "margin": {"t": 50, "l": 160, "r": 20, "b": 50},
        "height": 140 + 28 * len(order), "legend": {"orientation": "h"}}}


def _points(name: str, labels: list[str], ratios: list[float], lows: list[float],
            highs: list[float], colour: str, symbol: str) -> Chart:
    return {"type": "scatter", "mode": "markers", "name": name, "y": labels, "x": ratios,
            "marker": {"color": colour, "symbol": symbol, "size": 10},
            "error_x": {"type": "data", "symmetric": False,
                        "array": [h - r for h, r in zip(highs, ratios, strict=True)],
                        "arrayminus": [r - lo for r, lo in zip(ratios, lows, strict=True)]},
            "hovertemplate": "%{y}: %{x:.4g}×<extra></extra>"}


def pooled_section(page: Page, pooled: pd.DataFrame, forest: pd.DataFrame,
                   lines: list[str]) -> None:
    """The section: the pooled verdicts, then a forest plot per primary question."""
    page.add("<h2>Next time: the sittings pooled</h2><pre style='white-space: pre-wrap'>"
             + esc("\n".join(lines)) + "</pre>")
    primary = pooled[pooled["primary"].astype(bool)] if not pooled.empty else pooled
    for _, question in primary.iterrows():
        mask = pd.Series(True, index=forest.index)
        for column in PAIR:
            mask &= forest[column].astype(str) == str(question[column])
        page.chart(forest_chart(question, forest[mask]))
    if not primary.empty:
        spread = ", ".join(
            f"{row.workload} {format_bound(math.expm1(float(row.tau)) * 100)} %"
            for row in primary.itertuples())
        page.add("<p class='muted'>" + esc(f"Between-sitting spread τ per question: {spread}.")
                 + "</p>")


def pooled_report(name: str, pooled: pd.DataFrame, forest: pd.DataFrame,
                  lines: list[str]) -> str:
    """A whole report of a pooled directory (`fslab pool --out D`, then `fslab report D`)."""
    page = Page(f"fslab report: {name} (pooled)")
    page.add(f"<h1>fslab report: {esc(name)}, pooled</h1>")
    pooled_section(page, pooled, forest, lines)
    return page.render()
