"""The report's sweep part: per swept job, its scaling curves, heat maps and forest
charts (report/sweep_charts.py), each naming the fio version and the job's options, then
its best configuration and those within reach."""

from __future__ import annotations

from fslab.core.cell_keys import is_numeric
from fslab.report import sweep_charts
from fslab.report.data import ReportData
from fslab.report.page import Page, esc, table


def sweep_section(data: ReportData, page: Page) -> None:
    """Nothing without a sweep."""
    effects = data.analysis.effects
    if effects is None or effects.empty:
        return
    summary, best = data.analysis.summary, data.analysis.best
    declared = data.campaign.levels
    page.add("<h2>Sweeps: which options, at what load</h2><p class='muted'>Each factor's "
             "effect is a ratio to its first level, from one model of the runs' logarithms "
             "with iterations as blocks (stats/effects.csv); bands are each cell's own 95 % "
             "interval.</p>")
    for job, rows in effects.groupby("workload", sort=False):
        job = str(job)
        op, metric = str(rows["op"].iloc[0]), str(rows["metric"].iloc[0])
        factors = list(dict.fromkeys(rows["factor"].astype(str)))
        caption = esc(job_caption(data, job, factors))
        page.add(f"<h3>{esc(job)}</h3>")
        cells = summary[summary["job"].astype(str) == job]
        numeric = [f for f in factors if f in cells
                   and is_numeric(cells[f].dropna().astype(str).unique().tolist())]
        for factor in numeric:
            page.chart(sweep_charts.scaling_chart(summary, job, op, metric, factor,
                                                  [f for f in factors if f != factor],
                                                  caption))
        if len(numeric) >= 2:
            for chart in sweep_charts.heatmaps(summary, job, op, metric,
                                               (numeric[0], numeric[1]), declared, caption):
                page.chart(chart)
        for factor in factors:
            if factor not in numeric:
                page.chart(sweep_charts.forest_chart(effects, job, factor, caption))
        mine = best[best["workload"].astype(str) == job] if not best.empty else best
        if not mine.empty:
            page.add("<p>The best configuration and those the evidence cannot separate "
                     "from it:</p>" + table(mine, ["role", "configuration", "geomean", "ratio",
                                                    "ratio_ci_low", "ratio_ci_high",
                                                    "decision", "note"]))


def job_caption(data: ReportData, job: str, factors: list[str]) -> str:
    """'fio 3.33; randread: rw=randread bs=4k numjobs=4 ... ; swept: iodepth' — the job's
    options as its runs recorded them (run.json), not as a preset says today."""
    options = data.job_options.get(job)
    if not options:
        return f"swept: {', '.join(factors)}"
    text = " ".join(f"{k}={v}" for k, v in options.items()
                    if k not in factors and k not in ("runtime", "size"))
    version = data.environment.tools.get("fio")
    head = f"fio {version}; " if version else ""
    return f"{head}{job}: {text}; swept: {', '.join(factors)}"
