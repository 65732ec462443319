"""The self-contained HTML report: one file, Plotly inlined, everything from data escaped."""

from __future__ import annotations

import html
import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from fslab.metrics import headline_of_each
from fslab.report import charts
from fslab.stats_files import Analysis
from fslab.units import format_value

STYLE = """
body{font-family:system-ui,sans-serif;margin:0 auto;max-width:1200px;padding:1em 2em;color:#222}
h1{margin-bottom:0}h2{border-bottom:2px solid #ddd;padding-bottom:.2em;margin-top:2em}
table{border-collapse:collapse;font-size:13px;margin:.5em 0}
td,th{border:1px solid #ddd;padding:3px 7px;text-align:left;vertical-align:top}
th{background:#f4f4f4}.num{text-align:right;font-variant-numeric:tabular-nums}
.chart{min-height:160px}.muted{color:#777}.verdict{margin:.2em 0}.pair{margin-left:2em}
details{margin:.5em 0}summary{cursor:pointer;font-weight:600}
"""
# Counts rendered charts and JS errors into <body data-*> so a headless browser can check.
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
document.body.dataset.jsErrors=errors.length;})();
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

    def chart(self, spec: dict[str, Any] | None) -> None:
        if spec is None:
            return
        self.count += 1
        chart_id = f"chart{self.count}"
        self.parts.append(f'<div class="chart" id="{chart_id}"></div>'
                          f'<script type="application/json" data-chart="{chart_id}">'
                          f"{script_json(_clean(spec))}</script>")

    def render(self) -> str:
        from plotly.offline import get_plotlyjs

        return ("<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
                f"<title>{esc(self.title)}</title><style>{STYLE}</style>"
                f"<script>{get_plotlyjs()}</script></head><body>"
                + "".join(self.parts) + f"<script>{BOOT}</script></body></html>")


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


@dataclass(frozen=True)
class ReportData:
    """What the campaign report renders: the analysis as stats/ holds it, and the records
    of the campaign (its runs' status, environment and settings)."""

    results_dir: Path
    analysis: Analysis
    records: pd.DataFrame  # status of every run (runs table)
    environment: dict[str, Any]
    campaign: dict[str, Any]

    @property
    def name(self) -> str:
        return str(self.campaign.get("name", self.results_dir.name))


Section = Callable[[ReportData, "Page"], None]


def build_report(data: ReportData) -> str:
    """The whole report as one HTML string: each of SECTIONS in order."""
    page = Page(f"fslab report: {data.name}")
    for section in SECTIONS:
        section(data, page)
    return page.render()


def _title(data: ReportData, page: Page) -> None:
    page.add(f"<h1>fslab report: {esc(data.name)}</h1><p class='muted'>"
             f"{esc(data.results_dir)} · generated {esc(time.strftime('%Y-%m-%d %H:%M'))}</p>")


def _verdict_section(data: ReportData, page: Page) -> None:
    """The answer first: per workload, its ranking chart and sentence; every pair folded."""
    page.add("<h2>Which target is faster, by how much, how sure</h2>")
    headline, ranking = data.analysis.headline, data.analysis.ranking
    if not headline.empty and not ranking.empty:
        for row in headline.itertuples():
            page.chart(charts.ranking_chart(ranking, row))
    page.add(_verdicts(data.analysis.verdicts))
    summary = data.analysis.summary
    cached = summary[summary["cache_bound"]] if "cache_bound" in summary else summary[:0]
    if not cached.empty:
        cells = cached.drop_duplicates(["target", "workload"])
        page.add("<h3>Cache-bound results</h3><p>These cells are not a property of the file "
                 "system, and are not ranked:</p><ul>" + "".join(
                     f"<li>{esc(r.target)} · {esc(r.workload)}: {esc(r.cache_bound_reason)}"
                     "</li>" for r in cells.itertuples()) + "</ul>")
    page.chart(charts.verdict_heatmap(summary))
    pairs = data.analysis.pairwise
    if not pairs.empty:
        shown = pairs.rename(columns=PAIR_HEADINGS)[list(PAIR_HEADINGS.values())]
        page.add(f"<details><summary>Every pair ({len(pairs)}; the primary ones are the "
                 "verdicts, the others exploratory)</summary>"
                 + table(shown, list(shown.columns)) + "</details>")


# Human headings for the pair table (machine names stay in the CSV files).
PAIR_HEADINGS = {"workload": "workload", "op": "op", "metric": "metric",
                 "primary": "primary (a verdict)", "a": "A", "b": "B",
                 "ratio": "A / B (geometric means)", "ratio_ci_low": "interval from",
                 "ratio_ci_high": "interval to", "alpha": "level (α per pair)",
                 "p_adj": "adjusted p", "mde_ratio": "could have found",
                 "note": "note"}


def _workloads(data: ReportData, page: Page) -> None:
    summary, values = data.analysis.summary, data.analysis.runs
    for workload in sorted(summary["workload"].unique()) if not summary.empty else []:
        page.add(f"<h2>Workload {esc(workload)}</h2>")
        for spec in charts.bar_charts(summary, workload):
            page.chart(spec)
        if not values.empty:
            page.chart(charts.strip_chart(values, workload))
            page.chart(charts.qq_chart(values, workload))
        page.chart(charts.percentile_chart(summary, workload))


