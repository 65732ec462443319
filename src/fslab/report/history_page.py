"""The history page (`fslab history report`): regressions first, each series that
changed drawn with its interval band and its change points marked, the series that did
not change folded away. It renders what history found; it finds nothing itself.

A series here is anything with the fields of history.series.Series (machine, target,
workload, op, metric, unit, better, points, changes): the report stays below the
history in the house and does not import it.
"""

from __future__ import annotations

from typing import Any

from fslab.core.units import format_value
from fslab.report.page import Chart, Page, esc

BAND = "rgba(31,119,180,0.18)"
LINE = "#1f77b4"


def render(series: list[Any], by: str, method: str) -> str:
    """One self-contained HTML document."""
    page = Page("fslab history")
    changed = [s for s in series if s.changes]
    steady = [s for s in series if not s.changes]
    found = sorted((c for s in changed for c in s.changes),
                   key=lambda c: (not c.regression, c.p_value))
    regressions = [c for c in found if c.regression]
    page.add("<h1>fslab history</h1>"
             f"<p class='muted'>{len(series)} series ordered by {esc(by)}; "
             f"{len(found)} change(s), {len(regressions)} regression(s).</p>")
    page.add("<h2>Regressions</h2>" + _sentences(regressions, by, "none found"))
    page.add("<h2>Improvements</h2>" + _sentences([c for c in found if not c.regression],
                                                   by, "none found"))
    page.add("<h2>Series that changed</h2>")
    if not changed:
        page.add("<p class='muted'>none</p>")
    for item in sorted(changed, key=lambda s: not any(c.regression for c in s.changes)):
        page.add(f"<h3>{esc(_title(item))}</h3>")
        page.chart(chart(item, by))
    page.add(f"<details><summary>{len(steady)} series without a change</summary>"
             + _steady_table(steady) + "</details>")
    page.add(f"<h2>Method</h2><p class='muted'>{esc(method)}</p>")
    return page.render()


def _title(item: Any) -> str:
    return f"{item.target} · {item.workload} · {item.op} {item.metric} ({item.machine})"


def _sentences(changes: list[Any], by: str, empty: str) -> str:
    if not changes:
        return f"<p class='muted'>{esc(empty)}</p>"
    return "<ul>" + "".join(f"<li class='verdict'>{esc(c.sentence(by))}</li>"
                            for c in changes) + "</ul>"


def _steady_table(series: list[Any]) -> str:
    rows = "".join(
        f"<tr><td>{esc(s.target)}</td><td>{esc(s.workload)}</td><td>{esc(s.op)}</td>"
        f"<td>{esc(s.metric)}</td><td>{esc(s.machine)}</td><td class='num'>{len(s.points)}"
        f"</td><td>{esc(format_value(s.points[-1].geomean, s.unit))}</td></tr>"
        for s in series)
    return ("<table><tr><th>target</th><th>workload</th><th>op</th><th>metric</th>"
            f"<th>machine</th><th>points</th><th>latest</th></tr>{rows}</table>")


def chart(item: Any, by: str) -> Chart:
    """The series' geometric means with their 95 % band against the ordering label,
    a dashed line at each change with its ratio."""
    labels = [p.label for p in item.points]
    low = [p.ci_low for p in item.points]
    high = [p.ci_high for p in item.points]
    data = [
        {"x": labels, "y": high, "mode": "lines", "line": {"width": 0}, "hoverinfo": "skip",
         "showlegend": False, "type": "scatter"},
        {"x": labels, "y": low, "mode": "lines", "line": {"width": 0}, "fill": "tonexty",
         "fillcolor": BAND, "name": "95 % interval", "hoverinfo": "skip",
         "type": "scatter"},
        {"x": labels, "y": [p.geomean for p in item.points], "mode": "lines+markers",
         "line": {"color": LINE}, "name": "geometric mean", "type": "scatter",
         "customdata": [[p.n, p.disturbed] for p in item.points],
         "hovertemplate": "%{x}: %{y:.4g} (n = %{customdata[0]}, "
                          "disturbed %{customdata[1]})<extra></extra>"},
    ]
    shapes, notes = [], []
    for change in item.changes:
        at = labels.index(change.after) - 0.5
        color = "#d62728" if change.regression else "#2ca02c"
        shapes.append({"type": "line", "xref": "x", "yref": "paper", "x0": at, "x1": at,
                       "y0": 0, "y1": 1, "line": {"color": color, "dash": "dash"}})
        notes.append({"x": at, "y": 1, "xref": "x", "yref": "paper", "showarrow": False,
                      "yanchor": "bottom", "font": {"color": color},
                      "text": f"change {change.ratio:.2f}× "
                              f"({change.ratio_ci_low:.2f}–{change.ratio_ci_high:.2f})"})
    layout = {"height": 340, "margin": {"t": 40, "b": 50},
              "xaxis": {"title": {"text": by}, "type": "category",
                        "categoryorder": "array", "categoryarray": labels},
              "yaxis": {"title": {"text": f"{item.metric} ({item.unit}, "
                                          f"{item.better} is better)"}},
              "shapes": shapes, "annotations": notes}
    return {"data": data, "layout": layout}
