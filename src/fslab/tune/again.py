"""`fslab tune --again DIR`: the tune's recommendation confirmed once more in a new sitting
(its ablation: the recommendation, the reference and the recommendation without each
option, measured in fresh interleaved rounds under a new seed, into DIR/sittings/N), and
each option's contribution pooled over every sitting (analysis/sittings/pooled.py), so
that `change` can mean "holds next time".

Each sitting's contribution of an option is its confirmation's challenger against the
challenger without it on that sitting's rounds, by the one model of pairs (a paired t on
the rounds both ran: that pair's own variance, as the confirmation reads it); the options
are one Bonferroni family. stats/tune_options.csv
keeps its columns and gains `sittings`, `next_low`, `next_high` (where the next sitting's
contribution should fall) and the pooled contribution with its interval.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from fslab.analysis.pairs.model import ALPHA
from fslab.tune.confirm import CHANGE, FIRST_SHARE, LEAST_ROUNDS, confirm, second_stage
from fslab.tune.measure import CONFIRM, CampaignMeasure, StageData, questions_of, read
from fslab.tune.space import Config, Space

if TYPE_CHECKING:
    from fslab.host.lab import Lab
    from fslab.plan.loading import Campaign
    from fslab.run.runner import Progress

ROUNDS = max(LEAST_ROUNDS, 5)  # a repeat confirms on the tuner's least confirmation
POOLED = ["sittings", "pooled_contribution", "pooled_ci_low", "pooled_ci_high", "next_low",
          "next_high", "next_verdict"]


def recommended_of(options: pd.DataFrame, space: Space) -> Config:
    """The configuration a tune recommended: its `change` rows' levels, else reference."""
    chosen = {str(r.factor): str(r.level) for r in options.itertuples() if r.verdict == CHANGE}
    return tuple(f.levels.index(chosen[f.name]) if f.name in chosen else 0
                 for f in space.factors)


def contributions(measured: StageData, recommended: Config, margin: float
                  ) -> dict[int, tuple[float, float]]:
    """{factor: (log contribution, its standard error)} of one sitting's confirmation: its
    challenger (the configuration with the most options changed) against it without
    each option the recommendation changes too, each pair on the rounds both ran."""
    from fslab.analysis.pairs.decisions import decide_pair

    configs = [c for c in measured.values if all(
        v in (0, recommended[i]) or not recommended[i] for i, v in enumerate(c))]
    if not configs:
        return {}
    challenger = max(configs, key=lambda c: sum(1 for v in c if v))
    out = {}
    for i, level in enumerate(recommended):
        back = tuple(0 if j == i else v for j, v in enumerate(challenger))
        if not level or challenger[i] != level or back not in measured.values:
            continue
        found = decide_pair(measured.values[challenger], measured.values[back],
                            measured.question.better, margin, alpha=ALPHA)
        if found.se_log > 0 and found.ratio > 0:
            out[i] = (math.log(found.ratio), found.se_log)
    return out


def again(directory: Path, campaign: Campaign, space: Space, margin: float,
          sittings: list[Path], lab: Lab, progress: Progress | None = None
          ) -> tuple[pd.DataFrame, list[str]]:
    """Confirm in the last of `sittings` (a new directory) and pool over all of them:
    (tune_options.csv with POOLED, the lines to print)."""
    from fslab.analysis.sittings.pooled import pool, ratio_interval
    from fslab.plan.levels import path_name

    options = pd.read_csv(directory / "stats" / "tune_options.csv")
    questions = questions_of(campaign)
    lines: list[str] = []
    for column in POOLED:
        options[column] = pd.Series([math.nan] * len(options), dtype=object)
    for target, job in questions:
        part = "" if len(questions) == 1 else path_name(f"{target}-{job}")

        def place(root: Path, part: str = part) -> Path:
            return root / part if part else root

        mine = (options["target"] == target) & (options["workload"] == job)
        recommended = recommended_of(options[mine], space)
        if not any(recommended):
            lines.append(f"{job} on {target}: the tune kept the reference; nothing to confirm")
            continue
        measure = CampaignMeasure(campaign, space, target, job, place(sittings[-1]), lab,
                                  progress)
        ablation = ROUNDS * (space.changes(recommended) + 2)  # stage 1: ROUNDS each
        confirm(measure, space, recommended, None, [], math.ceil(
            ablation / FIRST_SHARE) if second_stage(space, recommended) else ablation,
            margin)
        measure.analyse(CONFIRM)
        question = measure.question
        found: dict[int, list[tuple[float, float]]] = {}
        for root in sittings:
            if question is None or not (place(root) / CONFIRM / "format.json").exists():
                continue
            measured = read(place(root) / CONFIRM, space, question, until=10 ** 6)
            for i, value in contributions(measured, recommended, margin).items():
                found.setdefault(i, []).append(value)
        family = max(1, sum(1 for v in recommended if v))
        for i, values in sorted(found.items()):
            name = space.factors[i].name
            row = mine & (options["factor"] == name)
            if len(values) < 2:
                options.loc[row, "sittings"] = len(values)
                continue
            pooled = pool([v for v, _ in values], [s for _, s in values], ALPHA / family)
            ratio, low, high, next_low, next_high = ratio_interval(pooled)
            sign = 1 if question is not None and question.better == "higher" else -1
            helps = (next_low > 1) if sign > 0 else (next_high < 1)
            verdict = "holds next time" if helps else "may not hold next time"
            options.loc[row, POOLED] = [len(values), ratio, low, high, next_low, next_high,
                                        verdict if math.isfinite(next_low) else ""]
            shown = (f"next sitting {next_low:.3g}–{next_high:.3g}×: {verdict}"
                     if math.isfinite(next_low) else "next sitting: not from 2 sittings")
            lines.append(f"{job} on {target}: {name}: {(ratio - 1) * 100:+.0f} % over "
                         f"{len(values)} sittings (CI {low:.3g}–{high:.3g}×); {shown}")
    return options, lines
