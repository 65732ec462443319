"""The report's aging parts. First, for a campaign with an `age` factor: whether the ranking
survives aging (its verdicts' sentences, the pairs' ratios fresh and aged with their
intervals, stats/aging_ranking.csv, and what must be said of the agings: the verdicts of
kind aging_label). Then, for an aging run (`fslab age`) or such a campaign, how each file
system aged: the free-space histogram over the aging as a heat map (size class ×
progress), the used extents' sizes fresh against aged, and each operation's latency over
the aging with its trend statistic (stats/aging_series.csv, stats/aging_trend.csv)."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from fslab.core.metrics import title
from fslab.core.units import format_bound, format_bytes
from fslab.report.data import ReportData
from fslab.report.page import Page, esc

SERIES, TREND, RANKING = "aging_series.csv", "aging_trend.csv", "aging_ranking.csv"
LATENCY = "aging_latency.csv"  # the thesis's comparisons of the latency during aging
AGING_KINDS = "aging"  # the verdicts' rows of the aging question (kind aging, aging_…)


def aging_answer(data: ReportData, page: Page) -> None:
    """Does the ranking survive aging: the question's sentences (the verdicts' rows of
    kind aging*, which the verdict section leaves to this part), each pair's ratios fresh
    and aged with their intervals, the table behind them and the labels; first in the
    report, as in verdicts.txt. Nothing without an `age` factor."""
    verdicts = data.analysis.verdicts
    rows = verdicts[verdicts["kind"].astype(str).str.startswith(AGING_KINDS)] \
        if "kind" in verdicts else verdicts
    if rows.empty:
        return
    tags = {"aging_heading": "<h2>{}</h2>", "aging_label": "<li>{}</li>"}
    said = [(str(kind), str(text)) for kind, text in zip(rows["kind"], rows["text"],
                                                         strict=True)]
    page.add("".join(tags.get(kind, "<p class='verdict'>{}</p>").format(esc(text))
                     for kind, text in said if kind != "aging_label"))
    ranking = data.analysis.extra.get(RANKING, pd.DataFrame())
    for column in ("reference", "levels", "n", "fill_a", "fill_b"):  # an older table's
        if column not in ranking:
            ranking[column] = "" if column in ("reference", "levels") else math.nan
    ranking["levels"] = ranking["levels"].astype(object).fillna("")
    for (workload, metric), found in ranking.groupby(["workload", "metric"], sort=False):
        page.chart(ratios_chart(str(workload), str(metric), found))
    if not ranking.empty:
        page.add(_ranking_table(ranking))
    labels = [text for kind, text in said if kind == "aging_label"]
    if labels:
        page.add("<p><b>What the agings were</b></p><ul>"
                 + "".join(f"<li>{esc(line)}</li>" for line in labels) + "</ul>")


def aging_figures(data: ReportData, page: Page) -> None:
    """How each file system aged (module doc); nothing without agings."""
    series = data.analysis.extra.get(SERIES, pd.DataFrame())
    trend = data.analysis.extra.get(TREND, pd.DataFrame())
    compared = data.analysis.extra.get(LATENCY, pd.DataFrame())
    if series.empty and trend.empty and compared.empty:
        return
    page.add("<h2>How each file system aged</h2>")
    if not compared.empty:
        page.add("<h3>The thesis's comparisons, decided</h3><p class='muted'>Each "
                 "operation's median latency over an aging, a against b across the "
                 "iterations (the same operations in both agings of an iteration), with its "
                 "interval (Bonferroni over the table) and decision; the thesis's own ratio "
                 "as a diamond (its HDDs and SSDs, not this disk; stats/aging_latency.csv)."
                 "</p>")
        for what, rows in compared.groupby("comparison", sort=False):
            page.chart(latency_comparison_chart(str(what), rows))
    if not series.empty:
        free = series[series["kind"] == "free"]
        if not free.empty:
            page.add("<h3>Free space over the aging</h3>")
        for (target, _), rows in free.groupby(["target", "level"], sort=True, dropna=False):
            page.chart(free_space_map(str(target), rows))
        used = series[series["kind"] == "used"]
        if not used.empty:
            page.add("<h3>Used extents, fresh and aged</h3>")
        for target, rows in used.groupby("target", sort=True):
            page.chart(used_extents_chart(str(target), rows))
        latency = series[series["kind"] == "latency"]
        if not latency.empty:
            page.add("<h3>Latency of each operation over time</h3>")
        for op, rows in latency.groupby("op", sort=True):
            page.chart(latency_chart(str(op), rows, trend))
    if not trend.empty:
        page.add("<p class='muted'>Trend: Theil–Sen's slope of each operation's log median "
                 "latency along the aging, as the latency at the end over the start, with "
                 "its interval (Bonferroni over every trend; stats/aging_trend.csv).</p>")


def _bound(value: Any) -> str:
    return format_bound(float(value))


def ratios_chart(workload: str, metric: str, rows: pd.DataFrame) -> dict[str, object]:
    """a/b at the reference level and at each aged one, with their intervals: where the
    lines cross 1, the ranking changes."""
    data, seen = [], []
    for (a, b, rest), pair in rows.groupby(["a", "b", "levels"], sort=False):
        points: dict[str, tuple[float, float, float]] = {}  # level -> ratio, low, high
        for row in pair.itertuples():  # each aged level after its fresh side (or twin)
            points.setdefault(str(row.reference), (row.ratio_fresh, row.ratio_fresh_ci_low,
                                                   row.ratio_fresh_ci_high))
            points[str(row.age)] = (row.ratio_aged, row.ratio_aged_ci_low,
                                    row.ratio_aged_ci_high)
        levels = list(points)
        values, low, high = ([points[level][k] for level in levels] for k in range(3))
        seen += [v for v in (*low, *high, *values) if v == v and 0 < v < math.inf]
        name = f"{a} / {b}" + (f" ({rest})" if rest else "")
        data.append({"type": "scatter", "mode": "lines+markers", "name": name,
                     "x": levels, "y": values, "error_y": {
                         "type": "data", "symmetric": False,
                         "array": [h - v for h, v in zip(high, values, strict=True)],
                         "arrayminus": [v - lo for v, lo in zip(values, low, strict=True)]}})
    return {"data": data, "layout": {
        "title": {"text": f"{workload}: {title(metric)} ratio of each pair, fresh and aged"
                          "<br><sup>above 1 the first is ahead; a line that crosses 1 is a "
                          "ranking that changes</sup>"},
        "height": 360, "xaxis": {"title": {"text": "level of age"}, "type": "category"},
        "yaxis": {"title": {"text": "ratio a / b (log)"}, "type": "log",
                  **ratio_ticks(seen)},
        "shapes": [{"type": "line", "xref": "paper", "x0": 0, "x1": 1, "y0": 1, "y1": 1,
                    "line": {"dash": "dot", "color": "#888"}}]}}


TICKS = (0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.8, 0.9, 1, 1.1, 1.25, 1.5, 2, 3, 5, 10, 20)


def ratio_ticks(values: list[float]) -> dict[str, object]:
    """Ticks of a log axis of ratios that read as numbers (Plotly labels a short log
    range's minor ticks with their first digit alone: '9' for 0.9)."""
    if not values:
        return {}
    low, high = min(min(values), 1.0), max(max(values), 1.0)
    gap = max(math.log(high / low), 0.2) / 8  # ticks at least an eighth of the span apart
    shown = [1.0]
    for side in (sorted(t for t in TICKS if 1 < t <= high * 1.05),
                 sorted((t for t in TICKS if low / 1.05 <= t < 1), reverse=True)):
        last = 1.0
        for tick in side:
            if abs(math.log(tick / last)) >= gap:
                shown.append(tick)
                last = tick
    shown.sort()
    return {"tickvals": shown, "ticktext": [f"{t:g}×" for t in shown]}


def _ranking_table(ranking: pd.DataFrame) -> str:
    head = ("<tr><th>workload</th><th>pair</th><th>age</th><th>fresh side</th><th>fresh</th>"
            "<th>aged</th><th>interaction</th><th>decision</th><th>n</th>"
            "<th>fill a · b</th></tr>")
    body = "".join(
        f"<tr><td>{esc(r.workload)}</td><td>{esc(r.a)} / {esc(r.b)}</td><td>{esc(r.age)}</td>"
        f"<td>{esc(r.reference)}</td>"
        + "".join(f"<td class='num'>{_ratio(v, lo, hi)}</td>" for v, lo, hi in (
            (r.ratio_fresh, r.ratio_fresh_ci_low, r.ratio_fresh_ci_high),
            (r.ratio_aged, r.ratio_aged_ci_low, r.ratio_aged_ci_high),
            (r.interaction, r.interaction_ci_low, r.interaction_ci_high)))
        + f"<td><b>{esc(r.decision)}</b></td><td class='num'>{r.n}</td>"
        f"<td class='num'>{_fill(r.fill_a)} · {_fill(r.fill_b)}</td></tr>"
        for r in ranking.itertuples())
    return f"<table>{head}{body}</table>"


def _fill(value: float) -> str:
    return "–" if value != value else f"{value:.1f} %"


def _ratio(value: float, low: float, high: float) -> str:
    if value != value:
        return "–"
    shown = f"{value:.3g}×"
    if low == low and high == high:
        shown += f" <span class='muted'>({esc(_bound(low))}–{esc(_bound(high))})</span>"
    return shown


DECISION_COLOURS = {"faster": "#1a7f37", "slower": "#cf222e", "equivalent": "#0969da",
                    "unresolved": "#888888"}


def latency_comparison_chart(what: str, rows: pd.DataFrame) -> dict[str, object]:
    """One comparison of the latency during aging (the file system, the level, fstrim):
    each operation's a/b with its interval, a point per place it was compared at, coloured
    by its decision; the thesis's ratio beside it."""
    data, seen = [], []
    labels = [f"{r.op} · {r.at}" if isinstance(r.at, str) and r.at else str(r.op)
              for r in rows.itertuples()]
    for decision, colour in DECISION_COLOURS.items():
        part = rows[rows["decision"] == decision]
        if part.empty:
            continue
        names = [label for label, d in zip(labels, rows["decision"], strict=True)
                 if d == decision]
        low, high, value = part["ratio_ci_low"], part["ratio_ci_high"], part["ratio"]
        seen += [v for v in (*low, *high, *value) if v == v and 0 < v < math.inf]
        data.append({"type": "scatter", "mode": "markers", "name": decision,
                     "marker": {"color": colour}, "y": names, "x": value.tolist(),
                     "error_x": {"type": "data", "symmetric": False,
                                 "array": (high - value).fillna(0).tolist(),
                                 "arrayminus": (value - low).fillna(0).tolist()}})
    thesis = rows["thesis_ratio"].astype(float)
    if thesis.notna().any():
        data.append({"type": "scatter", "mode": "markers", "name": "the thesis",
                     "marker": {"symbol": "diamond-open", "size": 9, "color": "#6e7781"},
                     "y": [label for label, t in zip(labels, thesis, strict=True) if t == t],
                     "x": thesis.dropna().tolist()})
        seen += thesis.dropna().tolist()
    first = rows.iloc[0]
    pair = (f"{first['a']} against {first['b']}" if what == "file system"
            else f"{what}={first['a']} against {what}={first['b']}")
    return {"data": data, "layout": {
        "title": {"text": f"latency during aging: {pair}<br><sup>median latency a / b per "
                          "operation, below 1 a is faster</sup>"},
        "height": 160 + 22 * len(rows), "margin": {"l": 260},
        "xaxis": {"title": {"text": "ratio a / b (log)"}, "type": "log", **ratio_ticks(seen)},
        "yaxis": {"type": "category", "automargin": True},
        "shapes": [{"type": "line", "yref": "paper", "y0": 0, "y1": 1, "x0": 1, "x1": 1,
                    "line": {"dash": "dot", "color": "#888"}}]}}


def size_class(low: float, high: float) -> str:
    """'4 KiB–8 KiB': a power-of-two size class of extents."""
    return f"{format_bytes(low)}–{format_bytes(high + 1)}"


def free_space_map(target: str, rows: pd.DataFrame) -> dict[str, object] | None:
    """The free-space histogram at each probe: free extents by size class (rows) along
    the aging (columns), coloured by log10(1 + count)."""
    if rows.empty:
        return None
    stages = sorted(set(rows["stage"].astype(float)))
    classes = rows.drop_duplicates("class_from").sort_values("class_from")
    z = [[0.0] * len(stages) for _ in range(len(classes))]
    place = {stage: i for i, stage in enumerate(stages)}
    row_of = {float(c): i for i, c in enumerate(classes["class_from"])}
    for row in rows.itertuples():
        z[row_of[float(row.class_from)]][place[float(row.stage)]] = math.log10(
            1 + float(row.extents))
    agings = int(rows["agings"].max())
    return {"data": [{"type": "heatmap", "x": [round(100 * s) for s in stages],
                      "y": [size_class(r.class_from, r.class_to) for r in classes.itertuples()],
                      "z": z, "colorscale": "Viridis",
                      "colorbar": {"title": {"text": "free extents<br>(log10 of 1 + n)"}},
                      "hovertemplate": "%{y} at %{x} %: 10^%{z:.2f} − 1 extents"
                                       "<extra></extra>"}],
            "layout": {"title": {"text": f"{target}: free space over the aging<br><sup>free "
                                         "extents by size class at each probe"
                                         + (f", the mean of {agings} agings" if agings > 1
                                            else "") + "</sup>"},
                       "height": 420, "xaxis": {"title": {"text": "aging done (% of its "
                                                                  "operations)"}},
                       "yaxis": {"title": {"text": "free extent size"}, "type": "category"}}}


def used_extents_chart(target: str, rows: pd.DataFrame) -> dict[str, object] | None:
    """The used extents' sizes at the first probe and at the end, as shares of extents."""
    if rows.empty:
        return None
    data = []
    for (_, label), part in rows.groupby(["stage", "label"], sort=True):
        part = part.sort_values("class_from")
        total = float(part["extents"].sum()) or 1.0
        data.append({"type": "bar", "name": str(label),
                     "x": [size_class(r.class_from, r.class_to) for r in part.itertuples()],
                     "y": (part["extents"] / total).tolist()})
    return {"data": data, "layout": {
        "title": {"text": f"{target}: the used extents' sizes, fresh and aged<br><sup>share "
                          "of the aged files' extents in each size class (FIEMAP)</sup>"},
        "height": 380, "barmode": "group",
        "xaxis": {"title": {"text": "extent size"}, "type": "category"},
        "yaxis": {"title": {"text": "share of extents"}, "tickformat": ".0%"}}}


def latency_chart(op: str, rows: pd.DataFrame, trend: pd.DataFrame) -> dict[str, object] | None:
    """An operation's median latency along the aging, a line per target, the trend of
    each in the legend."""
    if rows.empty:
        return None
    found = {(str(r.target), str(r.op)): r for r in trend.itertuples()} if not trend.empty \
        else {}
    data = []
    for target, part in rows.sort_values("stage").groupby("target", sort=True):
        row = found.get((str(target), op))
        name = str(target) if row is None else (
            f"{target}: {row.ratio:.3g}× ({_bound(row.ratio_ci_low)}–"
            f"{_bound(row.ratio_ci_high)}×), {row.decision}")
        data.append({"type": "scatter", "mode": "lines+markers", "name": name,
                     "x": [round(100 * s) for s in part["stage"]],
                     "y": (part["value"] / 1e3).tolist()})
    return {"data": data, "layout": {
        "title": {"text": f"{op}: median latency over the aging<br><sup>each twentieth of "
                          "its operations; in the legend the trend (end over start) with its "
                          "interval and decision</sup>"},
        "height": 400, "showlegend": True, "legend": {"orientation": "h", "y": -0.3},
        "xaxis": {"title": {"text": "aging done (% of its operations)"}},
        "yaxis": {"title": {"text": "µs (log)"}, "type": "log"}}}
