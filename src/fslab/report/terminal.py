"""Terminal reporters: the summary tables and the dry-run plan, as rich renderables."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Group, RenderableType
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from fslab.core.metrics import HIGHER, NOISY_HALF_WIDTH, headline_metrics, title
from fslab.core.units import format_bound, format_value

if TYPE_CHECKING:  # the comparison's model (scipy) loads only where one is made
    import pandas as pd

    from fslab.analysis.across.compare import CampaignComparison

# System-wide CPU is in summary.csv, the report and the verdicts; a terminal row has no
# room for all four CPU columns.
TERMINAL_LEAVES_OUT = ("host_cpu_pct", "host_cpu_ns_per_io")


def summary_tables(summary: pd.DataFrame, runs: pd.DataFrame | None = None,
                   names: dict[str, str] | None = None) -> RenderableType:
    """A targets legend, then one table per workload: rows target·op, a column per metric;
    targets by `names` where given (as short as the campaign allows: target_names)."""
    parts: list[RenderableType] = []
    names = names or {}
    if summary.empty:
        parts.append(Text("No measurements yet."))
    else:
        parts.append(_targets_table(summary, names))
    marks = {"noisy": False, "overlap": False, "above_raw": False, "cache": False}
    for workload, cells in summary.groupby("workload", sort=True):
        parts.append(_workload_table(str(workload), cells, marks, names))
    if marks["noisy"]:
        parts.append(Text(
            f"⚠ CI half-width above {NOISY_HALF_WIDTH:.0%} of the mean (or n < 2): too few "
            "iterations or a noisy machine; add --iterations before trusting the difference.",
            style="yellow"))
    if marks["overlap"]:
        parts.append(Text(
            "Green: the best target in the column (direction honoured: higher IOPS and "
            "bandwidth, lower latency). '?' after it: its 95 % CI overlaps the runner-up's, "
            "so the ranking is not established.", style="dim"))
    if marks["cache"]:
        cells = summary[summary["cache_bound"]].drop_duplicates(["target", "workload"])
        named = [f"{r.target} {r.workload}: {r.cache_bound_reason}"
                 for r in cells.itertuples()]
        parts.append(Text(
            "‡ cache-bound: not a property of the file system, and not ranked ("
            + "; ".join(named[:4]) + ("; …" if len(named) > 4 else "") + ").",
            style="magenta"))
    if marks["above_raw"]:
        parts.append(Text(
            "IOPS vs raw: the mean as a share of what the disk under the images delivered "
            "for the same job (an O_DIRECT run on a raw loop device over data just written: "
            "in the same rounds as the cells, in the first two iterations, for jobs measured "
            "in rounds; else the better of two before the campaign); above 125 % is "
            "cache-bound.",
            style="dim"))
    if runs is not None and not runs.empty:
        bad = runs[runs["status"] != "ok"]
        if not bad.empty:
            failed = Table(title="Runs without a result", title_justify="left")
            for column in ("run_id", "status", "reason"):
                failed.add_column(column)
            for _, run in bad.iterrows():
                failed.add_row(run["run_id"], run["status"], str(run["reason"]))
            parts.append(failed)
    return Group(*parts)


def _targets_table(summary: pd.DataFrame, names: dict[str, str]) -> Table:
    table = Table(title="Targets", title_justify="left")
    shortened = any(names.get(t, t) != t for t in summary["target"].astype(str))
    for column in ("target", *(("as shown",) if shortened else ()), "fs", "implementation"):
        table.add_column(column)
    for _, row in summary.drop_duplicates("target").iterrows():
        target = str(row["target"])
        table.add_row(escape(target), *((escape(names.get(target, target)),) if shortened
                                        else ()), row["fs"], row["fs_impl"])
    return table


def _workload_table(workload: str, cells: pd.DataFrame, marks: dict[str, bool],
                    names: dict[str, str] | None = None) -> Table:
    metrics = [m for m in headline_metrics(set(cells["metric"]))
               if m not in TERMINAL_LEAVES_OUT]
    has_raw = "of_raw" in cells and cells["of_raw"].notna().any()
    table = Table(title=f"{workload}: geometric mean ×/÷ 95 % CI factor", title_justify="left")
    table.add_column("target")
    table.add_column("op")
    for metric in metrics:
        better = "↑" if cells.loc[cells.metric == metric, "better"].iloc[0] == HIGHER else "↓"
        table.add_column(f"{title(metric)} {better}", justify="right")
    if has_raw:
        table.add_column("IOPS vs raw", justify="right")
    indexed = cells.set_index(["op", "target", "metric"])
    shown_ops = set(cells.loc[cells.metric.isin(metrics), "op"])
    for op in sorted(shown_ops):
        for target in dict.fromkeys(cells.loc[cells.op == op, "target"]):
            row: list[RenderableType] = [escape((names or {}).get(target, target)), op]
            for metric in metrics:
                key = (op, target, metric)
                if key not in indexed.index:
                    row.append("–")
                    continue
                row.append(_cell_text(indexed.loc[key], marks))
            if has_raw:
                key = (op, target, "iops")
                ratio = indexed.loc[key, "of_raw"] if key in indexed.index else math.nan
                row.append(f"{ratio:.0%}" if not math.isnan(ratio) else "")
                marks["above_raw"] |= bool(ratio > 1.0)
            table.add_row(*row)
    return table


def _cell_text(cell: pd.Series, marks: dict[str, bool]) -> Text:
    if cell["n"] == 0:
        return Text(str(cell.get("note") or "–"), style="dim")
    center = cell.get("geomean", math.nan)
    mean = format_value(center if center == center else cell["mean"], cell["unit"])
    pct = cell["ci_half_width_pct"]
    spread = "n=1" if cell["n"] < 2 else (f"±{pct:.0f}%" if not math.isnan(pct) else "")
    text = Text(f"{mean} {spread}")
    if cell["best"]:
        text.stylize("bold green")
        if not cell["best_clear"]:
            text.append("?", style="green")
            marks["overlap"] = True
    if cell["noisy"]:
        text.append("⚠", style="yellow")
        marks["noisy"] = True
    if cell.get("cache_bound", False):
        text.append("‡", style="magenta")
        marks["cache"] = True
    return text


def compare_report(comparison: CampaignComparison) -> RenderableType:
    """`fslab compare`: the questions (each workload's primary metric) with their
    decisions, then the other metrics as estimates; the settings that differ; the count
    of each decision."""
    colours = {"improved": "green", "regressed": "red", "same": "cyan", "unresolved": "yellow"}
    margin = comparison.margin
    title_text = (f"{comparison.base} → {comparison.new} (new/base; the same within "
                  f"±{margin:.0%}; questions' intervals hold together with 95 % confidence)")
    parts: list[RenderableType] = []
    cells = comparison.cells
    for primary, heading in ((True, title_text),
                             (False, "Other metrics: estimates, each its own 95 % interval")):
        rows = cells[cells["primary"].astype(bool) == primary]
        if rows.empty:
            continue
        table = Table(title=heading, title_justify="left")
        for column in ("target", "workload", "op", "metric", "base", "new",
                       "new/base (CI)", "decision" if primary else "note"):
            table.add_column(column)
        for _, row in rows.iterrows():
            ratio = f"{row['ratio']:.3g}×" + (
                f" ({format_bound(row['ratio_ci_low'])}–{format_bound(row['ratio_ci_high'])}×)"
                if math.isfinite(row["ratio_ci_low"]) else " (no interval)")
            last = escape(str(row["note"]))
            if primary:
                decision = str(row["decision"])
                last = f"[{colours[decision]}]{decision}[/]"
                alone = str(row.get("within_decision", ""))
                if decision == "unresolved" and alone in ("regressed", "improved"):
                    last += f" (on the iterations alone: {alone})"
                elif decision == "unresolved":
                    needs = float(row["needs_iterations"])
                    last += (f": needs {needs:.0f} iterations a side" if math.isfinite(needs)
                             else ": >100 iterations would not resolve it"
                             if needs == math.inf else "")
            table.add_row(escape(str(row["target"])), escape(str(row["workload"])),
                          row["op"], row["metric"],
                          format_value(row["base_geomean"], row["unit"]),
                          format_value(row["new_geomean"], row["unit"]), ratio, last)
        parts.append(table)
    differences = [f"[yellow]environment differs: {escape(what)}: {escape(a)} → "
                   f"{escape(b)}[/yellow]" for what, a, b in comparison.differences]
    counts = ", ".join(f"{comparison.count(decision)} {decision}"
                       for decision in ("regressed", "improved", "same", "unresolved"))
    spread = [escape(comparison.spread_note)] if comparison.spread_note else []
    if open_alone := comparison.open_but_decided_alone:
        spread.append(f"{open_alone} unresolved question{'s' * (open_alone != 1)} would be "
                      "decided on the iterations alone: whether a sitting moves that far on "
                      "this host "
                      "is what a history of its sittings tells (--catalogue).")
    return Group(*parts, *differences, *spread, f"questions: {counts}")


def skipped_table(skipped: list[tuple[str, str]], listed_in: Path) -> RenderableType:
    """`fslab import`'s skipped files and why (listed in `listed_in` too)."""
    table = Table(title=f"Skipped files ({len(skipped)}; also in {listed_in})",
                  title_justify="left")
    table.add_column("file")
    table.add_column("reason")
    for name, reason in skipped:
        table.add_row(escape(name), escape(reason))
    return table


# Labels the history sets itself (the machine, the tools): `history list` shows the
# user's own.
MACHINE_LABELS = ("host", "cpu_model", "disk_model")


def campaigns_table(rows: pd.DataFrame) -> RenderableType:
    """`fslab history list`: every campaign of the catalogue with the user's labels."""
    table = Table("campaign", "name", "started", "machine", "labels", "path")
    for row in rows.itertuples(index=False):
        labels = json.loads(row.labels or "{}")
        own = {k: v for k, v in labels.items() if not k.startswith("tool.")
               and k not in MACHINE_LABELS}
        table.add_row(str(row.campaign_id), escape(str(row.name)), str(row.started),
                      escape(str(row.machine)),
                      escape(", ".join(f"{k}={v}" for k, v in own.items())),
                      escape(str(row.path)))
    return table


def campaigns_text(rows: pd.DataFrame, spreads: list[str]) -> list[RenderableType]:
    """`fslab history list`: the campaigns' table, then each host's between-sitting spread
    of ratios (what a repeat interval reads), where the catalogue knows one."""
    out: list[RenderableType] = [campaigns_table(rows)]
    if spreads:
        out.append(Text("Between-sitting spread of ratios, per host (what a repeat interval "
                        "reads):"))
        out += [Text("  " + line) for line in spreads]
    return out


def changes_text(series: list[Any], by: str, method: str) -> list[RenderableType]:
    """`fslab history changes`: each change as a sentence (regressions first, in red),
    then the count and the method (history/series.py: the series and their changes)."""
    found = sorted((change for s in series for change in s.changes),
                   key=lambda c: (not c.regression, c.p_value))
    out: list[RenderableType] = [
        f"[{'red' if c.regression else 'green'}]{escape(c.sentence(by))}"
        f"[/{'red' if c.regression else 'green'}]" for c in found]
    steady = len(series) - len({(c.target, c.workload, c.op, c.metric) for c in found})
    out.append(Text(f"{len(found)} change(s) in {len(series)} series; {steady} without "
                    f"one. Method: {method}", style="dim"))
    return out
