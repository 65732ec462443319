"""Alternatives that can be shown: a recommended level's near twins, and the rounds that
showing them equivalent takes.

A level is named an **alternative** of a recommended change only when the recommendation
with that level instead is shown equivalent to the recommendation within the margin (the
rule's equivalence: the two-sided interval inside ±margin, two one-sided tests at the
same level: Schuirmann 1987). At a CV of 10 % a pair of configurations needs about 20–30
paired rounds for that at ±10 %, more than an ablation gives each of its configurations;
so the twins are a question of their own, asked once, at the end of the confirmation,
with rounds spent for it:

- **near twins** (`near_twins`): the other levels of a changed factor that the race kept
  in its set beside the challenger's, or whose effect the screen put within the margin of
  the challenger's level (point estimates: a level the screen could not tell from it);
- stage 1 of the confirmation measures the challenger with each twin level instead beside
  its ablation (not a question of stage 1: its family is not widened by them);
- after the stages that choose the recommendation, each twin pair (the recommendation
  against it with the twin level) is planned from what the confirmation measured: the
  rounds at which that pair's own test resolves it 4 times in 5 if its measured ratio and
  spread hold (analysis.pairs.needs, the same rule as "needs N iterations"); when they fit
  the runs left, the recommendation and its twins are measured in that many more fresh
  rounds and each pair is asked once, on every round both ran, at α over the twin pairs
  (`show`); when they do not, the level is "not separated: would need N rounds". A twin
  shown better or worse than the recommendation on those rounds is separated: neither.

The number of rounds depends on the spread the first rounds showed and on their ratio,
not on whether they were equivalent, and the question is asked once (no look before):
a Stein-type two-stage design (Stein 1945), whose error the equivalence test keeps at
about its level.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from fslab.analysis.pairs.decisions import decide_pair
from fslab.analysis.pairs.model import ALPHA
from fslab.analysis.pairs.needs import needs_iterations
from fslab.core.pair import EQUIVALENT, FASTER, SLOWER, Pair, Spread
from fslab.tune.credit import Stage, changed, with_level
from fslab.tune.measure import CONFIRM, Measure, StageData
from fslab.tune.screen import Screen
from fslab.tune.space import Config

TWIN_POWER = 0.5  # rounds are spent on a twin pair when they resolve it this often at 1×


@dataclass(frozen=True)
class Twin:
    """One near twin of a recommended change: the level, its answer against the
    recommendation (None: not measured beside it) and, not shown, the rounds that would
    resolve it (∞: more than any budget; NaN: cannot be told)."""

    factor: int
    level: int
    answer: Pair | None
    needs: float = math.nan

    @property
    def shown(self) -> bool:
        """Shown equivalent: an alternative."""
        return self.answer is not None and self.answer.decision == EQUIVALENT

    @property
    def apart(self) -> bool:
        """Shown better or worse than the recommendation: separated, neither an
        alternative nor 'not separated'."""
        return self.answer is not None and self.answer.decision in (FASTER, SLOWER)


def near_twins(screened: Screen | None, challenger: Config, margin: float) -> list[Config]:
    """The challenger with another level of a changed factor whose screen effect is within
    the margin of the challenger's level (module doc); [] without a screen."""
    if screened is None:
        return []
    out = []
    for i in changed(challenger):
        effects = screened.factors[i].effects
        if challenger[i] not in effects:
            continue
        mine = math.log(effects[challenger[i]][0])
        out += [with_level(challenger, i, level) for level, (ratio, _, _) in effects.items()
                if level != challenger[i] and ratio > 0
                and abs(math.log(ratio) - mine) <= math.log1p(margin)]
    return out


