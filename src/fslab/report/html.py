"""The report of a results directory (or of several seen as one): its sections in order,
on one self-contained page (report/page.py)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable

import pandas as pd

from fslab.analysis.across.compare import setting_differences
from fslab.core.campaign_settings import CampaignSettings
from fslab.core.environment_record import Environment
from fslab.core.metrics import headline_of_each
from fslab.report import aging_section, charts
from fslab.report.aging_figures import AGING_KINDS, aging_answer, aging_figures
from fslab.report.data import ReportData
from fslab.report.page import Page, esc, table
from fslab.report.pooled_section import pooled_section
from fslab.report.study_section import OWN, study_interval_column, study_section
from fslab.report.sweep_section import sweep_section
from fslab.results.stats_files import Analysis

Section = Callable[[ReportData, "Page"], None]


def build_report(data: ReportData) -> str:
    """The whole report as one HTML string: each of SECTIONS in order."""
    page = Page(f"fslab report: {data.name}")
    for section in SECTIONS:
        section(data, page)
    return page.render()


def _title(data: ReportData, page: Page) -> None:
    places = ", ".join(str(source.path) for source in data.sources)
    page.add(f"<h1>fslab report: {esc(data.name)}</h1><p class='muted'>"
             f"{esc(places)} · generated {esc(time.strftime('%Y-%m-%d %H:%M'))}</p>")
    if len(data.sources) > 1:
        page.add("<p>" + esc(f"{len(data.sources)} results directories seen as one: each "
                             "target is labelled by the directory it came from; iterations "
                             "of different directories are not blocks of each other "
                             "(compared unblocked), those of one directory still are.")
                 + "</p>")


def _verdict_section(data: ReportData, page: Page) -> None:
    """The answer first: per workload, its ranking chart and sentence; every pair folded.
    Of a directory with sittings it follows the pooled answer, labelled as one sitting's,
    and the line its verdicts wrote before the later sittings existed is left out."""
    verdicts = data.analysis.verdicts
    if data.pooled is None:
        page.add("<h2>Which target is faster, by how much, how sure</h2>")
    else:
        k = max((q.k for q in data.pooled[0]), default=1)
        page.add(f"<h2>Sitting 1 alone: which target was faster in that one sitting</h2>"
                 f"<p class='muted'>{esc(ONE_SITTING.format(k=k))}</p>")
        if "kind" in verdicts:
            verdicts = verdicts[verdicts["kind"].astype(str) != "repeats"]
    headline, ranking = data.analysis.headline, data.analysis.ranking
    if not headline.empty and not ranking.empty:
        for row in headline.itertuples():
            page.chart(charts.ranking_chart(ranking, row))
    if "kind" in verdicts:  # the aging question's rows are its own part's (aging_answer)
        verdicts = verdicts[~verdicts["kind"].astype(str).str.startswith(AGING_KINDS)]
    page.add(_verdicts(verdicts))
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
    headline = study_interval_column(summary[[pair in shown for pair in pairs]],
                                     analysis.extra.get("study_intervals.csv"))
    studied = ["the study's interval"] if "the study's interval" in headline else []
    page.add("<details open><summary>Per cell (headline metrics)</summary>" + table(
        headline, ["target", "workload", "op", "metric", "n", "geomean", "ci_low", "ci_high",
                   *studied, "mean", "median", "median_ci_low", "median_ci_high",
                   "median_ci_level", "cv", "outliers", "of_raw", "cache_bound_reason"],
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
                 "crossed fslab's thresholds (fslab/host/witness.py); fslab run "
                 "--rerun-disturbed measures them again.</p>"
                 + table(busy, ["run_id", "others_cpu_pct", "steal_pct", "disturbed_by"]))


def _setup(data: ReportData, page: Page) -> None:
    page.add("<h2>Setup and environment</h2>")
    if len(data.sources) > 1:
        first = data.sources[0]
        for other in data.sources[1:]:
            differences = setting_differences(first.environment, other.environment,
                                              first.campaign, other.campaign)
            page.add(f"<h3>{esc(first.label)} → {esc(other.label)}: what differs</h3>" + (
                "<table><tr><th>setting</th><th>" + esc(first.label) + "</th><th>"
                + esc(other.label) + "</th></tr>" + "".join(
                    f"<tr style='background:#fff3cd'><td>{esc(w)}</td><td>{esc(a)}</td>"
                    f"<td>{esc(b)}</td></tr>" for w, a, b in differences) + "</table>"
                if differences else "<p>Nothing recorded differs.</p>"))
    for source in data.sources:
        heading = f"<h3>{esc(source.label)}</h3>" if len(data.sources) > 1 else ""
        page.add(heading + _environment(source.environment))
    page.add("<h2>Methodology</h2>" + _methodology(data.campaign, data.records,
                                                    data.analysis))


# The report, top to bottom: a new part is one function (data, page) and one line here.
def _intervals_section(data: ReportData, page: Page) -> None:
    """Each workload's throughput over its measured window, one line per target (its
    first iteration; slices joined), so a warm-up, a cliff or a stall shows."""
    if data.intervals is None or data.intervals.empty:
        return
    page.add("<h2>Throughput over each run</h2><p class='muted'>fio's own per-interval "
             "logs (100 ms averages); runs measured in slices show their slices one after "
             "another. Runs whose throughput stepped or trended are named in the "
             "verdicts.</p>")
    for workload, rows in data.intervals.groupby("workload", sort=True, observed=True):
        page.chart(charts.intervals_chart(str(workload), rows))


def _further_tables(data: ReportData, page: Page) -> None:
    """The tables no part of the report names: the plug-ins' statistics
    (analysis/statistic.py) and any step's table of its own (analysis/step.py), each
    under its method."""
    analysis = data.analysis
    extra = {name: frame for name, frame in analysis.extra.items() if name not in OWN}
    if not extra:
        return
    methods = dict(zip(analysis.methods.get("step", []), analysis.methods.get("method", []),
                       strict=True))
    page.add("<h2>Further tables</h2>")
    for name, frame in sorted(extra.items()):
        step = name.removesuffix(".csv")  # a statistic's or step's table is stats/NAME.csv
        said = methods.get(step, "")
        shown = table(frame, list(frame.columns)) if not frame.empty else \
            "<p>Nothing to show.</p>"
        if len(frame) > FOLDED_ROWS:  # a long table (a figure's data) behind a fold
            shown = f"<details><summary>{len(frame)} rows</summary>{shown}</details>"
        page.add(f"<h3 id='statistic-{esc(step)}'>{esc(step)}</h3>"
                 + (f"<p class='muted'>{esc(said)}</p>" if said else "") + shown)


def _pooled(data: ReportData, page: Page) -> None:
    """A directory whose sittings were pooled (`fslab run --again`): the pooled answers."""
    if data.pooled is not None:
        pooled_section(page, *data.pooled)


FOLDED_ROWS = 40


ONE_SITTING = ("These are the first sitting's own answers: its fresh file systems, in one "
               "stretch of time, and its intervals are about that sitting. The answer over "
               "all {k} sittings, and where the next one should fall, is above.")


SECTIONS: list[Section] = [_title, aging_answer, _pooled, _verdict_section, study_section,
                           sweep_section, aging_section.aging_runs, aging_figures, _workloads,
                           _intervals_section, _statistics, _further_tables,
                           _failed_runs, _setup]


# How each kind of verdict row (stats/verdicts.csv) is shown: a heading, a ranking
# sentence, or a sentence set in under its ranking.
VERDICT_TAGS = {"workload": "<h3>{}</h3>", "pair": "<p class='verdict pair'>{}</p>",
                "caveat": "<p class='verdict pair'>{}</p>",
                "best": "<p class='verdict'><b>{}</b></p>",
                "factor": "<p class='verdict pair'>{}</p>"}


def _verdicts(verdicts: pd.DataFrame) -> str:
    """The verdict rows: workload headings, ranking sentences, their pairs and caveats."""
    return "".join(VERDICT_TAGS.get(kind, "<p class='verdict'>{}</p>").format(esc(text))
                   for kind, text in zip(verdicts.get("kind", []), verdicts.get("text", []),
                                         strict=True))


def _environment(environment: Environment) -> str:
    flat = {k: v for k, v in environment.to_json().items() if not isinstance(v, dict)}
    rows = "".join(f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>" for k, v in flat.items())
    rows += "".join(f"<tr><th>{esc(k)} version</th><td>{esc(v)}</td></tr>"
                    for k, v in environment.tools.items())
    target_rows = "".join(
        f"<tr><th>{esc(name)}</th><td>{esc(json.dumps(info.to_json(), default=str))}</td></tr>"
        for name, info in environment.targets.items())
    return f"<table>{rows}</table>" + (f"<h3>Targets</h3><table>{target_rows}</table>"
                                       if target_rows else "")


def _methodology(campaign: CampaignSettings, runs: pd.DataFrame, analysis: Analysis) -> str:
    """How this campaign ran (its records), then each analysis step's own statement
    (stats/methods.csv, written by the step's module)."""
    dropped = int(runs["caches_dropped"].fillna(False).astype(bool).sum()) \
        if "caches_dropped" in runs else 0
    summary = analysis.summary
    items = [
        f"Iterations: {campaign.iterations or 'unknown'} per (target, workload); a "
        f"fresh file system per {campaign.fresh or 'iteration'}.",
        f"Order: (target, workload) pairs shuffled within each iteration with seed "
        f"{'unknown' if campaign.seed is None else campaign.seed}.",
        f"Caches: synced and dropped before {dropped} of {len(runs)} runs.",
        f"Runtime per fio job: {campaign.runtime or 'n/a'} s.",
        *[str(method) for method in analysis.methods.get("method", [])],
        "Implementations: " + "; ".join(
            f"{t} = {i}" for t, i in summary.drop_duplicates("target")[
                ["target", "fs_impl"]].itertuples(index=False)) if not summary.empty else "",
    ]
    return "<ul>" + "".join(f"<li>{esc(item)}</li>" for item in items if item) + "</ul>"
