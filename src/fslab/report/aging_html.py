"""The aging report: latency over time per operation, utilisation, free-space
fragmentation over time, the extent-size distribution, and the layout score."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from fslab.aging.latency import METHOD
from fslab.report.aging_runs_html import evolution_charts, latency_table_html
from fslab.report.html import Page, esc

if TYPE_CHECKING:
    from fslab.aging.base_vs_new import AgingRun

SMOOTH_WINDOW = 101  # Savitzky–Golay window (points), odd
SMOOTH_ORDER = 3  # Savitzky–Golay polynomial order
MAX_POINTS = 4000  # per operation type, so the page stays light


def smooth(values: np.ndarray, window: int = SMOOTH_WINDOW, order: int = SMOOTH_ORDER
           ) -> np.ndarray:
    """Savitzky–Golay smoothing (scipy.signal.savgol_filter), window shrunk to fit."""
    from scipy.signal import savgol_filter

    length = len(values)
    window = min(window, length if length % 2 else length - 1)
    if window <= order:
        return values
    return savgol_filter(values, window, order)


def build_aging_report(run: AgingRun) -> str:
    """One aging run as one self-contained HTML page."""
    directory, record, log, snapshots = run.path, run.record, run.log, run.probes
    page = Page(f"fslab aging report: {directory.name}")
    target = record.get("target", {})
    page.add(f"<h1>Aging: {esc(target.get('fs', '?'))} ({esc(target.get('fs_impl', ''))})</h1>"
             f"<p>{esc(record['ops_done'])} operations in {record['seconds']:.1f} s "
             f"({record['ops_per_s']:.0f} ops/s), seed {esc(record['seed'])}, stopped by "
             f"{esc(record['stopped_by'])}; op sequence SHA-256 "
             f"<code>{esc(record['op_sequence_sha256'])}</code></p>")
    page.add("<h2>Latency of each operation over time</h2><p class='muted'>Points: every "
             f"successful operation (up to {MAX_POINTS} shown per type); line: "
             f"Savitzky–Golay smoothing of log latency, order {SMOOTH_ORDER}, window "
             f"{SMOOTH_WINDOW}. Failed "
             "operations are counted below, not plotted.</p>")
    for op, rows in log.groupby("op", sort=True):
        rows = rows.sort_values("t_s")
        latency = rows["latency_ns"].to_numpy(dtype=float) / 1e3
        step = max(1, len(rows) // MAX_POINTS)
        page.chart({"data": [
            {"type": "scatter", "mode": "markers", "name": f"{op} (points)",
             "x": rows["t_s"].to_numpy()[::step].tolist(), "y": latency[::step].tolist(),
             "marker": {"size": 3, "opacity": 0.4}},
            {"type": "scatter", "mode": "lines", "name": f"{op} (smoothed)",
             "x": rows["t_s"].tolist()[::step],
             # smoothed in log space: latencies are heavy-tailed, and the axis is log
             "y": (10 ** smooth(np.log10(np.maximum(latency, 1e-3))))[::step].tolist()},
        ], "layout": {"title": {"text": f"{op}: latency over time"}, "height": 320,
                      "xaxis": {"title": {"text": "seconds"}},
                      "yaxis": {"title": {"text": "µs (log)"}, "type": "log"}}})
    page.add(f"<h2>Latency per operation</h2><p class='muted'>Successful operations; "
             f"{esc(METHOD)}.</p>"
             + latency_table_html([run], [directory.name]))
    page.chart(_utilisation(directory))
    page.chart(_free_space_heatmap(snapshots))
    for spec in evolution_charts([run], [directory.name]):
        page.chart(spec)
    page.chart(_extent_sizes(snapshots))
    failures = record.get("failures", {})
    page.add("<h2>Failed operations (counted, not timed)</h2><table>" + "".join(
        f"<tr><td>{esc(k)}</td><td class='num'>{esc(v)}</td></tr>"
        for k, v in failures.items()) + "</table>")
    page.add("<h2>Configuration</h2><pre>" + esc(json.dumps(record.get("config", {}),
                                                             indent=1)) + "</pre>")
    return page.render()


def _utilisation(directory: Path) -> dict[str, Any]:
    rows = [line.split(",") for line in
            (directory / "utilization.csv").read_text().splitlines()[1:] if line]
    return {"data": [{"type": "scatter", "mode": "lines", "name": "used",
                      "x": [float(r[0]) for r in rows],
                      "y": [100 * float(r[2]) for r in rows]}],
            "layout": {"title": {"text": "Utilisation over time"}, "height": 300,
                       "xaxis": {"title": {"text": "seconds"}},
                       "yaxis": {"title": {"text": "% used"}}}}


def _free_space_heatmap(snapshots: list[dict[str, Any]]) -> dict[str, Any] | None:
    usable = [s for s in snapshots if s["free"].get("histogram")]
    if not usable:
        reason = snapshots[-1]["free"].get("not_measurable", "") if snapshots else ""
        return {"data": [], "layout": {"title": {"text": "Free-space fragmentation: not "
                                                 f"measurable here ({reason})"},
                                       "height": 120}}
    buckets = sorted({h[0] for s in usable for h in s["free"]["histogram"]})
    z = []
    for bucket in buckets:
        row = []
        for snap in usable:
            found = {h[0]: h[3] for h in snap["free"]["histogram"]}
            total = snap["free"]["free_bytes"] or 1
            row.append(100 * found.get(bucket, 0) / total)
        z.append(row)
    labels = [_size_label(b) for b in buckets]
    return {"data": [{"type": "heatmap", "x": [s["ops"] for s in usable], "y": labels, "z": z,
                      "colorbar": {"title": {"text": "% of free"}}}],
            "layout": {"title": {"text": "Free space by extent size over time"},
                       "height": 380, "xaxis": {"title": {"text": "operations"}},
                       "yaxis": {"title": {"text": "free extents of at least"}}}}


def _extent_sizes(snapshots: list[dict[str, Any]]) -> dict[str, Any] | None:
    last = next((s for s in reversed(snapshots) if s["used"].get("measurable")), None)
    if last is None or not last["used"].get("extent_sizes"):
        return None
    sizes = np.log2(np.maximum(1, np.array(last["used"]["extent_sizes"], dtype=float)))
    return {"data": [{"type": "histogram", "x": sizes.tolist(), "name": "extents"}],
            "layout": {"title": {"text": "Extent sizes at the end (log2 bytes)"},
                       "height": 300, "xaxis": {"title": {"text": "log2(extent bytes)"}}}}


def _size_label(value: int) -> str:
    for unit, factor in (("G", 1024**3), ("M", 1024**2), ("K", 1024)):
        if value >= factor:
            return f"{value / factor:g}{unit}"
    return f"{value}B"