def show(measure: Measure, measured: StageData, recommended: Config,
         twins: dict[int, list[int]], after: int, runs: int, margin: float,
         alpha: float = ALPHA) -> tuple[list[Twin], StageData, range | None]:
    """Each twin level of a factor the recommendation changes against the recommendation
    (module doc): (the twins, what the confirmation measured now, the rounds spent for
    them: after round `after`, at most `runs` runs; None: none spent)."""
    pairs = [(i, level) for i, levels in twins.items() if recommended[i]
             for level in levels if level != recommended[i]]
    if not pairs:
        return [], measured, None
    family = len(pairs)
    everything = range(1, after + 1)
    planned: dict[tuple[int, int], float] = {}
    for i, level in pairs:
        answer = _ask(measured, recommended, with_level(recommended, i, level), everything,
                      margin, alpha, family)
        planned[(i, level)] = _rounds(answer, measured, recommended, i, level, alpha, family,
                                      margin)
    wanted = [n for n in planned.values() if math.isfinite(n) and n > 0]
    spent: range | None = None
    configs = [recommended, *(with_level(recommended, i, level) for i, level in pairs)]
    extra = runs // len(configs) if wanted and max(wanted) * len(configs) <= runs else 0
    if extra:
        spent = range(after + 1, after + extra + 1)
        measured = measure(CONFIRM, spent, configs)
        everything = range(1, spent.stop)
    found = []
    for i, level in pairs:
        answer = _ask(measured, recommended, with_level(recommended, i, level), everything,
                      margin, alpha, family)
        if answer is not None and answer.decision in (EQUIVALENT, FASTER, SLOWER):
            found.append(Twin(i, level, answer))  # shown the same, or shown apart
            continue
        more = planned[(i, level)]
        needs = answer.needs_iterations if answer is not None and spent else (
            more + _shared(measured, recommended, with_level(recommended, i, level),
                           range(1, after + 1)) if math.isfinite(more) else more)
        found.append(Twin(i, level, answer, needs))
    return found, measured, spent


def _ask(measured: StageData, a: Config, b: Config, rounds: range, margin: float,
         alpha: float, family: int) -> Pair | None:
    """b (the twin) against a (the recommendation) on every round both ran; None when
    they share fewer than two."""
    if _shared(measured, a, b, rounds) < 2:
        return None
    return Stage((a, b), rounds, family, margin, measured.question.better, alpha).ask(
        measured, b, a)


def _shared(measured: StageData, a: Config, b: Config, rounds: range) -> int:
    mine = {r for r in measured.values.get(a, {}) if r in rounds}
    return len(mine & {r for r in measured.values.get(b, {}) if r in rounds})


def _rounds(answer: Pair | None, measured: StageData, recommended: Config, factor: int,
            level: int, alpha: float, family: int, margin: float) -> float:
    """The more rounds a twin pair needs to be resolved TWIN_POWER of the time (0: shown
    already; ∞ past any budget; NaN: nothing to plan from): from its own answer so far,
    else from the spread of a pair like it (the challenger's twin in stage 1)."""
    if answer is not None:
        if answer.decision == EQUIVALENT:
            return 0.0
        needs = needs_iterations(1.0, answer.spread, alpha / family, margin, TWIN_POWER)
        return needs - answer.iterations if math.isfinite(needs) else needs
    like = _like(measured, recommended, factor, level)
    if like is None:
        return math.nan
    return needs_iterations(1.0, Spread(0, paired_sd=like), alpha / family, margin,
                            TWIN_POWER)


def _like(measured: StageData, recommended: Config, factor: int, level: int) -> float | None:
    """The per-round SD of log differences of a measured pair differing only in `factor`
    at the recommended level and `level` (stage 1's challenger and its twin)."""
    for config, values in measured.values.items():
        if config[factor] != recommended[factor]:
            continue
        twin = with_level(config, factor, level)
        if twin in measured.values:
            pair = decide_pair(measured.values[twin], values, measured.question.better, 0.1)
            if pair.n_pairs >= 2 and pair.se_log > 0:
                return pair.se_log * math.sqrt(pair.n_pairs)
    return None
