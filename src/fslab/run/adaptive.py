"""Adaptive iterations (`--until-ci`, `--until-detectable`) that keep their error rate.

Adding iterations one at a time until the observed spread happens to be small stops on
luck: the spread is the denominator of t, and an A/A simulation (CV 10 %, start at 3, up
to 20) found 7–10 % false positives instead of 5 % (docs/statistics.md). So fslab runs a two-stage
design instead (Stein 1945, here in its "pilot chooses n" form; Wittes & Brittain 1990
call the idea an internal pilot):

1. The campaign's own iterations are the pilot. From the pilot's spread — of each
   primary pair's log differences (`--until-detectable`) or of each headline cell's logs
   (`--until-ci`) — the number of further iterations that reaches the goal is solved for
   (analysis.pairs.power; the t quantile for intervals), the largest over all questions,
   between MIN_SECOND_STAGE and what `--max-iterations` leaves.
2. Those iterations run, and every estimate and verdict uses them alone (the pilot is
   recorded as `pilot = N` in campaign.toml, and the analysis leaves it out). The second
   stage's values are independent of the pilot that chose how many to take, so its t
   tests and intervals have exactly their stated error rates at whatever size was
   chosen; the test suite checks this by simulation (20,000 replicates per setting).

The price: the pilot's iterations inform the plan, not the answer. The plan rests on the
pilot's spread, so the goal is reached on average, not guaranteed; what is still short
of it afterwards is reported, and no further iterations are added (that would be the
biased rule again).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from fslab.analysis.cells.observations import per_run
from fslab.analysis.pairs.comparisons import compared_pairs
from fslab.analysis.pairs.power import MIN_SECOND_STAGE, detectable_sizes, interval_sizes
from fslab.analysis.pairs.questions import declared_primaries
from fslab.core.errors import UserError
from fslab.core.metrics import headline_of_each
from fslab.results.store import ResultsDir

if TYPE_CHECKING:  # numpy loads where it is used: a campaign's start needs Goal only
    import pandas as pd

@dataclass(frozen=True)
class Goal:
    """What an adaptive run is after: a CI half-width and/or a detectable ratio, in %."""

    until_ci: float | None = None
    until_detectable: float | None = None

    def __bool__(self) -> bool:
        return bool(self.until_ci or self.until_detectable)


def second_stage(pilot_dir: Path, goal: Goal, pilot: int, max_iterations: int) -> int:
    """How many iterations to run after a pilot of `pilot` in `pilot_dir` (module doc)."""
    import numpy as np

    room = max_iterations - pilot
    if room < 2:
        raise UserError(f"--max-iterations {max_iterations} leaves {room} iteration(s) after "
                        f"the {pilot}-iteration pilot; adaptive runs need at least 2 more "
                        f"(e.g. --max-iterations {pilot + MIN_SECOND_STAGE + 5})")
    results = ResultsDir.open(pilot_dir)
    metrics = results.load_metrics(categorical=True)
    runs = per_run(metrics)
    wanted = [MIN_SECOND_STAGE]
    if goal.until_detectable:
        _, pairs = compared_pairs(
            metrics, runs, declared=declared_primaries(list(results.run_records())),
            campaign_primary=results.campaign_settings().primary)
        primary = [p for p in pairs if p.primary]
        # SD of the log differences: se_log · √n (paired pairs) — the pilot's noise
        sd = np.array([p.se_log * math.sqrt(max(p.n_pairs, 1)) for p in primary], float)
        alphas = [p.alpha for p in primary if not math.isnan(p.alpha)]
        level = min(alphas) if alphas else (math.nan if primary else 0.05)
        wanted += list(detectable_sizes(sd, goal.until_detectable, level, room))
    if goal.until_ci:
        cells = runs[headline_rows(runs) & (runs["value"] > 0)]  # what the report shows
        logs = np.log(cells["value"].astype(float))
        sd = logs.groupby([cells[k].astype(str) for k in
                           ("target", "workload", "op", "metric")]).std(ddof=1)
        wanted += list(interval_sizes(sd.to_numpy(float), goal.until_ci, room))
    return int(min(room, max(wanted)))


def still_open(summary: pd.DataFrame, tests: pd.DataFrame | None, goal: Goal) -> list[str]:
    """What the goal asked for and the final data did not reach (reported, not chased)."""
    found = unconverged(summary, goal.until_ci) if goal.until_ci else []
    if goal.until_detectable and tests is not None:
        found += undetectable(tests, goal.until_detectable)
    return found


def unconverged(summary: pd.DataFrame, percent: float) -> list[str]:
    """Headline cells whose CI half-width exceeds `percent` % of the mean (or n < 2)."""
    cells = summary[headline_rows(summary) & (summary["n"] > 0)]
    wide = cells[~(cells["ci_half_width_pct"] <= percent)]
    return [f"{r.target} {r.workload} {r.op} {r.metric}: ±{r.ci_half_width_pct:.1f} %"
            for r in wide.itertuples()]


def headline_rows(frame: pd.DataFrame) -> pd.Series:
    """Which rows hold a headline metric of their own workload (metrics.headline_of_each:
    what the report shows)."""
    import pandas as pd

    pairs = list(zip(frame["workload"].astype(str), frame["metric"].astype(str), strict=True))
    shown = headline_of_each(pairs)
    return pd.Series([pair in shown for pair in pairs], index=frame.index, dtype=bool)


def undetectable(tests: pd.DataFrame, percent: float) -> list[str]:
    """Primary comparisons whose minimum detectable ratio is above 1 + `percent` %."""
    wanted = 1 + percent / 100
    primary = tests[tests["primary"].astype(bool)] if "primary" in tests else tests
    wide = primary[~(primary["mde_ratio"] <= wanted)]
    return [f"{r.workload} {r.op} {r.metric}: could detect {r.mde_ratio:.4g}×, not "
            f"{wanted:.3g}×" for r in wide.itertuples()]
