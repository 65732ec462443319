"""`fslab compare BASE NEW`: two results directories, cell by cell, decided by the rule
of the verdicts (analysis.pairs.pair.decide): improved, regressed, the same within
the margin, or unresolved.

Before and after are two sittings (fresh file systems on one machine in two stretches of
time), and a sitting moves a target's level by its own effect, which no number of
iterations averages away: judged on their iterations alone, nothing changed showed as
"regressed" in 3 of 20 simulated pairs at a sitting SD of 5 % (issue 58). So each
change new/base counts the spread between sittings, `spread` (the host's history of how
far a level moves between two sittings, history/sittings.level_spread, each workload's
own; else the stated prior τ0 = 0.05 on 2 df): the change's interval is μ's when d =
log(new/base) is one draw of N(μ, τ² + s²), s² Welch's from the iterations, τ² from the
spread as a scaled inverse-χ² prior (analysis/sittings/spread.py with one "sitting": the
repeat interval's rule), so a regression is called only when it exceeds what a repeat
sitting shows. The spread is not tested against the change (no Q rule): here the two
sittings' difference is the change being judged, and a test of it against τ̃ is the change
test itself. `spread=None` judges the iterations alone, as one sitting (and says so).

Each cell (target × workload × op × headline metric present in both) is a ratio new/base
of geometric means with its interval from the one model of pairs (analysis.pairs.model):
Welch's t on the logs — the two campaigns' iterations are not blocks of each other.
Which cells are questions is the verdicts' rule too (analysis.pairs.questions: each
workload's primary metric); the questions are one family, Bonferroni-adjusted together,
so a campaign of many jobs does not trip the gate by chance, and each question's interval
is the simultaneous one its decision reads. Other metrics are exploratory: each its own
95 % interval, no decision. The same two campaigns fed to the verdicts as one campaign
of two targets (unblocked, as imports are) give the same intervals and decisions.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from fslab.analysis.cells.observations import per_run
from fslab.analysis.cells.stats import geomean
from fslab.analysis.pairs.decisions import decide_pair
from fslab.analysis.pairs.model import ALPHA
from fslab.analysis.pairs.pair import decide
from fslab.analysis.pairs.questions import primary_questions
from fslab.analysis.sittings.repeat import as_percent, for_workload
from fslab.analysis.sittings.spread import SittingEstimate, between_sittings
from fslab.core.campaign_settings import CampaignSettings
from fslab.core.environment_record import Environment, SittingSpread
from fslab.core.metrics import headline_of_each
from fslab.core.pair import IMPROVED, OVER_TIME, REGRESSED, UNRESOLVED, Pair
from fslab.core.units import DEFAULT_MARGIN

CELL = ["target", "workload", "op", "metric"]
COLUMNS = [*CELL, "primary", "unit", "better", "n_base", "n_new", "base_geomean",
           "new_geomean", "ratio", "ratio_ci_low", "ratio_ci_high", "p_adj", "alpha",
           "family", "decision", "margin", "needs_iterations", "mde_ratio", "note",
           "within_ci_low", "within_ci_high", "spread_tau", "spread_df", "spread_sittings",
           "within_decision"]
# What `fslab compare --json` prints of each cell (its contract with users' scripts).
JSON_FIELDS = [*CELL, "primary", "ratio", "ratio_ci_low", "ratio_ci_high", "decision",
               "margin", "needs_iterations", "unit", "better", "n_base", "n_new",
               "base_geomean", "new_geomean", "p_adj", "alpha", "family", "note",
               "within_ci_low", "within_ci_high", "spread_tau", "spread_sittings",
               "within_decision"]
EXPLORATORY = "estimate (not a question: no decision)"
ENVIRONMENT_KEYS = ("kernel", "cpu_model", "cpu_count", "memory_bytes", "fslab", "python",
                    "virtualization", "lab_fs", "dirty_ratio")
METHOD = ("compare: new/base per cell as a ratio of geometric means, Welch t on the logs "
          "(two campaigns' iterations are not blocks), and the spread between two sittings "
          "counted (the host's history from the catalogue, else the stated prior τ0 = 0.05 "
          "on 2 df: the repeat interval's rule); each workload's primary metric is a "
          "question, the questions one Bonferroni family; decided by the verdicts' rule: "
          "regressed or improved when the interval excludes 1, the same when it lies within "
          "the margin, else unresolved.")


@dataclass
class CampaignComparison:
    """`fslab compare BASE NEW`: one row per cell in both (COLUMNS), and every setting
    in which the two differ (what, base, new). What the compare reporters render."""

    base: Path
    new: Path
    cells: pd.DataFrame
    differences: list[tuple[str, str, str]]
    margin: float
    spread_note: str = ""  # what spread between sittings the changes were judged against

    def count(self, decision: str) -> int:
        """How many questions got this decision (regressed, improved, same, unresolved)."""
        if self.cells.empty:
            return 0
        return int(((self.cells["decision"] == decision) & self.cells["primary"]).sum())

    @property
    def open_but_decided_alone(self) -> int:
        """Questions the spread between sittings leaves unresolved that the iterations
        alone decide: what a history of the host's sittings would tell apart from a
        sitting's own shift."""
        if self.cells.empty:
            return 0
        primary = self.cells[self.cells["primary"].astype(bool)]
        return int(((primary["decision"] == UNRESOLVED)
                    & primary["within_decision"].isin([REGRESSED, IMPROVED])).sum())

    @property
    def regressed(self) -> bool:
        """A question decided worse: what `fslab compare` exits 1 on."""
        return self.count(REGRESSED) > 0

    def as_json(self) -> list[dict[str, object]]:
        """One object per cell (JSON_FIELDS), NaN as null."""
        out = []
        for row in self.cells[JSON_FIELDS].to_dict("records"):
            out.append({key: (None if isinstance(value, float) and math.isnan(value)
                              else (None if value == "" and key == "decision" else value))
                        for key, value in row.items()})
        return out

    def __iter__(self) -> Iterator[Any]:
        """Unpacks as (cells, differences): what callers of api.compare unpack."""
        return iter((self.cells, self.differences))


