"""`fslab tune --again DIR`: the tune's recommendation measured once more in a new sitting
(fresh interleaved rounds under a new seed, into DIR/sittings/N), and what holds next
time decided over the sittings.

One quantity in every sitting: the recommended configuration R against itself without
each change (an option's **share**, R against R − i) and against the reference (the
**whole configuration**'s gain). The first sitting's confirmation measured R − i for
every change when R is its challenger or one of its ablation's subsets; where it did not
(a recommendation of three or more changes from which the ablation took some back), that
option's share comes from the later sittings alone, and the words say so. Each share is
the one model of pairs on the rounds both ran (analysis.pairs.decisions.decide_pair: a
paired t, that pair's own variance).

The first sitting chose the options on its own data, so what it measured of them reads
high (an option truly worth 1.08× shows 1.13× on average among those chosen: issue 58);
"holds next time" is decided on the sittings after it (tune/carry.py), the first
sitting's share printed beside them as what it was. The options are one Bonferroni
family.

stats/tune_options.csv keeps its columns; the carry columns (tables.CARRY_COLUMNS) hold
the sittings pooled, the later sittings' pooled share with its interval, where the next
sitting's share should fall (`next_low`, `next_high`) and the verdict (`next_verdict`).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from fslab.analysis.pairs.decisions import decide_pair
from fslab.analysis.pairs.model import ALPHA
from fslab.analysis.sittings.spread import SittingEstimate
from fslab.history.option_effects import LEVEL, OPTION, Contrast
from fslab.tune.by_question import question_dir
from fslab.tune.carry import WHOLE, Carried, carried, first_sitting
from fslab.tune.confirm import FIRST_SHARE, LEAST_ROUNDS, confirm, second_stage
from fslab.tune.credit import CHANGE, ablation_configs, changed, without
from fslab.tune.measure import (
    CONFIRM,
    CampaignMeasure,
    Measure,
    StageData,
    question_of,
    questions_of,
    read,
)
from fslab.tune.space import Config, Space
from fslab.tune.tables import CARRY_COLUMNS, EACH_SITTING, carry_row
from fslab.tune.text import carry_lines

if TYPE_CHECKING:
    from collections.abc import Callable

    from fslab.core.environment_record import SittingSpread
    from fslab.host.lab import Lab
    from fslab.plan.schema import Campaign
    from fslab.run.runner import Progress
    from fslab.tune.tuner import Tuned

ROUNDS = max(LEAST_ROUNDS, 5)  # a repeat's fewest rounds of each configuration
MOST_ROUNDS = 30  # and its most: a repeat measures as the first sitting's confirmation did


def confirmed(sitting: Path) -> bool:
    """Whether a sitting of a tune finished: every confirmation in it was analysed (a
    confirmation is analysed once, at its end)."""
    found = list(sitting.rglob(f"{CONFIRM}/format.json"))
    return bool(found) and all((f.parent / "stats").is_dir() for f in found)


def recommended_of(options: pd.DataFrame, space: Space) -> Config:
    """The configuration a tune recommended: its `change` rows' levels, else reference."""
    chosen = {str(r.factor): str(r.level) for r in options.itertuples() if r.verdict == CHANGE}
    return tuple(f.levels.index(chosen[f.name]) if f.name in chosen else 0
                 for f in space.factors)


def shares(measured: StageData, recommended: Config, margin: float
           ) -> dict[int, SittingEstimate]:
    """{factor: its share} of one sitting (R against R − i, each pair on the rounds both
    ran), and at WHOLE the whole configuration against the reference; a contrast the
    sitting did not measure is absent."""
    mine = measured.values.get(recommended)
    out: dict[int, SittingEstimate] = {}
    if not mine:
        return out
    others = {i: without(recommended, i) for i in changed(recommended)}
    others[WHOLE] = tuple(0 for _ in recommended)
    for key, other in others.items():
        if other not in measured.values:
            continue
        found = decide_pair(mine, measured.values[other], measured.question.better, margin,
                            alpha=ALPHA)
        if found.se_log > 0 and found.ratio > 0 and found.n_pairs >= 2:
            out[key] = SittingEstimate(math.log(found.ratio), found.se_log, found.n_pairs,
                                       found.n_pairs - 1)
    return out


def contrast_rows(space: Space, recommended: Config, found: dict[int, SittingEstimate],
                  measured: StageData, ids: Contrast) -> list[Contrast]:
    """One sitting's rows for the host's history (history/option_effects.py): each
    change's share, and each bounded metric's level of the recommendation and the
    reference (log geometric mean, its standard error, the rounds); `ids`: a row whose
    identity fields (tune, sitting, host, fs, target, workload) the rows take."""
    import dataclasses

    import numpy as np

    rows = [dataclasses.replace(ids, kind=OPTION, name=space.factors[i].name,
                                what=space.factors[i].levels[recommended[i]],
                                estimate=value.estimate, se=value.se, rounds=value.iterations)
            for i, value in sorted(found.items()) if i != WHOLE]
    for bound in space.bounds:
        for config in (recommended, space.reference):
            values = [v for v in measured.bounded.get(bound.metric, {}).get(config, {})
                      .values() if v > 0]
            if len(values) >= 2:
                logs = np.log(values)
                rows.append(dataclasses.replace(
                    ids, kind=LEVEL, name=bound.metric, what=space.describe(config),
                    estimate=float(logs.mean()),
                    se=float(logs.std(ddof=1)) / math.sqrt(len(logs)), rounds=len(logs)))
    return rows


