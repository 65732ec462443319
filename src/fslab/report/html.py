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

from fslab.metrics import HEADLINE_METRICS
from fslab.report import charts
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
    """What the campaign report renders: the analysis (read back from stats/) and the
    record of the campaign."""

    results_dir: Path
    summary: pd.DataFrame
    tests: pd.DataFrame
    pairwise: pd.DataFrame
    verdicts: list[str]
    values: pd.DataFrame  # per run and metric (analysis.observations.per_run)
    runs: pd.DataFrame  # status of every run
    environment: dict[str, Any]
    campaign: dict[str, Any]
    hosts: pd.DataFrame | None = None
    headline: pd.DataFrame | None = None  # one row per primary question (headline.csv)
    ranking: pd.DataFrame | None = None  # per question × target (ranking.csv)

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
    headline, ranking = data.headline, data.ranking
    if headline is not None and ranking is not None and not headline.empty:
        for row in headline.itertuples():
            page.chart(charts.ranking_chart(ranking, row))
    page.add(_verdicts(data.verdicts))
    summary = data.summary
    cached = summary[summary["cache_bound"]] if "cache_bound" in summary else summary[:0]
    if not cached.empty:
        cells = cached.drop_duplicates(["target", "workload"])
        page.add("<h3>Cache-bound results</h3><p>These cells are not a property of the file "
                 "system, and are not ranked:</p><ul>" + "".join(
                     f"<li>{esc(r.target)} · {esc(r.workload)}: {esc(r.cache_bound_reason)}"
                     "</li>" for r in cells.itertuples()) + "</ul>")
    page.chart(charts.verdict_heatmap(summary))
    pairs = data.pairwise
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
    summary, values = data.summary, data.values
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
    headline = data.summary[data.summary["metric"].isin(HEADLINE_METRICS)]
    page.add("<details open><summary>Per cell (headline metrics)</summary>" + table(
        headline, ["target", "workload", "op", "metric", "n", "geomean", "ci_low", "ci_high",
                   "mean", "median", "median_ci_low", "median_ci_high", "median_ci_level",
                   "cv", "outliers",
                   "of_raw", "cache_bound_reason"],
        units=True) + "</details>")
    hosts = data.hosts
    page.add("<details><summary>The model of each comparison, and why</summary>"
             + table(data.tests, list(data.tests.columns)) + "</details>")
    page.add("<details><summary>Pairwise comparisons and effect sizes</summary>"
             + table(data.pairwise, list(data.pairwise.columns)) + "</details>")
    if hosts is not None and not hosts.empty:
        page.add("<details open><summary>Per-host spread of distributed runs (a diagnostic: "
                 "the aggregate over all hosts is the observation)</summary>"
                 + table(hosts, list(hosts.columns)) + "</details>")


def _failed_runs(data: ReportData, page: Page) -> None:
    runs = data.runs
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
    page.add("<h2>Methodology</h2>" + _methodology(data.campaign, data.runs,
                                                    data.summary))


# The report, top to bottom: a new part is one function (data, page) and one line here.
SECTIONS: list[Section] = [_title, _verdict_section, _workloads, _statistics, _failed_runs,
                           _setup]


def _verdicts(lines: list[str]) -> str:
    """verdicts.txt as paragraphs: workload headings, ranking lines, their pairs."""
    parts = []
    for line in lines:
        if line.startswith("== ") and line.endswith(" =="):
            parts.append(f"<h3>{esc(line[3:-3])}</h3>")
        elif line.startswith("    "):
            parts.append(f"<p class='verdict pair'>{esc(line.strip())}</p>")
        else:
            parts.append(f"<p class='verdict'>{esc(line.strip())}</p>")
    return "".join(parts)


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


