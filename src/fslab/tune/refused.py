"""Levels the file system refuses on their own, dropped from a tune's space before it
starts (run/option_check.py finds them: btrfs's `space_cache=v1` beside a free-space
tree). Measuring them would cost a screen's rows that can never mount and leave the
screen's model a level without data; dropped, the tune goes on with the rest, and says
which level went and the kernel's words. A factor left with its reference alone is no
factor any more: that level stays set on the target, as the user runs it today."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from fslab.core.errors import UserError
from fslab.host.kernel_log import briefly
from fslab.plan.target_factors import takes_target_factor, with_level
from fslab.run.option_check import refused_levels
from fslab.tune.space import Space

if TYPE_CHECKING:
    from fslab.host.lab import Lab
    from fslab.plan.schema import Campaign
    from fslab.plan.sweep import Factor


def without_refused(space: Space, campaign: Campaign, lab: Lab) -> tuple[Space, Campaign]:
    """The space without the levels a target of `campaign` refuses on their own, and the
    campaign with the reference of a factor left with one level set on its targets; the
    reference refused, or nothing left to tune, is one UserError."""
    found: dict[tuple[str, str], tuple[str, str]] = {}  # level -> (file system, words)
    for spec in campaign.targets:
        factors = {f.name: f.levels for f in space.target_factors()
                   if takes_target_factor(f.name, spec)}
        for refused, said in refused_levels(spec, factors, lab).items():
            found.setdefault(refused, (spec.fs, said))
    if not found:
        return space, campaign
    kept: list[Factor] = []
    folded: list[tuple[str, str]] = []  # a factor left with its reference alone
    notes: list[str] = []
    for factor in space.factors:
        gone = [level for level in factor.levels if (factor.name, level) in found]
        if factor.reference in gone:
            fs, said = found[(factor.name, factor.reference)]
            raise UserError(f"{fs} refuses {factor.name}={factor.reference}, the reference "
                            f"({briefly(said)}): the first level of each factor is what you "
                            "run today; give one the file system takes")
        left = tuple(level for level in factor.levels if level not in gone)
        for level in gone:
            fs, said = found[(factor.name, level)]
            stays = f"; {factor.name} stays at {left[0]}" if len(left) == 1 else ""
            notes.append(f"{fs} refuses {factor.name}={level} ({briefly(said)}): dropped "
                         f"from the tune{stays}")
        if len(left) > 1:
            kept.append(dataclasses.replace(factor, levels=left))
        else:
            folded.append((factor.name, left[0]))
    if not kept:
        raise UserError("nothing left to tune: " + "; ".join(notes))
    targets = []
    for spec in campaign.targets:
        for name, reference in folded:
            if takes_target_factor(name, spec):
                spec = with_level(spec, name, reference)
        targets.append(spec)
    return (dataclasses.replace(space, factors=tuple(kept), notes=[*space.notes, *notes]),
            dataclasses.replace(campaign, targets=targets))
