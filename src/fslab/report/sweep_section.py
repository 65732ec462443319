"""The report's sweep part: per swept job, its scaling curves, heat maps and forest
charts (report/sweep_charts.py), each naming the fio version and the job's options, then
its best configuration and those within reach."""

from __future__ import annotations

from typing import Any

import pandas as pd

from fslab.core.cells import declared_levels, is_numeric
from fslab.report import sweep_charts
from fslab.report.data import ReportData
from fslab.report.page import Page, esc, table


def sweep_section(data: ReportData, page: Page) -> None:
    """Nothing without a sweep."""
    effects = data.analysis.effects
    if effects is None or effects.empty:
        return
    summary, best = data.analysis.summary, data.analysis.best
    declared = declared_levels(data.campaign)
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
    """'fio 3.33; randread (direct5): rw=randread bs=4k numjobs=4 ... ; swept: iodepth'."""
    campaign = data.campaign
    fixed = {name: levels[0] for name, levels in (campaign.get("sweep") or {}).items()
             if isinstance(levels, list) and len(levels) == 1}
    options = _job_options(campaign, job.split("/")[0])
    if options is None:
        return f"swept: {', '.join(factors)}"
    shown = {**options, **{k: v for k, v in fixed.items() if k in options or _is_fio(campaign)}}
    text = " ".join(f"{k}={v}" for k, v in shown.items() if k not in factors)
    version = (data.environment.get("tools") or {}).get("fio")
    head = f"fio {version}; " if version and _is_fio(campaign) else ""
    return f"{head}{job}: {text}; swept: {', '.join(factors)}"


def _is_fio(campaign: dict[str, Any]) -> bool:
    from fslab.workloads.suites import get_suite

    presets = [w.get("preset") for w in campaign.get("workload") or [] if w.get("preset")]
    return any(get_suite(p).keys is None for p in presets)


def _job_options(campaign: dict[str, Any], job: str) -> dict[str, Any] | None:
    """The job's options as its preset gives them, with the campaign's own on top."""
    from fslab.core.errors import UserError
    from fslab.workloads.suites import get_suite

    for entry in campaign.get("workload") or []:
        preset = entry.get("preset")
        if not preset:
            continue
        try:
            suite = get_suite(str(preset))
        except UserError:
            continue
        if job not in suite.parameters and job not in suite.job_names(entry.get("options")):
            continue
        params = suite.parameters.get(job) or next(iter(suite.parameters.values()))
        values = {key: param.value for key, param in params.items()
                  if key not in ("runtime", "size")}
        return pd.Series({**values, **(entry.get("options") or {})}).to_dict()
    return None
