"""The report's part for aging runs (`fslab age`): how each run was set up and went, each
operation's latency, and how the file system aged (its probes over time); each
operation's latency over the run, with its trend, is in report/aging_figures.py.

Drawn from the analysis like every other part: latency from the sections each run's
latency is observed on (analysis/cells/observations.py), the aging from the probes' states
(stats/probe_states.csv). Several aging runs in one report (80 % against 99 % utilisation,
ext4 against xfs) are a column or a line each.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from fslab.core.metrics import title
from fslab.core.run_parts import TargetDescription
from fslab.core.units import format_bytes, format_value
from fslab.report.data import ReportData, ResultsSource
from fslab.report.page import Chart, Page, esc

AGING = "aging"  # the workload of an aging run (aging/age.py)
LATENCY = ("op_lat_p50_ns", "op_lat_mean_ns")
# The probes' states, in the order shown: metric -> y-axis label
EVOLUTION = {"file_layout_score": "score (1 = every file contiguous)",
             "whole_files_share": "share of files", "free_extents": "free extents",
             "largest_free_bytes": "bytes", "used_share": "share of the capacity"}
# The aging settings (campaign.toml [aging]) shown per run, in order.
SETTINGS = ("recipe", "utilization", "fstrim_every", "fstrim_seconds", "ops", "duration_s",
            "seed", "max_files", "file_choice", "sizes")


def aging_runs(data: ReportData, page: Page) -> None:
    """The aging part of a report; nothing when no aging run is in it."""
    runs = data.analysis.runs
    if runs.empty or not (runs["workload"].astype(str) == AGING).any():
        return
    summary = data.analysis.summary
    cells = summary[summary["workload"].astype(str) == AGING]
    targets = sorted(cells["target"].astype(str).unique())
    page.add("<h2>Aging runs</h2><p class='muted'>Each operation's latency is observed on "
             "20 stretches of the run in time order (sectioning): an interval here widens "
             "when the run drifts, instead of counting every operation as independent.</p>")
    page.add("<h3>Setup and outcome</h3>" + _setup_table(data, targets))
    page.add("<h3>Latency per operation</h3>" + _latency_table(cells, targets))
    states = data.analysis.probe_states
    if not states.empty:
        page.add("<h3>How each file system aged</h3>")
        for metric, label in EVOLUTION.items():
            page.chart(_evolution(states[states["metric"].astype(str) == metric], metric,
                                  label))


def _source_of(data: ReportData, target: str) -> tuple[ResultsSource, str]:
    """The directory a target came from, and its name there."""
    for source in data.sources:
        for name, label in source.targets.items():
            if label == target:
                return source, name
    return data.sources[0], target


def _setup_table(data: ReportData, targets: list[str]) -> str:
    rows: dict[str, list[str]] = {}
    outcomes = data.records.set_index(data.records["target"].astype(str))["outcome"] \
        if "outcome" in data.records else pd.Series(dtype=str)
    for target in targets:
        source, name = _source_of(data, target)
        described = source.environment.targets.get(name) or TargetDescription()
        aging = source.campaign.aging
        mkfs = described.details.get("mkfs_command") or []
        values = {"file system": f"{described.fs or '?'} ({described.fs_impl})",
                  "image": format_bytes(described.image_size)
                  if described.image_size else "–",
                  **{key: aging.get(key, "–") for key in SETTINGS},
                  "outcome": outcomes.get(target, "–") if target in outcomes.index else "–",
                  "mkfs": " ".join(str(word) for word in mkfs) or "–",
                  "mount options": described.mount_options or "–"}
        for key, value in values.items():
            rows.setdefault(key, []).append("–" if value is None else str(value))
    head = "".join(f"<th>{esc(t)}</th>" for t in targets)
    body = "".join(
        f"<tr{_differs(values, len(targets))}><th>{esc(key)}</th>"
        + "".join(f"<td>{esc(v)}</td>" for v in values) + "</tr>"
        for key, values in rows.items())
    return f"<table><tr><th></th>{head}</tr>{body}</table>"


def _differs(values: list[str], count: int) -> str:
    return " style='background:#fff3cd'" if count > 1 and len(set(values)) > 1 else ""


def _latency_table(cells: pd.DataFrame, targets: list[str]) -> str:
    """Per operation and target: median and mean latency, each with its 95 % interval."""
    shown = cells[cells["metric"].astype(str).isin(LATENCY)]
    head = "".join(f"<th>{esc(t)}: {esc(title(m))}</th>" for t in targets for m in LATENCY)
    body = ""
    for op, rows in shown.groupby(shown["op"].astype(str), sort=True):
        found = {(str(r.target), str(r.metric)): r for r in rows.itertuples()}
        cells_html = "".join(
            f"<td class='num'>{_interval(found.get((t, m)))}</td>" for t in targets
            for m in LATENCY)
        body += f"<tr><th>{esc(op)}</th>{cells_html}</tr>"
    return f"<table><tr><th>operation</th>{head}</tr>{body}</table>"


def _interval(row: Any) -> str:
    if row is None:
        return "–"
    text = format_value(row.geomean, "ns")
    if row.ci_low == row.ci_low and row.ci_high == row.ci_high:
        text += (f" <span class='muted'>({esc(format_value(row.ci_low, 'ns'))}–"
                 f"{esc(format_value(row.ci_high, 'ns'))})</span>")
    return text


def _evolution(rows: pd.DataFrame, metric: str, label: str) -> Chart | None:
    if rows.empty:
        return None
    data = [{"type": "scatter", "mode": "lines+markers", "name": str(target),
             "x": group["sample"].tolist(), "y": group["value"].tolist()}
            for target, group in rows.groupby(rows["target"].astype(str), sort=True)]
    return {"data": data, "layout": {
        "title": {"text": f"{title(metric, long=True).capitalize()} over the run"},
        "height": 320, "xaxis": {"title": {"text": "operations"}},
        "yaxis": {"title": {"text": label}}}}
