"""The confirmation: on fresh interleaved rounds the race did not choose on, each change of
the challenger earns its place or not, and the configuration the mkfs and mount lines
describe is measured as it stands, against the reference and against the race's best.

Stage 1 is an ablation (after Fawcett & Hoos 2016: every change taken back on its own):
the reference, the challenger, the challenger without each change, the race's best, and
the challenger with a changed factor at another level the race could not tell from it
(tune/credit.py reads it). With one or two changes every subset of them is measured, and
the recommendation is one of them: stage 1 is the whole confirmation. Otherwise — three
changes or more of which stage 1 took some back, or a --subject-to bound the
recommendation was not shown to keep — stage 2 measures the recommendation as it stands
on rounds of its own (runs are kept for it: FIRST_SHARE goes to stage 1): the reference,
the recommendation, the race's best, the strongest change stage 1 took back added back
where the challenger's gain is more than its changes one at a time explain (options either
of which suffices are found there), and under a bound the best measured subset that keeps
it (chosen among those tried with the level divided by their number). The headline ratio,
its interval, the comparison with the race's best and the latency check are the
recommended configuration's own, from the last stage that measured it. Each stage's
intervals are 95 % together over every question it may answer (`Stage.family`).

Under a bound the recommendation's next fresh file system must be shown to keep it
(tune/latency.py: a prediction bound); else the fallback measured again keeps it, else the
reference stays; the reference's own standing is said beside it.

`confirm()` is a function of what `Measure` returns and gives back a value, so a second
sitting can run it again.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from fslab.analysis.cells.stats import geomean
from fslab.analysis.pairs.decisions import sign
from fslab.analysis.pairs.model import ALPHA
from fslab.analysis.pairs.selection import block_fit
from fslab.analysis.sittings.repeat import PRIOR_TAU, as_percent
from fslab.core.environment_record import SittingSpread
from fslab.core.pair import FASTER, Pair
from fslab.tune.credit import (
    CHANGE,
    KEEP,
    Contribution,
    Stage,
    ablation_configs,
    ablation_family,
    changed,
    forward_family,
    read_ablation,
    read_forward,
    with_level,
)
from fslab.tune.latency import Standing, keeps_all, standings
from fslab.tune.measure import CONFIRM, Measure, StageData
from fslab.tune.space import Config, Space
from fslab.tune.twins import Twin, show

LEAST_ROUNDS = 3  # a paired t on fresh rounds has degrees of freedom from here
FIRST_SHARE = 0.65  # of the confirmation's runs, stage 1's where a stage 2 may follow
TWIN_SHARE = 0.75  # stage 1's where near twins follow (tune/twins.py) and no stage 2
# Narrower than the spread of a ratio between sittings on one machine (the prior of
# analysis/sittings/repeat.py, PRIOR_TAU, ±5 %; docs/statistics.md), a contribution's
# interval says more than the next sitting will keep.
SITTING_NOTE = ("the confirmation stopped at {rounds} rounds: past them its intervals "
                "(±{width:.1f} %) would be narrower than a machine's usual spread between "
                "sittings (a ratio moves ±{spread:.0f} %, 1 SD), and more rounds in this "
                "sitting buy nothing that holds next time; confirm in another sitting: "
                "fslab tune --again DIR")


@dataclass
class Confirmation:
    """What the confirmation measured and found (module doc)."""

    reference: Config
    challenger: Config
    best: Config | None  # the race's best
    configs: list[Config]
    rounds: int
    measured: StageData | None
    bundle: Pair | None  # challenger / reference, stage 1
    contributions: list[Contribution]
    recommended: Config
    recommended_answer: Pair | None  # recommended / reference, its own
    against_best: Pair | None = None  # recommended / the race's best
    stages: list[Stage] = field(default_factory=list)
    standing: dict[str, list[Standing]] = field(default_factory=dict)  # recommended, reference
    notes: list[str] = field(default_factory=list)
    capped: bool = False  # a stage stopped at `most_rounds` with runs left (issue 51)
    # the headline is from the stage whose rounds chose the recommendation (issue 58: it
    # may read high; a sitting that did not choose it, `fslab tune --again`, measures it)
    chosen_on_headline: bool = False
    twin_rounds: range | None = None  # the rounds spent to show near twins (twins.py)

    def verdict(self, factor: int) -> str:
        """CHANGE when the recommendation sets the factor away from its reference."""
        return CHANGE if self.recommended[factor] else KEEP

    def within_best(self, margin: float) -> bool | None:
        """Whether the recommendation is shown within the margin of the race's best (its
        interval's worse end no further than the margin); None: nothing to show."""
        answer = self.against_best
        if answer is None or self.best in (None, self.recommended):
            return None
        worse_end = answer.advantage[1]
        return worse_end == worse_end and worse_end >= 1 / (1 + margin)


