"""The comparison report: side-by-side charts, the change per cell, environment changes."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from fslab.core.units import display_scale
from fslab.report.page import Page, esc, table

if TYPE_CHECKING:
    from fslab.analysis.across.compare import Comparison

COLOURS = {"improved": "#1a9850", "regressed": "#d73027", "unchanged": "#777"}


def build_compare_report(comparison: Comparison) -> str:
    """The comparison as one self-contained HTML page."""
    base, new, cells = comparison.base, comparison.new, comparison.cells
    differences, threshold = comparison.differences, comparison.threshold
    page = Page(f"fslab compare: {base.name} → {new.name}")
    counts = cells["verdict"].value_counts().to_dict() if not cells.empty else {}
    page.add(f"<h1>fslab compare</h1><p>base <b>{esc(base)}</b> → new <b>{esc(new)}</b>; "
             f"noise threshold {threshold:.1%}</p><p>"
             + ", ".join(f"<span style='color:{COLOURS[k]}'>{esc(k)}: {v}</span>"
                         for k, v in sorted(counts.items())) + "</p>")
    page.add("<h2>Environment differences</h2>" + (
        "<table><tr><th>setting</th><th>base</th><th>new</th></tr>" + "".join(
            f"<tr style='background:#fff3cd'><td>{esc(w)}</td><td>{esc(a)}</td>"
            f"<td>{esc(b)}</td></tr>" for w, a, b in differences) + "</table>"
        if differences else "<p>None recorded.</p>"))
    for (workload, metric), group in cells.groupby(["workload", "metric"], sort=True):
        scale, label = display_scale(group["base_mean"].tolist(), group["unit"].iloc[0])
        names = [f"{t} {o}" for t, o in zip(group["target"], group["op"], strict=True)]
        page.chart({"data": [
            {"type": "bar", "name": "base", "x": names, "y": (group["base_mean"] / scale).tolist()},
            {"type": "bar", "name": "new", "x": names, "y": (group["new_mean"] / scale).tolist(),
             "marker": {"color": [COLOURS[v] for v in group["verdict"]]}},
        ], "layout": {"title": {"text": f"{workload}: {metric} (base vs new)"}, "height": 340,
                      "barmode": "group", "yaxis": {"title": {"text": label}}}})
    shown = cells.assign(change=cells["change"].map(lambda v: f"{v:+.1%}"),
                         ci=[f"{lo:+.1%} … {hi:+.1%}" if math.isfinite(lo) else "–"
                             for lo, hi in zip(cells["change_ci_low"], cells["change_ci_high"],
                                               strict=True)])
    page.add("<h2>Every cell</h2>" + table(
        shown, ["target", "workload", "op", "metric", "better", "n_base", "n_new", "change",
                "ci", "verdict", "note"]))
    return page.render()
