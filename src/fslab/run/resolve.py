"""`fslab run --resolve`: measure more only where a primary question is not resolved,
until each is decided or the budget is spent.

After the campaign's own iterations (its first look) the analysis decides every primary
pair: faster, slower, the same within the margin, or unresolved with the iterations it
needs at the next look's level (analysis.pairs.pair, analysis.pairs.sequential). Each workload
with unresolved pairs is given the iterations its neediest pair asks for, on the targets
of those pairs only, cheapest workloads first, while the campaign's measuring time stays
within `--budget`; a workload that is resolved (random 4 KiB jobs often are after 5
iterations) or that no budget reaches measures nothing more. The round runs as
iterations of the same campaign (fresh file systems, interleaved rounds, the same
witness) and the next look decides again, up to MAX_LOOKS looks. Look k tests at α/2^k
(analysis.pairs.sequential), so the error rate holds whatever the rounds chose.

Each round also chooses its run length (`plan_workload`): from where the workload's noise
comes from (stats/noise.csv: between fresh file systems, within a run per second of
measuring, a run's fixed cost; analysis/cells/noise.py), the length among LENGTHS that
decides its open pairs for the fewest machine seconds — long runs where the disk's
moment-to-moment noise dominates and runs are cheap to start, the campaign's own where
each file system's luck does — and the runs at that length, at the next look's level.
Runs of another length enter the pairs' estimates weighted by their precision relative
to the campaign's own (LookCell.weight, fixed before they ran). A workload whose noise
could not be estimated, or whose spread does not fall with run length, keeps the
campaign's run length.

The design is kept in campaign.toml (`[resolve]`: looks and the cells of each round, with
their run length and weight), so `--resume` continues a round that was cut off and the
analysis reads every look again.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from fslab.analysis.cells.noise import components_of
from fslab.analysis.pairs.decisions import seconds_per_iteration
from fslab.analysis.pairs.needs import needs_at_length
from fslab.analysis.pairs.power import MAX_ITERATIONS
from fslab.analysis.pairs.sequential import look_alpha
from fslab.analysis.pipeline import analyze_results
from fslab.analysis.sittings.repeat import as_percent, for_workload
from fslab.core.campaign_settings import LookCell
from fslab.core.pair import UNRESOLVED, Pair
from fslab.core.units import format_duration
from fslab.plan.order import make_plan
from fslab.results.intervals import write_intervals
from fslab.results.store import SITTINGS
from fslab.run.campaign_run import both

if TYPE_CHECKING:
    from collections.abc import Sequence

    from fslab.core.environment_record import SittingSpread
    from fslab.core.record import RunRecord
    from fslab.run.campaign_run import CampaignRun
    from fslab.run.runner import Progress, RunnerResult

MAX_LOOKS = 6  # the seventh would test at α/128: more iterations, little more power
# The chance a planned round decides a pair at its look (a round short of it leaves the pair
# to a later look at half the level, dearer than the few runs more this asks).
PLAN_POWER = 0.8
# How far towards the top of its interval a plan takes the spread between file systems.
BETWEEN_DOUBT = 0.5
# The run lengths a round chooses between (seconds of measuring; fio takes whole seconds).
LENGTHS = (1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 20, 25, 30, 40, 50, 60)


@dataclass(frozen=True)
class Round:
    """The next round: each cell it measures (up to which iteration, at what length)."""

    cells: list[LookCell]
    seconds: float  # what it should cost, from this campaign's own runs
    left_out: list[str]  # workloads the budget does not reach, and why
    plans: list[str] = field(default_factory=list)  # each workload's plan, in words
    # open pairs left alone: narrower already than the machine's between-sitting spread
    stopped: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class WorkloadPlan:
    """How a workload's open pairs are resolved soonest: more runs at a run length."""

    more: int  # iterations more
    runtime: int  # seconds of measuring a run (0: the campaign's)
    weight: float  # a run's precision relative to the campaign's own runs
    seconds: float  # machine seconds it should cost (every target of the round)
    said: str = ""


def start_looking(run: CampaignRun) -> CampaignRun:
    """The campaign as one that resolves: its iterations so far are its first look."""
    if run.campaign.looks:
        return run
    campaign = dataclasses.replace(run.campaign, looks=[run.campaign.iterations],
                                   look_cells=[])
    run.results.write_campaign(campaign.settings())
    return dataclasses.replace(run, campaign=campaign)


