"""Terminal reporters: the summary tables and the dry-run plan, as rich renderables."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from fslab.analysis.stats import NOISY_HALF_WIDTH
from fslab.metrics import HEADLINE_METRICS, HIGHER
from fslab.plan import Plan
from fslab.targets import Target
from fslab.units import format_value

METRIC_TITLES = {
    "iops": "IOPS",
    "bw_bytes": "Bandwidth",
    "clat_mean_ns": "Mean completion latency",
    "clat_p99_ns": "p99 completion latency",
}


def summary_tables(summary: pd.DataFrame, runs: pd.DataFrame | None = None) -> RenderableType:
    """One table per headline metric: rows workload·op, a column per target, best marked."""
    parts: list[RenderableType] = []
    if summary.empty:
        parts.append(Text("No measurements yet."))
    targets = list(dict.fromkeys(summary["target"])) if not summary.empty else []
    impls = summary.drop_duplicates("target").set_index("target")["fs_impl"] if targets else {}
    if targets:
        legend = ", ".join(f"{t} = {summary.loc[summary.target == t, 'fs'].iloc[0]} "
                           f"({impls[t]})" for t in targets)
        parts.append(Text(f"Targets: {legend}", style="dim"))
    noisy_seen = False
    overlap_seen = False
    for metric in HEADLINE_METRICS:
        cells = summary[summary["metric"] == metric]
        if cells.empty:
            continue
        better = cells["better"].iloc[0]
        direction = "higher is better" if better == HIGHER else "lower is better"
        table = Table(title=f"{METRIC_TITLES.get(metric, metric)} ({direction}); "
                      "mean ± 95 % CI half-width", title_justify="left")
        table.add_column("workload")
        table.add_column("op")
        for target in targets:
            table.add_column(target, justify="right")
        table.add_column("best", style="bold green")
        for (workload, op), row_cells in cells.groupby(["workload", "op"], sort=True):
            by_target = row_cells.set_index("target")
            row: list[RenderableType] = [workload, op]
            for target in targets:
                if target not in by_target.index:
                    row.append("–")
                    continue
                cell = by_target.loc[target]
                noisy_seen |= bool(cell["noisy"])
                row.append(_cell_text(cell))
            best = row_cells[row_cells["best"]]
            if best.empty:
                row.append("")
            elif bool(best["best_clear"].iloc[0]):
                row.append(best["target"].iloc[0])
            else:
                overlap_seen = True
                row.append(Text(f"{best['target'].iloc[0]}?", style="dim"))
            table.add_row(*row)
        parts.append(table)
    if noisy_seen:
        parts.append(Text(
            f"⚠ CI half-width above {NOISY_HALF_WIDTH:.0%} of the mean (or n < 2): too few "
            "iterations or a noisy machine; add --iterations before trusting the difference.",
            style="yellow"))
    if overlap_seen:
        parts.append(Text(
            "best? : the best mean's 95 % CI overlaps the runner-up's, so this ranking is "
            "not established; run more iterations.", style="dim"))
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


def _cell_text(cell: pd.Series) -> Text:
    mean = format_value(cell["mean"], cell["unit"])
    pct = cell["ci_half_width_pct"]
    spread = "n=1" if cell["n"] < 2 else (f"±{pct:.0f}%" if not math.isnan(pct) else "")
    text = Text(f"{mean} {spread}")
    if cell["best"]:
        text.stylize("bold green")
    if cell["noisy"]:
        text.append("⚠", style="yellow")
    return text


def plan_renderable(plan: Plan, targets: dict[str, Target], lab_root: Path) -> RenderableType:
    """The dry-run view: the campaign, the run order, each target and each resolved job."""
    campaign = plan.campaign
    parts: list[RenderableType] = [Text(
        f"Campaign {campaign.name}: {len(campaign.targets)} targets × "
        f"{len({r.workload.name for r in plan.runs})} workloads × {campaign.iterations} "
        f"iterations = {len(plan.runs)} runs; runtime {campaign.runtime} s per job; "
        f"file size {format_value(campaign.file_size, 'bytes')} per job; seed {campaign.seed}; "
        f"fresh file system per {campaign.fresh}", style="bold")]
    order = Table(title="Run order (shuffled within each iteration)", title_justify="left")
    for column in ("iteration", "#", "target", "workload", "run id"):
        order.add_column(column)
    for run in plan.runs:
        order.add_row(str(run.iteration), str(run.position + 1), run.target.name,
                      run.workload.name, run.run_id)
    parts.append(order)
    parts.append(Text("Targets", style="bold"))
    for name, target in targets.items():
        info = target.describe()
        details = "; ".join(f"{k}: {_short(v)}" for k, v in info.items()
                            if k not in ("target", "fs"))
        parts.append(Text(f"  {name} ({info.get('fs', '')}): {details}"))
    shown: set[str] = set()
    for run in plan.runs:
        if run.workload.name in shown:
            continue
        shown.add(run.workload.name)
        directory = lab_root / "sessions" / "<session>" / "mnt" / "<target>" / (
            f"fslab-{run.workload.name}")
        for filename, text in run.workload.render(directory).items():
            parts.append(Text(f"── {run.workload.name}: {filename} ──", style="cyan"))
            parts.append(Text(text.rstrip()))
    return Group(*parts)


def _short(value: object) -> str:
    if isinstance(value, list):
        return " ".join(str(v) for v in value)
    if isinstance(value, int) and value > 1024**2:
        return format_value(value, "bytes")
    return str(value)