def measure_again(measure: Measure, space: Space, recommended: Config, margin: float,
                  rounds: int = ROUNDS) -> StageData | None:
    """One more sitting of the recommendation: a confirmation of it (the reference, R and
    R without each change, `rounds` rounds each — as many as the first sitting's
    confirmation measured R, within ROUNDS and MOST_ROUNDS, so that the sitting that
    decides knows about as much as the one that chose; a second stage where R may need
    one), on fresh rounds; what it measured. (Twice as many rounds decided no more in
    benchmarks/tune_carry: past a sitting's noise, the spread between sittings decides.)"""
    rounds = min(max(rounds, ROUNDS), MOST_ROUNDS)
    ablation = rounds * len(ablation_configs(space, recommended, None, []))
    return confirm(measure, space, recommended, None, [], math.ceil(
        ablation / FIRST_SHARE) if second_stage(space, recommended) else ablation,
        margin).measured


def first_carry(one: Tuned, history: SittingSpread | None) -> dict[int, Carried]:
    """Each change of a tune's recommendation, and the whole configuration, as a promise
    about the next sitting from this sitting alone (tune/carry.first_sitting)."""
    confirmation = one.confirmation
    if confirmation.measured is None or confirmation.recommended == one.space.reference:
        return {}
    found = shares(confirmation.measured, confirmation.recommended, one.margin)
    family = max(1, len(changed(confirmation.recommended)))
    return {key: first_sitting(value, history, ALPHA / family, one.question.better,
                               one.margin) for key, value in found.items()}


def again(directory: Path, campaign: Campaign, space: Space, margin: float,
          sittings: list[Path], lab: Lab, progress: Progress | None = None,
          history: Callable[[str, str], SittingSpread | None] | None = None
          ) -> tuple[pd.DataFrame, list[str],
                     dict[tuple[str, str], list[dict[int, SittingEstimate]]]]:
    """Measure the last of `sittings` (a new directory) and decide over all of them:
    (tune_options.csv with the carry columns, the lines to print, each question's shares
    in each sitting, for the catalogue). `history(fs, job)`: the host's spread of option
    effects (history/option_effects.py; None: the stated prior)."""
    options = pd.read_csv(directory / "stats" / "tune_options.csv")
    for column in [*CARRY_COLUMNS, EACH_SITTING]:
        options[column] = pd.Series([math.nan] * len(options), dtype=object)
    questions = questions_of(campaign)
    lines: list[str] = []
    new: dict[tuple[str, str], list[dict[int, SittingEstimate]]] = {}
    fs_of = {t.name: t.fs for t in campaign.targets}
    for target, job in questions:
        def place(root: Path, target: str = target, job: str = job) -> Path:
            return question_dir(root, questions, target, job)

        mine = (options["target"] == target) & (options["workload"] == job)
        recommended = recommended_of(options[mine], space)
        if not any(recommended):
            lines.append(f"{job} on {target}: the tune kept the reference; nothing to confirm")
            continue
        first = place(sittings[0]) / CONFIRM
        before = read(first, space, question_of(first, target, job, space.objective),
                      until=10 ** 6) if (first / "format.json").exists() else None
        measure = CampaignMeasure(campaign, space, target, job, place(sittings[-1]), lab,
                                  progress)
        measure_again(measure, space, recommended, margin,
                      len(before.values.get(recommended, {})) if before else ROUNDS)
        measure.analyse(CONFIRM)
        question = measure.question
        if question is None:
            continue
        each = [shares(read(place(root) / CONFIRM, space, question, until=10 ** 6),
                       recommended, margin)
                if (place(root) / CONFIRM / "stats").is_dir() else {} for root in sittings]
        new[(target, job)] = each
        known = history(fs_of.get(target, ""), job) if history is not None else None
        family = max(1, len(changed(recommended)))
        found = {key: carried([s.get(key) for s in each], known, ALPHA / family,
                              question.better, margin)
                 for key in [WHOLE, *changed(recommended)] if any(key in s for s in each)}
        for key, value in found.items():
            if key == WHOLE:
                continue
            row = mine & (options["factor"] == space.factors[key].name)
            options.loc[row, CARRY_COLUMNS] = list(carry_row(value).values())
            options.loc[row, EACH_SITTING] = ";".join(
                f"{math.exp(s[key].estimate):.4g}" if key in s else "" for s in each)
        lines += carry_lines(f"{job} on {target}", space, recommended, found, each,
                             question.better)
    return options, lines, new
