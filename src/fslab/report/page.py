"""The HTML page every report is: one self-contained file, Plotly inlined, sections and
charts added in order, everything that came from data escaped."""

from __future__ import annotations

import html
import json
from typing import Any

import pandas as pd

from fslab.core.units import format_value

# A chart: a Plotly figure's JSON (data and layout), drawn by the page's script.
Chart = dict[str, Any]

STYLE = """
body{font-family:system-ui,sans-serif;margin:0 auto;max-width:1200px;padding:1em 2em;color:#222}
h1{margin-bottom:0}h2{border-bottom:2px solid #ddd;padding-bottom:.2em;margin-top:2em}
table{border-collapse:collapse;font-size:13px;margin:.5em 0}
td,th{border:1px solid #ddd;padding:3px 7px;text-align:left;vertical-align:top}
th{background:#f4f4f4}.num{text-align:right;font-variant-numeric:tabular-nums}
.chart{min-height:160px}.muted{color:#777}.verdict{margin:.2em 0}.pair{margin-left:2em}
details{margin:.5em 0}summary{cursor:pointer;font-weight:600}
"""
# Counts rendered charts, JS errors and chart labels cut off at the chart's edge (a tick
# label, title or axis title outside its chart's SVG) into <body data-*> so a headless
# browser can check.
BOOT = """
(function(){var errors=[];
window.addEventListener('error',function(e){errors.push(String(e.message));
document.body.dataset.jsErrors=errors.length;});var oldError=console.error;console.error=function(){
errors.push(Array.prototype.join.call(arguments,' '));document.body.dataset.jsErrors=errors.length;
oldError.apply(console,arguments);};var rendered=0;
document.querySelectorAll('script[type="application/json"][data-chart]').forEach(function(node){
try{var spec=JSON.parse(node.textContent);var div=document.getElementById(node.dataset.chart);
Plotly.newPlot(div,spec.data,spec.layout,{responsive:true,displaylogo:false});rendered++;}
catch(e){errors.push(String(e));}});document.body.dataset.chartsRendered=rendered;
document.body.dataset.jsErrors=errors.length;var clipped=[];
document.querySelectorAll('.js-plotly-plot').forEach(function(div){
var svg=div.querySelector('.main-svg');if(!svg)return;var box=svg.getBoundingClientRect();
div.querySelectorAll('.xtick text,.ytick text,.gtitle,.g-xtitle text,.g-ytitle text')
.forEach(function(t){var r=t.getBoundingClientRect();if(r.width>0&&(r.left<box.left-1||
r.right>box.right+1||r.top<box.top-1))clipped.push(t.textContent);});});
document.body.dataset.labelsClipped=clipped.length;
document.body.dataset.clippedLabels=clipped.slice(0,20).join(' | ');})();
"""


def esc(value: Any) -> str:
    """HTML-escape anything that came from data."""
    return html.escape(str(value), quote=True)