def next_round(pairs: Sequence[Pair], records: list[RunRecord], looks: list[int],
               budget_s: float, noise: pd.DataFrame | None = None, runtime: int = 0,
               level: float | None = None, margin: float = 0.10,
               between: SittingSpread | None = None) -> Round:
    """The cells the next round measures, up to which iteration and at what run length
    (module doc): `noise` is stats/noise.csv, `runtime` the campaign's, `level` the next
    look's per-pair α. `between`: the machine's between-sitting spread of a ratio (a
    campaign recorded with --catalogue read it from its host's history; each workload's
    own where it has one): an open pair whose interval is narrower than it is not
    narrowed further (SITTING_BOUND)."""
    seconds = seconds_per_iteration(records)
    spent = sum(seconds.get((r.workload, r.target), 0.0) for r in records
                if r.status == "ok")
    wanted: dict[str, tuple[int, set[str], list[Pair]]] = {}  # workload -> (more, targets, …)
    # a question of one section of a job file is answered by its job's runs
    run_workload = {str(row["workload"]): r.workload for r in records for row in r.metrics}
    stopped = []
    for pair in pairs:
        needs = pair.needs_iterations
        if not pair.primary or pair.decision != UNRESOLVED or math.isnan(needs):
            continue
        half = math.log(pair.ratio_ci_high / pair.ratio_ci_low) / 2
        tau = (for_workload(between, pair.workload).tau if between is not None
               and between.sittings else math.nan)
        if half <= tau:
            stopped.append(SITTING_BOUND.format(
                pair=f"{pair.a} ? {pair.b} on {pair.workload}", own=as_percent(half),
                between=as_percent(tau)))
            continue
        if math.isinf(needs):  # not at this length: perhaps at another (plan_workload)
            needs = float(MAX_ITERATIONS + 1)
        workload = run_workload.get(pair.workload, pair.workload)
        more, targets, rows = wanted.get(workload, (0, set(), []))
        wanted[workload] = (max(more, int(needs) - pair.iterations),
                            targets | {pair.a, pair.b}, [*rows, pair])
    plans = {w: plan_workload(rows, targets, more, noise, runtime, level, margin,
                              {t: seconds.get((w, t), math.nan) for t in targets})
             for w, (more, targets, rows) in wanted.items()}
    cells: list[LookCell] = []
    left_out, said, total = [], [], 0.0
    for workload in sorted(plans, key=lambda w: (plans[w].seconds != plans[w].seconds,
                                                 plans[w].seconds)):
        plan, (_, targets, _) = plans[workload], wanted[workload]
        cost = plan.seconds if plan.seconds == plan.seconds else 0.0
        if plan.more < 1:
            continue
        if spent + total + cost > budget_s:
            left_out.append(f"{workload}: {plan.more} more iterations, about "
                            f"{format_duration(cost, rough=True)}, past the budget")
            continue
        total += cost
        said.append(f"{workload}: {plan.said}")
        cells += [LookCell(target, workload, looks[-1] + plan.more, plan.runtime, plan.weight)
                  for target in sorted(targets)]
    return Round(cells, total, left_out, said, stopped)


SITTING_BOUND = ("{pair} stops narrowing here: its interval (±{own:.1f} %) is narrower than "
                 "this machine's spread between sittings (a sitting's ratio moves "
                 "±{between:.1f} %, 1 SD), so more "
                 "iterations in this sitting buy nothing that holds next time; run another "
                 "sitting instead: fslab run --again DIR")


