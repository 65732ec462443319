"""The confirmation: an ablation on fresh data (Fawcett & Hoos 2016 walk from the default
to the tuned configuration and credit each change; here every change is taken back on its
own). The reference, the challenger, and the challenger with each changed option put back
to its reference level — c + 2 configurations for c changed options — measured together in
fresh interleaved rounds the challenger was not chosen on.

One block model of those configurations and rounds (analysis.pairs.selection.block_answers:
pooled residual, rounds as blocks) answers c + 1 questions as one Bonferroni family, each
by the one rule (95 % together): each option's contribution (the challenger against the
challenger without it) and the bundle (the challenger against the reference). An option
earns **change** when its contribution's interval says it helps (excludes 1 on the better
side); otherwise **keep**: the reference level stays. The recommendation is the reference
with the options that earned change. Under --subject-to it must also be shown to keep
every bound on these rounds (its own one-sided 95 % bound, Bonferroni over the bounds), or
the reference stays.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from fslab.analysis.cells.stats import log_ci
from fslab.analysis.pairs.model import ALPHA
from fslab.analysis.pairs.pair import FASTER, Pair
from fslab.analysis.pairs.selection import block_answers
from fslab.core.cell_keys import level_label
from fslab.tune.measure import CONFIRM, Measure, StageData
from fslab.tune.space import Bound, Config, Space

CHANGE, KEEP = "change", "keep"
LEAST_ROUNDS = 3  # a block model of c + 2 configurations has residual df from here
# Narrower than this, a contribution's interval says more than the next sitting will
# keep: the spread of a ratio between sittings on one machine (the prior of
# analysis/sittings/repeat.py, ±5 %; docs/statistics.md).
SITTING_SPREAD = 0.05
SITTING_NOTE = ("the confirmation stopped at {rounds} rounds: past them its intervals "
                "(±{width:.1f} %) would be narrower than a machine's usual spread between "
                "sittings (±{spread:.0f} %), and more rounds in this sitting buy nothing "
                "that holds next time; confirm in another sitting: fslab tune --again DIR")


@dataclass(frozen=True)
class Contribution:
    """One changed option: the challenger against the challenger without it."""

    factor: int
    level: int  # the challenger's level of the factor
    answer: Pair
    verdict: str  # CHANGE or KEEP
    alternatives: tuple[int, ...] = ()  # other levels the race could not tell from it


@dataclass
class Confirmation:
    """What the confirmation measured and found. The recommendation is the reference with
    the options that earned change — fewer where a bound would not be kept with all."""

    reference: Config
    challenger: Config
    configs: list[Config]
    rounds: int
    measured: StageData | None
    bundle: Pair | None  # challenger / reference
    contributions: list[Contribution]
    recommended: Config
    recommended_answer: Pair | None  # recommended / reference, where measured
    notes: list[str] = field(default_factory=list)

    def verdict(self, factor: int) -> str:
        """CHANGE when the recommendation sets the factor away from its reference."""
        return CHANGE if self.recommended[factor] else KEEP


def ablation(space: Space, challenger: Config) -> list[Config]:
    """The reference, the challenger, and the challenger with each changed option put back
    (one of them the reference itself when only one option changed)."""
    reference = space.reference
    out = [reference, challenger]
    for i, level in enumerate(challenger):
        if level:
            back = tuple(0 if j == i else v for j, v in enumerate(challenger))
            if back not in out:
                out.append(back)
    return out


def confirm(measure: Measure, space: Space, challenger: Config, members: list[Config],
            rounds: int, margin: float, alpha: float = ALPHA) -> Confirmation:
    """Measure the ablation of `challenger` in `rounds` fresh rounds and credit each
    change (module doc); `members`: the race's set, whose other levels of a changed factor
    are named as alternatives."""
    reference = space.reference
    if challenger == reference:
        return Confirmation(reference, reference, [], 0, None, None, [], reference, None,
                            ["nothing but the reference to confirm"])
    configs = ablation(space, challenger)
    measured = measure(CONFIRM, range(1, max(LEAST_ROUNDS, rounds) + 1), configs)
    better = measured.question.better
    changed = [i for i, level in enumerate(challenger) if level]
    backs = {i: tuple(0 if j == i else v for j, v in enumerate(challenger)) for i in changed}
    asked = [(challenger, reference), *((challenger, backs[i]) for i in changed
                                        if backs[i] != reference)]
    answers = block_answers(measured.values, asked, better, margin, alpha)
    bundle = answers[(challenger, reference)]
    contributions = []
    for i in changed:
        answer = answers.get((challenger, backs[i]), bundle)
        contributions.append(Contribution(
            i, challenger[i], answer, CHANGE if answer.decision == FASTER else KEEP,
            alternatives(space, challenger, i, members)))
    recommended = tuple(challenger[i] if any(c.factor == i and c.verdict == CHANGE
                                             for c in contributions) else 0
                        for i in range(len(challenger)))
    notes: list[str] = []
    breaks = keeps_bounds(measured, space.bounds, recommended, alpha)
    if recommended != reference and breaks:
        fallback = within_bounds(measured, space, configs, recommended, alpha)
        notes.append(f"{space.describe(recommended)} is not recommended: {breaks}; "
                     + (f"{space.describe(fallback)} keeps it" if fallback != reference
                        else "the reference stays"))
        recommended = fallback
    found = block_answers(measured.values, [(recommended, reference)], better, margin,
                          alpha) if recommended in configs and recommended != reference \
        else {}
    if recommended not in configs:
        notes.append(f"{space.describe(recommended)} was not measured as a whole: the "
                     "bundle's line is the challenger's, each option's its own")
    return Confirmation(reference, challenger, configs, max(LEAST_ROUNDS, rounds), measured,
                        bundle, contributions, recommended,
                        found.get((recommended, reference)), notes)


def sitting_rounds(values: dict[Config, dict[int, float]], questions: int,
                   alpha: float = ALPHA) -> tuple[int, float]:
    """(rounds, the half-width they give, in %): the fewest rounds at which a contribution's
    interval (two configurations' difference in the block model of the race's rounds, at
    α over `questions`) is as narrow as SITTING_SPREAD; a large number when the race's
    rounds cannot tell (no residual)."""
    from scipy.special import ndtri

    from fslab.analysis.pairs.selection import block_fit

    fit = block_fit(values)
    if fit is None or not fit.sigma > 0:
        return 10 ** 6, math.nan
    z = float(ndtri(1 - alpha / (2 * max(1, questions))))
    rounds = max(LEAST_ROUNDS, math.ceil(2 * (z * fit.sigma / SITTING_SPREAD) ** 2))
    return rounds, 100 * math.expm1(z * fit.sigma * math.sqrt(2 / rounds))


def within_bounds(measured: StageData, space: Space, configs: list[Config],
                  recommended: Config, alpha: float) -> Config:
    """The best measured configuration with only options of `recommended` that is shown
    faster than the reference and shown to keep every bound (the reference when none)."""
    from fslab.analysis.pairs.decisions import sign
    from fslab.analysis.pairs.selection import block_answers

    reference = space.reference
    subsets = [c for c in configs if c not in (reference, recommended) and all(
        v in (0, recommended[i]) for i, v in enumerate(c))]
    if not subsets:
        return reference
    better = measured.question.better
    found = block_answers(measured.values, [(c, reference) for c in subsets], better, 0.0,
                          alpha)
    kept = [c for c in subsets if found[(c, reference)].decision == FASTER
            and not keeps_bounds(measured, space.bounds, c, alpha)]
    if not kept:
        return reference
    return max(kept, key=lambda c: sign(better) * math.log(found[(c, reference)].ratio))


def alternatives(space: Space, challenger: Config, factor: int,
                 members: list[Config]) -> tuple[int, ...]:
    """Other non-reference levels of `factor` with which the challenger is in the race's
    set: as good as far as the race could tell."""
    return tuple(level for level in range(1, len(space.factors[factor].levels))
                 if level != challenger[factor] and tuple(
                     level if j == factor else v for j, v in enumerate(challenger)) in members)


def keeps_bounds(measured: StageData, bounds: tuple[Bound, ...], config: Config,
                 alpha: float) -> str:
    """'' when `config` is shown to keep every bound on these rounds (its own one-sided
    bound at α over the bounds lies inside it), else why not."""
    for bound in bounds:
        values = list(measured.bounded.get(bound.metric, {}).get(config, {}).values())
        interval = log_ci(values, 1 - 2 * alpha / len(bounds))
        if interval.n < 2:
            return f"{bound.text} could not be checked (no values of it)"
        edge = interval.ci_high if bound.at_most else interval.ci_low
        inside = edge <= bound.value if bound.at_most else edge >= bound.value
        if not inside:
            return (f"not shown to keep {bound.text} on fresh data (CI "
                    f"{interval.ci_low:.4g}–{interval.ci_high:.4g})")
    return ""


def option_line(space: Space, contribution: Contribution, verdict: str) -> str:
    """'commit=60: +12 % (1.05–1.19×), change', 'atime: noatime +9 % (1.03–1.16×), change;
    lazytime as good (not separated)', '-I 128: no effect (0.97–1.04×), keep -I 256'."""
    factor = space.factors[contribution.factor]
    level = level_label(factor.name, factor.levels[contribution.level])
    answer = contribution.answer
    low, high = answer.ratio_ci_low, answer.ratio_ci_high
    interval = f"{low:.3g}–{high:.3g}×" if low == low else "no interval"
    size = (f"{(answer.ratio - 1) * 100:+.0f} %" if answer.ratio == answer.ratio
            else "not measured")
    if verdict == CHANGE:
        line = f"{factor.name}: {level} {size} ({interval}), change"
        alternatives = [level_label(factor.name, factor.levels[i])
                        for i in contribution.alternatives]
        if alternatives:
            line += f"; {', '.join(alternatives)} as good (not separated)"
        return line
    if contribution.verdict == CHANGE:
        effect = "helps, but not within the bounds"
    elif math.isnan(low) or low <= 1 <= high:
        effect = "no effect shown"
    else:
        effect = "it hurts"
    return (f"{factor.name}: {level} {effect} ({size}, {interval}), keep "
            f"{level_label(factor.name, factor.reference)}")