def _methodology(campaign: dict[str, Any], runs: pd.DataFrame,
                 summary: pd.DataFrame) -> str:
    dropped = int(runs["caches_dropped"].fillna(False).astype(bool).sum()) \
        if "caches_dropped" in runs else 0
    items = [
        f"Iterations: {campaign.get('iterations', 'unknown')} per (target, workload); a "
        f"fresh file system per {campaign.get('fresh', 'iteration')}.",
        f"Order: (target, workload) pairs shuffled within each iteration with seed "
        f"{campaign.get('seed', 'unknown')}.",
        f"Caches: synced and dropped before {dropped} of {len(runs)} runs.",
        f"Runtime per fio job: {campaign.get('runtime', 'n/a')} s.",
        "Observation: one fio section of one run. The clones of a section (numjobs) are "
        "summed (IOPS, bandwidth); latency means are weighted by completed I/Os; "
        "percentiles come from merged json+ bins. Different sections of one job file are "
        "different observations (workload/section), never added up; jobs fio grouped "
        "(group_reporting) stay one.",
        "Cache-bound: a cell whose IOPS or bandwidth exceeds 1.25× what the loop images' "
        "own disk delivered for the same job (a raw loop device with direct I/O on data "
        "just written, measured in the same rounds as the cells and compared iteration "
        "by iteration: environment.json 'ceilings_by_iteration'; for jobs not measured "
        "in rounds, the better of two runs before the campaign: 'ceilings'), or whose "
        "runs did buffered "
        "I/O on files that fit in RAM, is marked and never ranked.",
        "CPU: the workload's own (fio's usr + sys, as % of one core, summed over a "
        "section's jobs), system-wide CPU from /proc/stat during the run (kernel threads "
        "and daemons included), and each per completed I/O.",
        "Per-cell intervals: on the log scale, like the comparisons (the geometric mean "
        "with a Student t interval of the logs); medians with the exact order-statistic "
        "(binomial) interval, whose achieved level is stated (at 3 iterations the widest "
        "one, minimum to maximum, is a 75 % interval). Outliers are flagged by the "
        "median/MAD rule (3.5), never dropped.",
        "Questions: each workload has one primary metric (random I/O: IOPS; sequential: "
        "bandwidth; file workloads: operations per second; a campaign may name others), "
        "and its verdict answers only that; bandwidth that is IOPS times a fixed block "
        "size is not tested again. Every primary pair of the campaign is one family, "
        "Bonferroni-adjusted together; other metrics are exploratory estimates with their "
        "own 95 % intervals.",
        "Between targets, on the ratio scale: values are compared as logarithms, so every "
        "effect is a ratio of geometric means ('xfs 1.8× ext4'). Each pair is compared "
        "within the iterations both targets ran (a paired t on the log ratios, the block "
        "design's contrast): a slow or fast moment of the machine moves both targets and "
        "cancels instead of counting as noise, and each pair keeps its own spread. "
        "Imported results: Welch's t on the logs. The adjusted p is the Bonferroni p and "
        "the interval the matching simultaneous one, so 'the interval excludes 1' and "
        "'evidence of a difference' always agree. Rankings chain targets with '>' only "
        "where every target before it is better than every one after it. 'Could have "
        "found R×' is the ratio that pair's test finds 4 times in 5 (80 % power, noncentral "
        "t) at its n, noise and level. Evidence is worded by the adjusted p (moderate < "
        "0.05, strong < 0.01, very strong < 0.001) and size by the ratio (small < 1.05×, "
        "moderate < 1.25×, large < 2×).",
        "Adaptive runs (--until-ci, --until-detectable): the campaign's first iterations "
        "are a pilot that decides how many more to run; estimates and verdicts use only "
        "the iterations after it, so stopping on a lucky spread cannot inflate them.",
        "Shared variation: the share of the log variance shared by every target within "
        "an iteration (intraclass correlation of the two-way layout, iterations × "
        "targets), with its exact F-based 95 % interval.",
        "Implementations: " + "; ".join(
            f"{t} = {i}" for t, i in summary.drop_duplicates("target")[
                ["target", "fs_impl"]].itertuples(index=False)) if not summary.empty else "",
    ]
    return "<ul>" + "".join(f"<li>{esc(item)}</li>" for item in items if item) + "</ul>"