def plan_workload(rows: list[Pair], targets: set[str], more: int, noise: pd.DataFrame | None,
                  runtime: int, level: float | None, margin: float,
                  per_run_s: dict[str, float]) -> WorkloadPlan:
    """The run length among LENGTHS (and the runs at it) that resolves every open pair of
    one workload for the fewest machine seconds, from its cells' noise components; the
    campaign's length and `more` runs where they cannot be told (module doc)."""
    same_length = WorkloadPlan(more, 0, 1.0, more * sum(per_run_s.values()),
                               f"{more} more runs of the campaign's length")
    if more > MAX_ITERATIONS:  # too many at this length: nothing, unless another does it
        same_length = WorkloadPlan(0, 0, 1.0, math.inf, "more than 100 runs: left open")
    workload = rows[0].workload
    found = [] if noise is None or noise.empty else [
        components_of(row) for _, row in noise[
            (noise["workload"].astype(str) == workload)
            & noise["target"].astype(str).isin(targets)].iterrows()]
    parts = [c for c in found if c is not None]
    if len(parts) < len(targets) or not all(c.falls for c in parts) or level is None:
        return same_length
    between = float(np.mean([_between(c) ** 2 for c in parts]))
    within = float(np.mean([c.within_1s ** 2 for c in parts]))
    fixed = float(np.mean([c.fixed_cost_s for c in parts]))
    now_length = float(np.mean([c.runtime_s for c in parts])) or float(runtime or 1)
    variance_now = between + within / now_length
    best: WorkloadPlan | None = None
    for length in sorted({*LENGTHS, round(now_length)}):
        relative = (between + within / length) / variance_now
        needed = 0
        for row in rows:
            have = row.n_pairs
            sd = row.spread.paired_sd
            total = needs_at_length(row.ratio, sd, have, relative, level / row.family,
                                    margin, PLAN_POWER) if have >= 2 else math.nan
            if not math.isfinite(total):
                needed = -1
                break
            needed = max(needed, int(total) - have)
        if needed < 1:
            continue
        cost = needed * len(targets) * (fixed + length)
        # the campaign's own length wins a tie: a new one must pay for its estimate's doubt
        same = length == round(now_length)
        if best is None or cost < best.seconds * (1.0 if same else 0.95):
            best = WorkloadPlan(needed, 0 if same else length, 1 / relative, cost,
                                f"{needed} more runs of {length} s (spread between file "
                                f"systems {math.sqrt(between):.0%}, within a run "
                                f"{math.sqrt(within):.0%} at 1 s, "
                                f"{format_duration(fixed)} fixed per run)")
    return best if best is not None else same_length


def noise_beside(path: Path, own: pd.DataFrame | None) -> pd.DataFrame | None:
    """The planner's noise estimates (stats/noise.csv) for a sitting at `path`: each
    cell's own, or, in a further sitting of DIR (DIR/sittings/N), DIR's where DIR
    measured the cell on more iterations (a --resolve that went on there) — a repeat need
    not learn again what its campaign's first sitting already knows of the machine's
    noise (issue 51, item 6)."""
    first = path.parent.parent / "stats" / "noise.csv"
    if path.parent.name != SITTINGS or not first.exists():
        return own
    earlier = pd.read_csv(first)
    if own is None or own.empty:
        return earlier
    key = ["target", "workload", "op", "metric"]
    both = pd.concat([own.assign(own=1), earlier.assign(own=0)], ignore_index=True)
    chosen = both.sort_values(["iterations", "own"], ascending=False, kind="stable")
    return chosen.drop_duplicates(key).drop(columns="own").reset_index(drop=True)


def _between(components: Any) -> float:
    """The spread between file systems a plan assumes: its estimate moved towards the top
    of its interval by BETWEEN_DOUBT (a few iterations often put it near 0, and a plan on
    that would buy runs far longer than the noise repays)."""
    high = components.between_high
    if not math.isfinite(high):
        return float(components.between)
    return float(components.between + BETWEEN_DOUBT * (high - components.between))


def resolve(run: CampaignRun, outcome: RunnerResult, budget_s: float,
            progress: Progress | None, rerun_disturbed: bool = False,
            rerun_unsteady: bool = False) -> tuple[CampaignRun, RunnerResult, list[str]]:
    """Rounds until every primary question is decided, no budget is left or MAX_LOOKS
    looks are taken: (the campaign as it ended, every run's counts, what was left out)."""
    run = start_looking(run)
    left_out: list[str] = []
    sitting = run.results.environment().sitting
    between = sitting.spread if sitting else None
    while len(run.campaign.looks) < MAX_LOOKS:
        write_intervals(run.results)  # the noise within runs comes from their logs
        done = analyze_results(run.results)
        planned = next_round(done.pairs, list(run.results.run_records()),
                             run.campaign.looks, budget_s,
                             noise_beside(run.results.path, done.extra.get("noise.csv")),
                             run.campaign.runtime, look_alpha(len(run.campaign.looks) + 1),
                             run.campaign.margin, between)
        left_out = planned.left_out
        outcome.warnings += [f"resolve: {line}" for line in planned.stopped
                             if f"resolve: {line}" not in outcome.warnings]
        if not planned.cells:
            break
        outcome.warnings += [f"resolve, look {len(run.campaign.looks) + 1}: {line}"
                             for line in planned.plans]
        last = max(cell.last for cell in planned.cells)
        campaign = dataclasses.replace(
            run.campaign, iterations=last, looks=[*run.campaign.looks, last],
            look_cells=[*run.campaign.look_cells, planned.cells])
        run.results.write_campaign(campaign.settings())
        run = dataclasses.replace(run, campaign=campaign, plan=make_plan(campaign),
                                  resume=True)
        outcome = both(outcome, run.execute(progress, rerun_disturbed,
                                            rerun_unsteady=rerun_unsteady))
    return run, outcome, left_out
