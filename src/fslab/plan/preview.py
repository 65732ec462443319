"""`fslab run --dry-run`: the plan as a person reads it — targets, workloads, the sweep,
the order of runs, the resolved job files, how long it takes — before anything is made."""

from __future__ import annotations

from pathlib import Path

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from fslab.core.age_factor import FRESH, twinned
from fslab.core.cell_keys import shown, workdir_name
from fslab.core.units import format_duration, format_value
from fslab.plan.order import Plan, measuring_seconds
from fslab.plan.sweep import campaign_factors
from fslab.targets import Target
from fslab.targets.base import AGE_LEVEL
from fslab.workloads.aging_levels import age_levels, planned_ops
from fslab.workloads.base import Where


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'s' * (n != 1)}"


def plan_renderable(plan: Plan, targets: dict[str, Target], lab_root: Path,
                    measured: dict[str, str] | None = None) -> RenderableType:
    """The dry-run view: the campaign, the run order, each target, how each workload is
    measured (`measured`: in interleaved slices, or whole and why) and each resolved job."""
    campaign = plan.campaign
    workloads = len({r.workload.name for r in plan.runs})
    crossed = f"{_count(len(plan.targets), 'target')} × {_count(workloads, 'workload')}"
    if len(plan.cells) != len(plan.targets) * workloads:  # twins: not every pair runs
        crossed = _count(len(plan.cells), "cell")
    parts: list[RenderableType] = [Text(
        f"Campaign {campaign.name}: {crossed} × {_count(campaign.iterations, 'iteration')} "
        f"= {_count(len(plan.runs), 'run')}; runtime {campaign.runtime} s per job; "
        f"file size {format_value(campaign.file_size, 'bytes')} per job; seed {campaign.seed}; "
        f"fresh file system per {campaign.fresh}; {campaign.scale} scale", style="bold")]
    if campaign.published is not None:
        parts += [Text(line) for line in campaign.published.lines()]
    parts += [Text(line) for line in sweep_lines(plan)]
    parts.append(Text(planned_time(plan), style="bold"))
    if measured:
        parts.append(Text("How each workload is measured", style="bold"))
        parts += [Text(f"  {name}: {how}") for name, how in measured.items()]
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
        details = "; ".join(f"{k}: {_short(v)}" for k, v in info.to_json().items()
                            if k not in ("target", "fs"))
        parts.append(Text(f"  {name} ({info.fs}): {details}"))
    shown: set[str] = set()
    for run in plan.runs:
        if run.workload.name in shown:
            continue
        shown.add(run.workload.name)
        directory = (lab_root / "sessions" / "<session>" / "mnt" / "<target>"
                     / workdir_name(run.workload.name))
        for filename, text in run.workload.render(Where(directory=directory)).items():
            parts.append(Text(f"── {run.workload.name}: {filename} ──", style="cyan"))
            parts.append(Text(text.rstrip()))
    return Group(*parts)


def sweep_lines(plan: Plan) -> list[str]:
    """A sweep's plan in words: each factor with its levels, the cells, the fio runs."""
    campaign = plan.campaign
    factors = campaign_factors(campaign.sweep, campaign.target_sweeps)
    if not factors:
        return []
    lines = []
    for factor in factors:
        where = f" (target {factor.target})" if factor.target else ""
        if len(factor.levels) == 1:
            lines.append(f"Set: {factor.name}={shown(factor.levels[0])}{where}")
        else:
            lines.append(f"Factor {factor.name}{where}: {', '.join(map(shown, factor.levels))} "
                         f"(effects relative to {shown(factor.reference)})")
    cells = plan.cells
    fio = sum(1 for r in plan.runs if r.workload.family.startswith("fio"))
    lines.append(f"Cells: {len(cells)} — " + "; ".join(
        f"{workload} on {target}" for target, workload in cells[:12])
        + (f"; … {len(cells) - 12} more" if len(cells) > 12 else ""))
    lines.append(f"Runs: {len(plan.runs)} ({fio} fio runs): {len(cells)} cells × "
                 f"{campaign.iterations} iterations")
    return lines + aging_lines(plan)


def aging_lines(plan: Plan) -> list[str]:
    """What the `age` factor ages before the runs: how many agings, of how many
    operations (their time comes on top of measuring)."""
    campaign = plan.campaign
    levels = age_levels(campaign.age_levels)
    twins = [t for t in plan.targets if twinned(str(t.options.get(AGE_LEVEL, "")))]
    aged = [t for t in plan.targets if t.options.get(AGE_LEVEL, FRESH) != FRESH
            and t.fs != "null" and t not in twins]
    if not aged:
        return []
    each = campaign.iterations if not campaign.age_reuse else 1
    ops = [planned_ops(levels[str(t.options[AGE_LEVEL])], t.size) for t in aged]
    known = [n for n in ops if n]
    size = (f", {min(known):,}–{max(known):,} operations each" if known and
            min(known) != max(known) else f", {known[0]:,} operations each" if known else "")
    how = ("once each, every run from a copy (age_reuse)" if campaign.age_reuse else
           "each iteration its own")
    lines = [f"Aging: {len(aged) * each} agings ({len(aged)} aged cells, {how}{size}); "
             "their time comes on top of measuring"]
    if twins:
        lines.append(f"Twins: {len(twins)} fresh twins ({', '.join(t.name for t in twins)}),"
                     " each a fresh file system holding a copy of its aged level's tree: the "
                     "fresh side of the workloads that read the aged files (the others run "
                     "on a plain fresh file system)")
    return lines


def planned_time(plan: Plan) -> str:
    """How long the plan measures: fio's runtime and ramp of each run (size-based jobs at
    their runtime cap); what only the disk decides (layouts, mkfs, file workloads) is
    named, not guessed."""
    seconds, capped, unknown = measuring_seconds(plan.runs)
    measured = len(plan.runs) - unknown
    text = (f"Time measuring: {format_duration(seconds)} over {measured} fio runs" if measured
            else "Time measuring: not known ahead")
    if capped:
        text += f" ({capped} size-based: at most)"
    if unknown:
        text += (f"; {unknown} runs whose time the disk decides (file workloads, bonnie++, "
                 "size-based fio without a runtime)")
    return text + "; laying out files and making file systems come on top"


def _short(value: object) -> str:
    if isinstance(value, list):
        return " ".join(str(v) for v in value)
    if isinstance(value, int) and value > 1024**2:
        return format_value(value, "bytes")
    return str(value)
