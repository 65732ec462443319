"""The comparison report: side-by-side charts, the change per cell, environment changes."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from fslab.core.units import display_scale
from fslab.report.page import Page, esc, table

if TYPE_CHECKING:
    from fslab.analysis.across.compare import CampaignComparison

COLOURS = {"improved": "#1a9850", "regressed": "#d73027", "same": "#4a90a4",
           "unresolved": "#c49a00", "": "#777"}


def build_compare_report(comparison: CampaignComparison) -> str:
    """The comparison as one self-contained HTML page."""
    base, new, cells = comparison.base, comparison.new, comparison.cells
    differences, margin = comparison.differences, comparison.margin
    page = Page(f"fslab compare: {base.name} → {new.name}")
    questions = cells[cells["primary"].astype(bool)] if not cells.empty else cells
    counts = questions["decision"].value_counts().to_dict() if not cells.empty else {}
    page.add(f"<h1>fslab compare</h1><p>base <b>{esc(base)}</b> → new <b>{esc(new)}</b>; "
             f"each workload's primary metric is a question, decided as the verdicts decide "
             f"(the same within ±{margin:.0%}; the questions' intervals hold together with "
             "95 % confidence); other metrics are estimates.</p><p>"
             + ", ".join(f"<span style='color:{COLOURS[k]}'>{esc(k)}: {v}</span>"
                         for k, v in sorted(counts.items())) + "</p>"
             + (f"<p>{esc(comparison.spread_note)}</p>" if comparison.spread_note else ""))
    page.add("<h2>Environment differences</h2>" + (
        "<table><tr><th>setting</th><th>base</th><th>new</th></tr>" + "".join(
            f"<tr style='background:#fff3cd'><td>{esc(w)}</td><td>{esc(a)}</td>"
            f"<td>{esc(b)}</td></tr>" for w, a, b in differences) + "</table>"
        if differences else "<p>None recorded.</p>"))
    for (workload, metric), group in cells.groupby(["workload", "metric"], sort=True):
        scale, label = display_scale(group["base_geomean"].tolist(), group["unit"].iloc[0])
        names = [f"{t} {o}" for t, o in zip(group["target"], group["op"], strict=True)]
        page.chart({"data": [
            {"type": "bar", "name": "base", "x": names,
             "y": (group["base_geomean"] / scale).tolist()},
            {"type": "bar", "name": "new", "x": names,
             "y": (group["new_geomean"] / scale).tolist(),
             "marker": {"color": [COLOURS[str(v)] for v in group["decision"]]}},
        ], "layout": {"title": {"text": f"{workload}: {metric} (base vs new)"}, "height": 340,
                      "barmode": "group", "yaxis": {"title": {"text": label}}}})
    shown = cells.assign(ratio=cells["ratio"].map(lambda v: f"{v:.3g}×"),
                         ci=[f"{lo:.3g}–{hi:.3g}×" if math.isfinite(lo) else "–"
                             for lo, hi in zip(cells["ratio_ci_low"], cells["ratio_ci_high"],
                                               strict=True)])
    page.add("<h2>Every cell</h2>" + table(
        shown, ["target", "workload", "op", "metric", "primary", "better", "n_base", "n_new",
                "ratio", "ci", "decision", "needs_iterations", "note"]))
    return page.render()