def script_json(data: Any) -> str:
    """JSON safe inside a <script> element: no '<', '>' or '&' can close or open tags."""
    text = json.dumps(data, default=str, allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


class Page:
    """Collects sections and charts; renders one HTML document."""

    def __init__(self, title: str) -> None:
        self.title = title
        self.parts: list[str] = []
        self.count = 0

    def add(self, fragment: str) -> None:
        self.parts.append(fragment)

    def chart(self, spec: Chart | None) -> None:
        if spec is None:
            return
        self.count += 1
        chart_id = f"chart{self.count}"
        self.parts.append(f'<div class="chart" id="{chart_id}"></div>'
                          f'<script type="application/json" data-chart="{chart_id}">'
                          f"{script_json(_clean(fitted(spec)))}</script>")

    def render(self) -> str:
        from plotly.offline import get_plotlyjs

        return ("<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
                f"<title>{esc(self.title)}</title><style>{STYLE}</style>"
                f"<script>{get_plotlyjs()}</script></head><body>"
                + "".join(self.parts) + f"<script>{BOOT}</script></body></html>")


# A chart's title line is wrapped at this many characters: a report is read in a window of
# any width, and Plotly cuts a line that does not fit instead of wrapping it.
TITLE_LINE = 64
CAPTION_LINE = 100
TITLE_LINE_PX = 22  # the top margin each line of title takes


def fitted(spec: Chart) -> Chart:
    """A chart whose labels fit: every axis makes room for its tick labels and title
    (automargin), and a long title or caption is wrapped into lines with room above
    the plot. Every chart of every report passes here (Page.chart)."""
    layout = dict(spec.get("layout") or {})
    for key in [k for k in layout if k.startswith(("xaxis", "yaxis"))] or ["xaxis", "yaxis"]:
        layout[key] = {**(layout.get(key) or {}), "automargin": True}
    title = layout.get("title")
    if isinstance(title, dict) and isinstance(title.get("text"), str):
        head, _, rest = title["text"].partition("<br>")
        caption = rest.removeprefix("<sup>").removesuffix("</sup>") if rest else ""
        lines = _wrapped(head, TITLE_LINE)
        small = _wrapped(caption, CAPTION_LINE) if caption else []
        text = "<br>".join(lines) + "".join(f"<br><sup>{line}</sup>" for line in small)
        layout["title"] = {**title, "text": text}
        margin = dict(layout.get("margin") or {})
        needed = 30 + TITLE_LINE_PX * len(lines) + 14 * len(small)
        margin["t"] = max(int(margin.get("t", 0) or 0), needed)
        layout["margin"] = margin
        if "height" in layout:
            layout["height"] = int(layout["height"]) + max(0, needed - 80)
    return {**spec, "layout": layout}


def _wrapped(text: str, width: int) -> list[str]:
    """Lines of at most about `width` characters, broken between words (escaped text:
    an entity is never split, being one word's part)."""
    import textwrap

    return textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False) or [""]


def _clean(value: Any) -> Any:
    """NaN and infinities become null (JSON has neither)."""
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return None
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    return value


# What people read above a column; the CSV files keep the machine names.
HEADINGS = {"n": "n", "mean": "mean", "geomean": "geometric mean", "ci_low": "95 % CI from",
            "ci_high": "95 % CI to", "median_ci_low": "median CI from",
            "median_ci_high": "median CI to", "median_ci_level": "median CI level",
            "cv": "CV", "of_raw": "share of the raw device",
            "cache_bound_reason": "cache-bound because", "ratio_ci_low": "interval from",
            "ratio_ci_high": "interval to", "p_adj": "adjusted p", "p_value": "p",
            "mde_ratio": "could have found", "se_log": "SE of log ratio",
            "sd_log_a": "SD of log A", "sd_log_b": "SD of log B", "n_pairs": "paired iterations",
            "alpha": "level (α per pair)", "cliffs_delta": "Cliff's delta",
            "spread_ratio": "spread ratio", "run_id": "run", "disturbed_by": "disturbed by"}


def table(frame: pd.DataFrame, columns: list[str], units: bool = False) -> str:
    """An escaped HTML table; with units=True, mean/CI columns print in the row's unit."""
    head = "".join(f"<th>{esc(HEADINGS.get(c, c.replace('_', ' ')))}</th>" for c in columns)
    body = []
    for _, row in frame.iterrows():
        cells = []
        for column in columns:
            value = row.get(column, "")
            if units and column in ("mean", "geomean", "median", "sd", "ci_low", "ci_high",
                                    "median_ci_low", "median_ci_high") and "unit" in row:
                text = format_value(value, row["unit"])
            elif isinstance(value, float):
                text = "–" if value != value else f"{value:.4g}"
            else:
                text = value
            klass = ' class="num"' if isinstance(value, int | float) else ""
            cells.append(f"<td{klass}>{esc(text)}</td>")
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f"<table><tr>{head}</tr>{''.join(body)}</table>"
