"""`fslab run --resolve`: measure more only where a primary question is not resolved,
until each is decided or the budget is spent.

After the campaign's own iterations (its first look) the analysis decides every primary
pair: faster, slower, the same within the margin, or unresolved with the iterations it
needs at the next look's level (analysis.pairs.decisions, analysis.pairs.sequential). Each workload
with unresolved pairs is given the iterations its neediest pair asks for, on the targets
of those pairs only, cheapest workloads first, while the campaign's measuring time stays
within `--budget`; a workload that is resolved (random 4 KiB jobs often are after 5
iterations) or that no budget reaches measures nothing more. The round runs as
iterations of the same campaign (fresh file systems, interleaved rounds, the same
witness) and the next look decides again, up to MAX_LOOKS looks. Look k tests at α/2^k
(analysis.pairs.sequential), so the error rate holds whatever the rounds chose.

The design is kept in campaign.toml (`[resolve]`: looks and the cells of each round), so
`--resume` continues a round that was cut off and the analysis reads every look again.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd

from fslab.analysis.pairs.decisions import UNRESOLVED, seconds_per_iteration

if TYPE_CHECKING:
    from fslab.run.campaign import CampaignRun
    from fslab.run.runner import Progress, RunnerResult

MAX_LOOKS = 6  # the seventh would test at α/128: more iterations, little more power


@dataclass(frozen=True)
class Round:
    """The next round: (target, workload, last iteration) of each cell it measures."""

    cells: list[tuple[str, str, int]]
    seconds: float  # what it should cost, from this campaign's own runs
    left_out: list[str]  # workloads the budget does not reach, and why


def start_looking(run: CampaignRun) -> CampaignRun:
    """The campaign as one that resolves: its iterations so far are its first look."""
    if run.campaign.looks:
        return run
    campaign = dataclasses.replace(run.campaign, looks=[run.campaign.iterations],
                                   look_cells=[])
    run.results.write_campaign(campaign.to_dict())
    return dataclasses.replace(run, campaign=campaign)


def next_round(pairwise: pd.DataFrame, records: list[Any], looks: list[int],
               budget_s: float) -> Round:
    """The cells the next round measures, and up to which iteration (module doc)."""
    seconds = seconds_per_iteration(records)
    spent = sum(seconds.get((r.workload, r.target), 0.0) for r in records
                if r.status == "ok")
    wanted: dict[str, tuple[int, set[str]]] = {}  # workload -> (more iterations, targets)
    # a question of one section of a job file is answered by its job's runs
    run_workload = {str(row["workload"]): r.workload for r in records for row in r.metrics}
    primary = pairwise[pairwise["primary"].astype(bool)] if not pairwise.empty else pairwise
    for row in primary.itertuples():
        needs = float(row.needs_iterations) if row.needs_iterations == row.needs_iterations \
            else math.nan
        if row.decision != UNRESOLVED or not math.isfinite(needs):
            continue
        workload = run_workload.get(str(row.workload), str(row.workload))
        have = _count(row.n_pairs)
        have = have if have >= 2 else min(_count(row.n_a), _count(row.n_b))
        more, targets = wanted.get(workload, (0, set()))
        wanted[workload] = (max(more, int(needs) - have), targets | {str(row.a), str(row.b)})
    costs = {w: more * sum(seconds.get((w, t), math.nan) for t in targets)
             for w, (more, targets) in wanted.items()}
    cells: list[tuple[str, str, int]] = []
    left_out, total = [], 0.0
    for workload in sorted(wanted, key=lambda w: (costs[w] != costs[w], costs[w])):
        more, targets = wanted[workload]
        cost = costs[workload] if costs[workload] == costs[workload] else 0.0
        if more < 1:
            continue
        if spent + total + cost > budget_s:
            left_out.append(f"{workload}: {more} more iterations, about {cost / 60:.0f} min, "
                            "past the budget")
            continue
        total += cost
        cells += [(target, workload, looks[-1] + more) for target in sorted(targets)]
    return Round(cells, total, left_out)


def resolve(run: CampaignRun, outcome: RunnerResult, budget_s: float,
            progress: Progress | None, rerun_disturbed: bool = False,
            rerun_unsteady: bool = False) -> tuple[CampaignRun, RunnerResult, list[str]]:
    """Rounds until every primary question is decided, no budget is left or MAX_LOOKS
    looks are taken: (the campaign as it ended, every run's counts, what was left out)."""
    from fslab.analysis.pipeline import analyze_results
    from fslab.plan.order import make_plan
    from fslab.run.campaign import both

    run = start_looking(run)
    left_out: list[str] = []
    while len(run.campaign.looks) < MAX_LOOKS:
        done = analyze_results(run.results)
        planned = next_round(done.pairwise, list(run.results.run_records()),
                             run.campaign.looks, budget_s)
        left_out = planned.left_out
        if not planned.cells:
            break
        last = max(cell[2] for cell in planned.cells)
        campaign = dataclasses.replace(
            run.campaign, iterations=last, looks=[*run.campaign.looks, last],
            look_cells=[*run.campaign.look_cells, planned.cells])
        run.results.write_campaign(campaign.to_dict())
        run = dataclasses.replace(run, campaign=campaign, plan=make_plan(campaign),
                                  resume=True)
        outcome = both(outcome, run.execute(progress, rerun_disturbed,
                                            rerun_unsteady=rerun_unsteady))
    return run, outcome, left_out


def _count(value: Any) -> int:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return 0
    return int(number) if math.isfinite(number) else 0