def second_stage(space: Space, challenger: Config) -> bool:
    """Whether the recommendation may need a stage of its own (module doc)."""
    return space.changes(challenger) >= 3 or bool(space.bounds)


def least_runs(space: Space, challenger_changes: int) -> int:
    """The fewest runs a confirmation of that many changes takes (LEAST_ROUNDS each of
    the reference, the challenger, each change taken back and the race's best; and a
    second stage's reference, recommendation and best)."""
    first = challenger_changes + 3
    second = _second_size(space) if challenger_changes >= 3 or space.bounds else 0
    return LEAST_ROUNDS * (first + second)


def _second_size(space: Space) -> int:
    """The configurations a second stage measures at least."""
    return 3 + bool(space.bounds)


def confirm(measure: Measure, space: Space, challenger: Config, best: Config | None,
            members: list[Config], runs: int, margin: float, alpha: float = ALPHA,
            most_rounds: int | None = None, near: tuple[Config, ...] = (),
            level_spread: SittingSpread | None = None) -> Confirmation:
    """Confirm `challenger` with `runs` runs (module doc), each stage in `most_rounds`
    rounds at most (sitting_rounds: more buy nothing that holds next time); `best`: the
    race's best; `members` (its set) and `near` (the screen's near twins): the challenger
    with another level of a changed factor, held against the recommendation
    (tune/twins.py); `level_spread`: the between-sitting spread of a bounded metric's
    level on this host (tune/latency.py: the bound is then for the next sitting)."""
    reference = space.reference
    if challenger == reference:
        return Confirmation(reference, reference, best, [], 0, None, None, [], reference,
                            None, notes=["nothing but the reference to confirm"])
    rival = best if best not in (None, challenger) else None
    others = {i: [level for level in range(1, len(space.factors[i].levels))
                  if level != challenger[i] and (with_level(challenger, i, level) in members
                                                 or with_level(challenger, i, level) in near)]
              for i in changed(challenger)}
    twinned = any(others.values())
    configs = ablation_configs(space, challenger, rival,
                               [with_level(challenger, i, level)
                                for i, levels in others.items() for level in levels])
    two = second_stage(space, challenger)
    share = min(int(FIRST_SHARE * runs), runs - LEAST_ROUNDS * _second_size(space)) \
        if two else (int(TWIN_SHARE * runs) if twinned else runs)
    first = max(LEAST_ROUNDS, share // len(configs))
    most = max(LEAST_ROUNDS, most_rounds) if most_rounds is not None else 10 ** 6
    capped = first > most
    first = min(first, most)
    measured = measure(CONFIRM, range(1, first + 1), configs)
    better = measured.question.better
    stage = Stage(tuple(configs), range(1, first + 1), ablation_family(
        space.changes(challenger), rival is not None, best is not None), margin, better,
        alpha)
    bundle = stage.ask(measured, challenger, reference)
    reading = read_ablation(stage, measured, space, challenger, bundle)
    stages = [stage]
    chosen = first_pick = reading.recommended
    notes: list[str] = []
    fallback = _fallback(measured, space, stage, chosen, alpha, level_spread) \
        if space.bounds else None
    needed = (space.changes(challenger) >= 3 and chosen != challenger) or bool(
        reading.forward) or fallback is not None
    pooled = not (needed and space.bounds)
    if two and (chosen != reference or needed):
        extra = [with_level(chosen, i, challenger[i]) for i in reading.forward]
        rival = best if best not in (None, chosen) else None
        second = list(dict.fromkeys(c for c in [reference, chosen, rival, fallback, *extra]
                                    if c is not None))
        rounds = max(LEAST_ROUNDS, (runs - first * len(configs)) // len(second))
        capped = capped or rounds > most
        rounds = min(rounds, most)
        numbers = range(first + 1, first + rounds + 1)
        measured = measure(CONFIRM, numbers, second)
        stage = Stage(tuple(second), numbers, forward_family(
            len(reading.forward), 1 + (fallback is not None), rival is not None),
            margin, better, alpha)
        stages.append(stage)
        top = read_forward(stage, measured, challenger, chosen, reading.forward, reading) \
            if reading.forward else chosen
        if top not in configs and top != chosen:
            notes.append(f"{space.describe(top)} measured as it stands on fresh rounds: "
                         "an option taken back in the ablation added back alone")
        elif chosen not in configs:
            notes.append(f"{space.describe(chosen)} (the challenger without the options "
                         "not shown to help) measured as it stands on fresh rounds")
        if needed and space.bounds:  # measured again: kept on the fresh rounds alone
            chosen = _within_bounds(measured, space, stage, [top, chosen, fallback], notes,
                                    alpha, level_spread)
        else:
            chosen = top
    # the recommendation's own questions on the rounds of a stage that did not choose it:
    # every round that measured it beside the reference (and the race's best) where the
    # race chose it (not where a bound's check must be on the fresh rounds alone), the
    # last stage's alone where an earlier one chose it; else the stage that chose it, said
    chose = _chose_on(stages, challenger, chosen, first_pick)
    last = stages[-1] if len(stages) == 1 or not pooled or chose is not None else Stage(
        stages[-1].configs, range(1, stages[-1].rounds.stop), stages[-1].family, margin,
        better, alpha)
    answer = last.ask(measured, chosen, reference) if chosen != reference else None
    against = last.ask(measured, chosen, best) if best is not None and chosen != best \
        and best in last.configs else None
    used = sum(len(one.configs) * len(one.rounds) for one in stages)
    twins, measured, spent = show(measure, measured, chosen, others,
                                  stages[-1].rounds.stop - 1, runs - used, margin, alpha)
    contributions = [_with_twins(reading.contributions[i], twins)
                     for i in sorted(reading.contributions)]
    twin_configs = [with_level(chosen, t.factor, t.level) for t in twins] if spent else []
    found = Confirmation(reference, challenger, best, list(dict.fromkeys(
        [*(c for one in stages for c in one.configs), *twin_configs])),
        sum(len(one.rounds) for one in stages),
        measured, bundle, contributions, chosen, answer, against, stages, notes=notes,
        capped=capped, chosen_on_headline=chose == len(stages) - 1 and answer is not None,
        twin_rounds=spent)
    if space.bounds:  # said on the rounds the bound was decided on
        decided_on = stages[-1] if needed else stages[0]
        found.standing = {name: standings(measured, space.bounds, config,
                                          decided_on.rounds, alpha, spread=level_spread)
                          for name, config in (("recommended", chosen),
                                               ("reference", reference))}
    return found


def _chose_on(stages: list[Stage], challenger: Config, chosen: Config,
              first_pick: Config) -> int | None:
    """The stage whose rounds chose the recommendation (None: the race chose it, as the
    challenger): stage 1 where its reading took changes back; the second where an option
    added back there, or a bound checked there, made it."""
    if chosen == first_pick:
        return None if chosen == challenger else 0
    return len(stages) - 1


def _with_twins(found: Contribution, twins: list[Twin]) -> Contribution:
    """A changed option with its near twins read (tune/twins.py): alternatives shown
    equivalent, those not shown either way not separated with the rounds they would need
    (a twin shown better or worse is separated: neither)."""
    mine = [t for t in twins if t.factor == found.factor]
    if not mine:
        return found
    apart = [t for t in mine if not t.shown and not t.apart]
    return replace(found, alternatives=tuple(t.level for t in mine if t.shown),
                   not_separated=tuple(t.level for t in apart),
                   needs=tuple(t.needs for t in apart))


def sitting_rounds(values: dict[Config, dict[int, float]], questions: int,
                   alpha: float = ALPHA) -> tuple[int, float]:
    """(rounds, the half-width they give, in %): the fewest rounds at which a contribution's
    interval — a paired t on that many rounds, its two configurations' spread that of the
    block model of the rounds seen so far (its 90 % upper bound: a spread read from a few
    rounds is often too small), at α over `questions` — is as narrow as the prior spread
    between sittings (analysis.sittings.repeat.PRIOR_TAU, log scale);
    a large number when those rounds cannot tell (no residual)."""
    from scipy import stats

    fit = block_fit(values)
    if fit is None or not fit.sigma > 0:
        return 10 ** 6, math.nan
    sigma = fit.sigma * math.sqrt(fit.df / float(stats.chi2.ppf(0.10, fit.df)))
    level = 1 - alpha / (2 * max(1, questions))
    for rounds in range(LEAST_ROUNDS, 10 ** 4):
        half = float(stats.t.ppf(level, rounds - 1)) * sigma * math.sqrt(2 / rounds)
        if half <= PRIOR_TAU:
            return rounds, as_percent(half)
    return 10 ** 6, math.nan


def _fallback(measured: StageData, space: Space, stage: Stage, recommended: Config,
              alpha: float, spread: SittingSpread | None) -> Config | None:
    """When the recommendation is not shown to keep a bound on stage 1 (or was not
    measured there): the stage-1 configuration with only its options and the best
    centre whose next file system is shown to keep every bound, the level divided by the
    number tried; None when none is."""
    reference = space.reference
    if recommended in stage.configs and keeps_all(measured, space.bounds, recommended,
                                                  stage.rounds, alpha, spread=spread):
        return None
    tried = [c for c in stage.configs if c not in (reference, recommended) and all(
        v in (0, recommended[i]) for i, v in enumerate(c))]
    kept = [c for c in tried if keeps_all(measured, space.bounds, c, stage.rounds, alpha,
                                          len(tried), spread)]
    if not kept:
        return None
    direction = sign(stage.better)
    return max(kept, key=lambda c: direction * _log_centre(measured, c, stage.rounds))


def _log_centre(measured: StageData, config: Config, rounds: range) -> float:
    centre = geomean(v for r, v in measured.values.get(config, {}).items() if r in rounds)
    return math.log(centre) if centre > 0 else -math.inf


def _within_bounds(measured: StageData, space: Space, stage: Stage, order: list[Config | None],
                   notes: list[str], alpha: float, spread: SittingSpread | None) -> Config:
    """The first of `order` measured in stage 2 whose next file system is shown to keep
    every bound there (each tried at α over their number) and, beside the reference,
    shown faster than it; else the reference (module doc)."""
    reference = space.reference
    tried = [c for c in dict.fromkeys(order) if c is not None and c in stage.configs]
    for config in tried:
        if config == reference:
            return config
        keeps = keeps_all(measured, space.bounds, config, stage.rounds, alpha, len(tried),
                          spread)
        faster = stage.ask(measured, config, reference).decision == FASTER
        if keeps and faster:
            if config != tried[0]:
                notes.append(f"{space.describe(tried[0])} is not recommended: its next "
                             f"file system is not shown to keep "
                             f"{', '.join(b.text for b in space.bounds)}; "
                             f"{space.describe(config)} is, measured again")
            return config
    if tried:
        notes.append(f"{space.describe(tried[0])} is not recommended: its next file "
                     f"system is not shown to keep {', '.join(b.text for b in space.bounds)}"
                     "; the reference stays")
    return reference