def compare_cells(base: pd.DataFrame, new: pd.DataFrame, margin: float = DEFAULT_MARGIN,
                  declared: dict[str, str] | None = None,
                  campaign_primary: Iterable[str] = (), alpha: float = ALPHA,
                  spread: SittingSpread | None = None) -> pd.DataFrame:
    """One row per cell present in both (COLUMNS): new/base with its interval, and for
    the questions (primary metrics) a decision (module docstring); `spread`: the
    between-sitting spread counted (None: the iterations alone)."""
    base_runs, new_runs = _shown(per_run(base)), _shown(per_run(new))
    questions = primary_questions(pd.concat([base_runs, new_runs], ignore_index=True),
                                  declared or {}, campaign_primary)
    new_groups = dict(list(new_runs.groupby(CELL, sort=True, observed=True)))
    cells = []
    for key, group in base_runs.groupby(CELL, sort=True, observed=True):
        if key in new_groups:
            cells.append((tuple(map(str, key)), group, new_groups[key]))
    family = max(1, sum(1 for key, _, _ in cells if key[1:] in questions))
    rows = [_row(key, a, b, key[1:] in questions, family, margin, alpha, spread)
            for key, a, b in cells]
    return pd.DataFrame(rows, columns=COLUMNS)


def _shown(runs: pd.DataFrame) -> pd.DataFrame:
    """The rows of each workload's headline metrics (what its report shows)."""
    pairs = list(zip(runs["workload"].astype(str), runs["metric"].astype(str), strict=True))
    shown = headline_of_each(pairs)
    return runs[[pair in shown for pair in pairs]]


def _row(key: tuple[str, ...], base: pd.DataFrame, new: pd.DataFrame, question: bool,
         family: int, margin: float, alpha: float, spread: SittingSpread | None
         ) -> dict[str, object]:
    """One cell: new/base from the model of pairs (base and new its two groups), its
    interval widened by the spread between two sittings."""
    a = base["value"].to_numpy(dtype=float)
    b = new["value"].to_numpy(dtype=float)
    a, b = a[np.isfinite(a)], b[np.isfinite(b)]
    better = str(base["better"].iloc[0])
    row: dict[str, object] = {
        **dict(zip(CELL, key, strict=True)), "primary": question,
        "unit": str(base["unit"].iloc[0]), "better": better, "n_base": len(a),
        "n_new": len(b), "base_geomean": geomean(a), "new_geomean": geomean(b),
        "family": family if question else 1, "margin": margin,
        "decision": UNRESOLVED if question else "", "needs_iterations": math.nan,
        "note": "" if question else EXPLORATORY, "within_ci_low": math.nan,
        "within_ci_high": math.nan, "spread_tau": math.nan, "spread_df": math.nan,
        "spread_sittings": 0, "within_decision": ""}
    pair = decide_pair(dict(enumerate(b.tolist())), dict(enumerate(a.tolist())), better,
                       margin, paired=False, alpha=alpha, family=family if question else 1,
                       not_blocks="two campaigns: their iterations are not blocks")
    if not pair.compared:
        return {**row, "ratio": pair.ratio, "ratio_ci_low": math.nan,
                "ratio_ci_high": math.nan, "p_adj": math.nan, "alpha": math.nan,
                "mde_ratio": math.nan, "note": f"no interval: {pair.note}"}
    row.update(ratio=pair.ratio, ratio_ci_low=pair.ratio_ci_low,
               ratio_ci_high=pair.ratio_ci_high, p_adj=pair.p_adj, alpha=pair.alpha,
               mde_ratio=pair.mde_ratio, note=pair.note or row["note"],
               within_ci_low=pair.ratio_ci_low, within_ci_high=pair.ratio_ci_high)
    if question:
        row["within_decision"] = pair.word(OVER_TIME)  # on the iterations alone
    if spread is not None and pair.se_log > 0:
        pair = _counted(pair, spread, key[1], min(len(a), len(b)), margin, row)
    if question:
        row["decision"] = pair.word(OVER_TIME)
        row["needs_iterations"] = pair.needs_iterations
    return row


