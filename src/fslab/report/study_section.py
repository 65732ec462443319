"""The report's part "the study's way": where a study's preset ran, the study's own
interval beside fslab's (stats/study_intervals.csv), a conclusion the study's own table
contradicts, and the study's own tests beside fslab's answer to the same question
(stats/study_methods.csv) with the residuals' Q–Q figures (stats/study_qq.csv)."""

from __future__ import annotations

import pandas as pd

from fslab.core.metrics import title
from fslab.core.units import format_value
from fslab.report.data import ReportData
from fslab.report.page import Page, esc, table

# The tables this part shows (the report's further tables leave them out).
OWN = ("study_intervals.csv", "study_methods.csv", "study_qq.csv")
METHOD_COLUMNS = ["test", "scope", "workload", "op", "metric", "groups", "n", "statistic",
                  "p", "r2", "r2_log", "n_notebook_rows", "p_notebook_rows", "study_says",
                  "fslab_says", "agree", "why"]


def study_section(data: ReportData, page: Page) -> None:
    """Nothing where no study's preset ran."""
    extra = data.analysis.extra
    intervals = extra.get("study_intervals.csv", pd.DataFrame())
    methods = extra.get("study_methods.csv", pd.DataFrame())
    points = extra.get("study_qq.csv", pd.DataFrame())
    if intervals.empty and methods.empty:
        return
    page.add("<h2 id='study-way'>The study's way</h2><p class='muted'>What the study "
             "that this preset comes from computed, computed here on this campaign's runs, "
             "beside fslab's answer to the same question (docs/studies.md).</p>")
    verdicts = data.analysis.verdicts
    claims = verdicts[verdicts["kind"].astype(str) == "study_claim"] if "kind" in verdicts \
        else verdicts[:0]
    for text in claims["text"] if not claims.empty else []:
        page.add(f"<p class='verdict'><b>{esc(text)}</b></p>")
    if not intervals.empty:
        page.add("<h3>The study's own interval, and fslab's</h3><p class='muted'>The "
                 "study's n counts samples (or fio jobs) of runs that share a file system "
                 "and a stretch of time; fslab's interval rests on the iterations, each a "
                 "fresh file system (its width over the study's: width ratio).</p>"
                 + table(shown_intervals(intervals),
                         ["target", "workload", "op", "metric", "rows", "n",
                          "the study's interval", "fslab's interval", "fslab_n",
                          "width_ratio"]))
    if not methods.empty:
        page.add("<h3>The notebook's tests beside fslab's answers</h3><p class='muted'>"
                 "One row per test: what the notebook would conclude at its own level "
                 "(0.05), fslab's decision on the same question, and why they disagree "
                 "where they do; p_notebook_rows is the p the notebook's own table (each "
                 "cell's mean and median repeated per iteration) gives.</p>"
                 + table(methods, [c for c in METHOD_COLUMNS if c in methods]))
    if not points.empty:
        for (workload, op, metric), rows in points.groupby(["workload", "op", "metric"],
                                                           sort=False):
            page.chart(qq_figure(rows, f"{workload} {op} {title(str(metric), long=True)}"))


def shown_intervals(intervals: pd.DataFrame) -> pd.DataFrame:
    """The intervals table with each interval as one readable cell, in its unit (the
    USB-stick report's in MB/s, as it printed them)."""
    out = intervals.copy()

    def bounds(low: float, high: float, unit: str, study: str) -> str:
        if study == "usb-files" and unit == "bytes/s":
            return f"{low / 1e6:.4g}–{high / 1e6:.4g} MB/s"
        return f"{format_value(low, unit)}–{format_value(high, unit)}"

    out["the study's interval"] = [bounds(r.low, r.high, str(r.unit), str(r.study))
                                   for r in out.itertuples()]
    out["fslab's interval"] = [bounds(r.fslab_low, r.fslab_high, str(r.unit), str(r.study))
                               for r in out.itertuples()]
    return out


def study_interval_column(summary: pd.DataFrame, intervals: pd.DataFrame | None
                          ) -> pd.DataFrame:
    """The per-cell table with a column "the study's interval" where a study's preset ran
    (the summary as it is elsewhere)."""
    if intervals is None or intervals.empty:
        return summary
    shown = shown_intervals(intervals)
    keyed = {(str(t), str(w), str(o), str(m)): f"{text} ({n} {rows})"
             for t, w, o, m, text, n, rows in zip(
                 shown["target"], shown["workload"], shown["op"], shown["metric"],
                 shown["the study's interval"], shown["n"], shown["rows"], strict=True)}
    out = summary.copy()
    out["the study's interval"] = [keyed.get((str(r.target), str(r.workload), str(r.op),
                                              str(r.metric)), "") for r in out.itertuples()]
    return out


def qq_figure(rows: pd.DataFrame, name: str) -> dict[str, object]:
    """The notebook's Q–Q plot of one ANOVA's residuals against the normal's quantiles,
    with the fitted line (scipy.stats.probplot, as statsmodels' qqplot draws it)."""
    return {"data": [
        {"type": "scatter", "mode": "markers", "name": "residuals",
         "x": rows["theoretical"].tolist(), "y": rows["residual"].tolist()},
        {"type": "scatter", "mode": "lines", "name": "fitted line",
         "x": rows["theoretical"].tolist(), "y": rows["fit"].tolist()},
    ], "layout": {"title": {"text": f"{name}: Q–Q plot of the one-way ANOVA's residuals "
                                    "(the notebook's check)"},
                  "xaxis": {"title": {"text": "normal quantile"}},
                  "yaxis": {"title": {"text": "residual"}}, "height": 360}}