def _statistics(data: ReportData, page: Page) -> None:
    page.add("<h2>Statistics</h2>")
    analysis = data.analysis
    summary = analysis.summary
    pairs = list(zip(summary["workload"].astype(str), summary["metric"].astype(str),
                     strict=True))
    shown = headline_of_each(pairs)  # per workload: bonnie++ keeps its maximum latency
    headline = summary[[pair in shown for pair in pairs]]
    page.add("<details open><summary>Per cell (headline metrics)</summary>" + table(
        headline, ["target", "workload", "op", "metric", "n", "geomean", "ci_low", "ci_high",
                   "mean", "median", "median_ci_low", "median_ci_high", "median_ci_level",
                   "cv", "outliers",
                   "of_raw", "cache_bound_reason"],
        units=True) + "</details>")
    hosts = analysis.hosts
    page.add("<details><summary>The model of each comparison, and why</summary>"
             + table(analysis.tests, list(analysis.tests.columns)) + "</details>")
    page.add("<details><summary>Pairwise comparisons and effect sizes</summary>"
             + table(analysis.pairwise, list(analysis.pairwise.columns)) + "</details>")
    if not hosts.empty:
        page.add("<details open><summary>Per-host spread of distributed runs (a diagnostic: "
                 "the aggregate over all hosts is the observation)</summary>"
                 + table(hosts, list(hosts.columns)) + "</details>")


def _failed_runs(data: ReportData, page: Page) -> None:
    runs = data.records
    bad = runs[runs["status"] != "ok"] if not runs.empty else runs
    page.add("<h2>Failed and unsupported runs</h2>" + (
        table(bad, ["run_id", "status", "reason"]) if not bad.empty else "<p>None.</p>"))
    if "disturbed" in runs and runs["disturbed"].astype(bool).any():
        busy = runs[runs["disturbed"].astype(bool)]
        page.add(f"<h2>Runs the machine disturbed ({len(busy)} of {len(runs)})</h2><p>While "
                 "these measured, other processes, stolen CPU, memory pressure or other I/O "
                 "crossed fslab's thresholds (fslab/witness.py); fslab run "
                 "--rerun-disturbed measures them again.</p>"
                 + table(busy, ["run_id", "others_cpu_pct", "steal_pct", "disturbed_by"]))


def _setup(data: ReportData, page: Page) -> None:
    page.add("<h2>Setup and environment</h2>" + _environment(data.environment))
    page.add("<h2>Methodology</h2>" + _methodology(data.campaign, data.records,
                                                    data.analysis))


# The report, top to bottom: a new part is one function (data, page) and one line here.
SECTIONS: list[Section] = [_title, _verdict_section, _workloads, _statistics, _failed_runs,
                           _setup]


# How each kind of verdict row (stats/verdicts.csv) is shown: a heading, a ranking
# sentence, or a sentence set in under its ranking.
VERDICT_TAGS = {"workload": "<h3>{}</h3>", "pair": "<p class='verdict pair'>{}</p>",
                "caveat": "<p class='verdict pair'>{}</p>"}


def _verdicts(verdicts: pd.DataFrame) -> str:
    """The verdict rows: workload headings, ranking sentences, their pairs and caveats."""
    return "".join(VERDICT_TAGS.get(kind, "<p class='verdict'>{}</p>").format(esc(text))
                   for kind, text in zip(verdicts.get("kind", []), verdicts.get("text", []),
                                         strict=True))


def _environment(environment: dict[str, Any]) -> str:
    flat = {k: v for k, v in environment.items() if not isinstance(v, dict)}
    rows = "".join(f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>" for k, v in flat.items())
    tools = environment.get("tools", {})
    rows += "".join(f"<tr><th>{esc(k)} version</th><td>{esc(v)}</td></tr>"
                    for k, v in tools.items())
    targets = environment.get("targets", {})
    target_rows = "".join(
        f"<tr><th>{esc(name)}</th><td>{esc(json.dumps(info, default=str))}</td></tr>"
        for name, info in targets.items())
    return f"<table>{rows}</table>" + (f"<h3>Targets</h3><table>{target_rows}</table>"
                                       if target_rows else "")


def _methodology(campaign: dict[str, Any], runs: pd.DataFrame, analysis: Analysis) -> str:
    """How this campaign ran (its records), then each analysis step's own statement
    (stats/methods.csv, written by the step's module)."""
    dropped = int(runs["caches_dropped"].fillna(False).astype(bool).sum()) \
        if "caches_dropped" in runs else 0
    summary = analysis.summary
    items = [
        f"Iterations: {campaign.get('iterations', 'unknown')} per (target, workload); a "
        f"fresh file system per {campaign.get('fresh', 'iteration')}.",
        f"Order: (target, workload) pairs shuffled within each iteration with seed "
        f"{campaign.get('seed', 'unknown')}.",
        f"Caches: synced and dropped before {dropped} of {len(runs)} runs.",
        f"Runtime per fio job: {campaign.get('runtime', 'n/a')} s.",
        *[str(method) for method in analysis.methods.get("method", [])],
        "Implementations: " + "; ".join(
            f"{t} = {i}" for t, i in summary.drop_duplicates("target")[
                ["target", "fs_impl"]].itertuples(index=False)) if not summary.empty else "",
    ]
    return "<ul>" + "".join(f"<li>{esc(item)}</li>" for item in items if item) + "</ul>"