def _counted(pair: Pair, spread: SittingSpread, workload: str, iterations: int,
             margin: float, row: dict[str, object]) -> Pair:
    """The pair with its interval (and p) once the spread between two sittings is
    counted (module docstring), decided again; `row` takes its columns."""
    own = for_workload(spread, workload)
    found = between_sittings([SittingEstimate(math.log(pair.ratio), pair.se_log, iterations,
                                              pair.df)], own, q_rule=False)
    low, high = found.mean_interval(pair.alpha)
    p_adj = min(1.0, found.two_sided_p() * pair.family)
    counted = decide(replace(pair, ratio_ci_low=math.exp(low), ratio_ci_high=math.exp(high),
                             p_adj=p_adj, significant=low > 0 or high < 0), margin,
                     needs=False)
    row.update(ratio_ci_low=counted.ratio_ci_low, ratio_ci_high=counted.ratio_ci_high,
               p_adj=p_adj, spread_tau=own.tau, spread_df=own.tau_df,
               spread_sittings=own.sittings)
    return counted


def spread_words(spread: SittingSpread | None, host: str, hosts_differ: bool) -> str:
    """What the changes were judged against, for the compare's reader."""
    if spread is None:
        return ("A sitting's own shift is not counted (--within-sitting): a change of the "
                "machine between BASE and NEW can show as a regression.")
    moves = f"±{as_percent(spread.tau):.1f} % (1 SD)"
    if spread.sittings:
        said = (f"Before and after are two sittings: each change is judged against how "
                f"far a target moves between two sittings on {host}, {moves}, from "
                f"{spread.sittings} earlier sittings in the catalogue (each workload's own "
                "where it has them).")
    else:
        said = (f"Before and after are two sittings: each change is judged against the "
                f"stated prior of how far a target moves between two sittings, {moves} on "
                f"{spread.tau_df:.0f} df (no history of {host}'s sittings: record them "
                "with --catalogue C, or pass --catalogue to compare).")
    if hosts_differ:
        said += " BASE and NEW ran on different hosts: the machines' own difference is " \
                "not counted."
    return said


def setting_differences(base_environment: Environment, new_environment: Environment,
                        base_campaign: CampaignSettings, new_campaign: CampaignSettings
                        ) -> list[tuple[str, str, str]]:
    """(what, base, new) for every recorded setting that differs: the environment's, and
    an aging run's own settings (campaign.toml [aging]: utilisation, recipe, fstrim …)."""
    diffs = environment_differences(base_environment, new_environment)
    base_aging, new_aging = base_campaign.aging, new_campaign.aging
    for key in sorted(set(base_aging) | set(new_aging)):
        a, b = base_aging.get(key, "–"), new_aging.get(key, "–")
        if a != b:
            diffs.append((f"aging {key}", str(a), str(b)))
    return diffs


def environment_differences(base: Environment, new: Environment
                            ) -> list[tuple[str, str, str]]:
    """(what, base, new) for every recorded setting that differs between two campaigns
    ('–' where one did not record it)."""
    def shown(value: object) -> str:
        return "–" if value in ("", None, 0) else str(value)

    diffs = []
    for key in ENVIRONMENT_KEYS:
        if shown(base.fact(key)) != shown(new.fact(key)):
            diffs.append((key, shown(base.fact(key)), shown(new.fact(key))))
    for tool in sorted(set(base.tools) | set(new.tools)):
        a, b = base.tools.get(tool, "–"), new.tools.get(tool, "–")
        if a != b:
            diffs.append((f"{tool} version", a, b))
    for name in sorted(set(base.targets) & set(new.targets)):
        said, says = base.targets[name].to_json(), new.targets[name].to_json()
        for field in ("fs_impl", "mkfs_command", "mount_options_requested",
                      "mount_options_added", "image_size",
                      "loop_direct_io", "throttle", "properties"):
            if said.get(field) != says.get(field):
                diffs.append((f"{name} {field}", str(said.get(field)), str(says.get(field))))
    return diffs
