"""Aging runs side by side (`fslab report AGED1 AGED2 ...`): 80 % vs 99 % utilisation,
ext4 vs xfs, with and without fstrim — each run's setup and environment, per-operation
latency with 95 % intervals, and how layout, whole files and free extents evolved.

The per-run parts (latency table, evolution charts) also serve the single-run report.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import pandas as pd

from fslab.aging.latency import METHOD
from fslab.report.html import Page, esc
from fslab.units import format_bytes, format_ns

if TYPE_CHECKING:
    from fslab.aging.base_vs_new import AgingRun

# What the fragmentation probes say over time: (title, where, key, y-axis label)
EVOLUTION = [("Layout score (1 = every file contiguous)", "used", "layout_score", "score"),
             ("Share of files in one piece (optimally allocated)", "used", "optimal_share",
              "share of files"),
             ("Free extents (more = free space more fragmented)", "free", "free_extents",
              "free extents")]
SETUP = [("fs", lambda r: f"{_target(r).get('fs')} ({_target(r).get('fs_impl')})"),
         ("image", lambda r: _target(r).get("image_size") and format_bytes(
             _target(r)["image_size"])),
         ("recipe", lambda r: r.get("config", {}).get("recipe")),
         ("utilisation", lambda r: r.get("config", {}).get("utilization")),
         ("fstrim", lambda r: _fstrim(r.get("config", {}))),
         ("seed", lambda r: r.get("seed")),
         ("succeeded / attempted", lambda r: f"{r.get('ops_succeeded')} / "
                                             f"{r.get('ops_attempted')}"),
         ("seconds", lambda r: f"{r.get('seconds', 0):.1f}"),
         ("successful ops/s", lambda r: f"{r.get('ops_per_s', 0):.0f}"),
         ("stopped by", lambda r: r.get("stopped_by")),
         ("mkfs", lambda r: " ".join(_target(r).get("mkfs_command") or [])),
         ("mkfs version", lambda r: _target(r).get("mkfs_version")),
         ("mount options", lambda r: _target(r).get("mount_options")),
         ("loop direct I/O", lambda r: _target(r).get("loop_direct_io"))]


def build_aging_runs_report(runs: list[AgingRun]) -> str:
    """Several aging runs side by side, as one self-contained HTML page."""
    names = _unique([r.name for r in runs])
    page = Page("fslab aging runs: " + ", ".join(names))
    page.add(f"<h1>Aging runs compared</h1><p>{len(runs)} runs of <code>fslab age</code>. "
             f"Latency: {esc(METHOD)}.</p>")
    page.add("<h2>Setup, outcome and environment of each run</h2>" + setup_table(runs, names))
    page.add("<h2>Latency per operation</h2>" + latency_table_html(runs, names))
    page.chart(latency_chart(runs, names))
    page.add("<h2>How each file system aged</h2>")
    for spec in evolution_charts(runs, names):
        page.chart(spec)
    return page.render()


def setup_table(runs: list[AgingRun], names: list[str]) -> str:
    head = "".join(f"<th>{esc(n)}</th>" for n in names)
    body = ""
    for label, get in SETUP:
        values = [get(r.record) for r in runs]
        differs = len({str(v) for v in values}) > 1
        style = " style='background:#fff3cd'" if differs and len(runs) > 1 else ""
        body += (f"<tr{style}><th>{esc(label)}</th>"
                 + "".join(f"<td>{esc('–' if v is None else v)}</td>" for v in values)
                 + "</tr>")
    for title, part, key, _ in EVOLUTION:
        values = [r.last.get(part, {}).get(key) for r in runs]
        body += (f"<tr><th>at the end: {esc(title.split(' (')[0].lower())}</th>"
                 + "".join(f"<td class='num'>{_number(v)}</td>" for v in values) + "</tr>")
    return f"<table><tr><th></th>{head}</tr>{body}</table>"


def latency_table_html(runs: list[AgingRun], names: list[str]) -> str:
    ops = sorted({op for r in runs for op in r.latency.index})
    head = "".join(f"<th>{esc(n)}: median</th><th>{esc(n)}: mean</th>" for n in names)
    body = ""
    for op in ops:
        cells = ""
        for run in runs:
            if op not in run.latency.index:
                cells += "<td>–</td><td>–</td>"
                continue
            row = run.latency.loc[op]
            cells += "".join(f"<td class='num'>{_interval(row, w)}</td>"
                             for w in ("median", "mean"))
        body += f"<tr><th>{esc(op)}</th>{cells}</tr>"
    return f"<table><tr><th>operation</th>{head}</tr>{body}</table>"


def latency_chart(runs: list[AgingRun], names: list[str]) -> dict[str, Any]:
    data = []
    for run, name in zip(runs, names, strict=True):
        table: pd.DataFrame = run.latency
        data.append({"type": "bar", "name": name, "x": table.index.tolist(),
                     "y": table["median_us"].tolist(),
                     "error_y": {"type": "data", "symmetric": False,
                                 "array": (table["median_ci_high"] - table["median_us"]).tolist(),
                                 "arrayminus": (table["median_us"]
                                                - table["median_ci_low"]).tolist()}})
    return {"data": data, "layout": {
        "title": {"text": "Median latency per operation (95 % CI)"}, "height": 380,
        "barmode": "group", "yaxis": {"title": {"text": "µs (log)"}, "type": "log"}}}


def evolution_charts(runs: list[AgingRun], names: list[str]) -> list[dict[str, Any]]:
    """Layout score, files in one piece and free extents over the run, a line per run."""
    specs = []
    for title, part, key, label in EVOLUTION:
        data = []
        for run, name in zip(runs, names, strict=True):
            points = [(p["ops"], p[part].get(key)) for p in run.probes
                      if isinstance(p.get(part), dict) and _finite(p[part].get(key))
                      and not p[part].get("not_measurable")]
            if points:
                data.append({"type": "scatter", "mode": "lines+markers", "name": name,
                             "x": [x for x, _ in points], "y": [y for _, y in points]})
        if data:
            specs.append({"data": data, "layout": {
                "title": {"text": f"{title} over time"}, "height": 320,
                "xaxis": {"title": {"text": "operations"}},
                "yaxis": {"title": {"text": label}}}})
    return specs


def _target(record: dict[str, Any]) -> dict[str, Any]:
    return record.get("target") or {}


def _fstrim(config: dict[str, Any]) -> str:
    if config.get("fstrim_every"):
        return f"every {config['fstrim_every']} operations"
    if config.get("fstrim_seconds"):
        return f"every {config['fstrim_seconds']} s"
    return "no"


def _interval(row: pd.Series, which: str) -> str:
    value, low, high = (row[f"{which}_us"], row[f"{which}_ci_low"], row[f"{which}_ci_high"])
    text = format_ns(value * 1e3)
    if _finite(low) and _finite(high):
        text += f" <span class='muted'>({format_ns(low * 1e3)}–{format_ns(high * 1e3)})</span>"
    return text


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(
        value)


def _number(value: Any) -> str:
    if not _finite(value):
        return "–"
    return f"{value:,}" if isinstance(value, int) else f"{value:.3g}"


def _unique(names: list[str]) -> list[str]:
    """Directory names, numbered where two runs share one."""
    return [name if names.count(name) == 1 else f"{name} ({i + 1})"
            for i, name in enumerate(names)]
