"""Swept mount and mkfs options, tried once before the campaign.

Whether a kernel file system takes an option is the kernel's and mkfs's to say (no list
fslab could keep matches every kernel), so variants of a target that between them set
every level of its mount and mkfs option factors are made once on a scratch image in the
lab — mkfs, mount, unmount, released — before the results directory exists.

A variant that is refused is blamed where the blame belongs: each of its levels is tried
alone on the target as declared. A level refused alone (btrfs's `space_cache=v1` beside
its free-space tree: "cannot disable free-space-tree") is refused wherever it is: every
configuration holding it is dropped, named with that level and the kernel's words. A
variant refused although each of its levels mounts alone is a combination the file
system refuses ("this combination"; the option the kernel's words name, if one). Dropped
configurations are never made: their runs are recorded as refused with that reason (a
tuner drops them), and the campaign goes on with the rest. Only when no configuration of
a target mounts does the campaign stop, in one line.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from fslab.core.cell_keys import Level, is_option_factor, path_name
from fslab.core.errors import ToolError, UserError
from fslab.host.kernel_log import briefly
from fslab.host.lab import Lab, Session
from fslab.host.signals import signals_held, signals_unwind
from fslab.plan.target_factors import with_level
from fslab.targets import Target, TargetSpec, make_target

# A target without a size of its own (a device) is tried on an image with room for any
# kernel file system's minimum (xfs: 300 MiB); one with a size on a sparse image of that
# size, since sizes decide what mkfs takes (an XFS log must fit in one allocation group:
# `-l size=128m -d agcount=16` is refused on 1 GiB, taken on 4 GiB).
PROBE_SIZE = 512 * 1024**2


@dataclass(frozen=True)
class Refused:
    """A configuration the file system will not make: why, in one line (the level to
    blame, or the combination), and what the tool (for a mount, the kernel) said."""

    reason: str
    said: str


@dataclass(frozen=True)
class Checked:
    """What the check found: lines to say once with the campaign's warnings, and the
    variants dropped (by name), each with why."""

    notes: tuple[str, ...] = ()
    refused: dict[str, Refused] = field(default_factory=dict)


def covering(targets: list[Target]) -> list[Target]:
    """The fewest variants, found greedily, that between them set every level of every
    mount and mkfs option factor: each level is tried once, not each combination (a tuner's
    screen has 16 of them)."""
    wanted = {(t.spec.base, name, level) for t in targets for name, level in t.spec.levels
              if is_option_factor(name)}
    chosen: list[Target] = []
    while wanted:
        best = max(targets, key=lambda t: sum((t.spec.base, n, v) in wanted
                                              for n, v in t.spec.levels))
        chosen.append(best)
        wanted -= {(best.spec.base, n, v) for n, v in best.spec.levels}
    return chosen


class Prober:
    """Makes a configuration on a scratch image and releases it, each one once: None when
    it mounts, else the words of the tool that refused it."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self._found: dict[tuple[object, ...], str | None] = {}

    def refusal(self, spec: TargetSpec) -> str | None:
        key = (spec.fs, spec.size, spec.mount_options, spec.mkfs_options)
        if key not in self._found:
            self._found[key] = _refusal(spec, self.session)
        return self._found[key]


def check_swept_options(targets: dict[str, Target], lab: Lab,
                        bases: Mapping[str, TargetSpec]) -> Checked:
    """Make each variant of the covering set once on a scratch image (never a device) and
    blame each refusal (module doc); `bases` are the targets as the campaign declares
    them, by name. UserError, in one line, only when no variant of a target mounts."""
    variants = list(targets.values())
    tried = covering(variants)
    if not tried:
        return Checked()
    levels_refused: dict[tuple[str, str, str], str] = {}  # (target, factor, level) -> said
    combinations: dict[str, str] = {}  # variant -> what the tool said
    with signals_unwind():
        session = lab.open_session()
        try:
            prober = Prober(session)
            for target in tried:
                said = prober.refusal(target.spec)
                if said is None:
                    continue
                alone = refused_alone(bases.get(target.spec.base), _options(target), prober)
                for (name, level), words in alone.items():
                    levels_refused[(target.spec.base, name, level)] = words
                if not alone:
                    combinations[target.spec.name] = said
        finally:
            with signals_held():
                session.close()
    refused = {variant.spec.name: why for variant in variants
               if (why := _why(variant, levels_refused, combinations)) is not None}
    for base in dict.fromkeys(v.spec.base for v in variants):
        mine = [v for v in variants if v.spec.base == base]
        if all(v.spec.name in refused for v in mine):
            reasons = "; ".join(dict.fromkeys(refused[v.spec.name].reason for v in mine))
            raise UserError(f"target {base}: no configuration mounts: {reasons}")
    return Checked(_notes(variants, levels_refused, combinations), refused)


def refused_levels(base: TargetSpec, factors: Mapping[str, Sequence[str]], lab: Lab
                   ) -> dict[Level, str]:
    """The mount and mkfs option levels `base` refuses on their own, each with the tool's
    words (a tuner drops them from its space before it starts): the fewest variants that
    set every level are made first, and only the levels of a variant refused are each
    tried alone."""
    options = {name: list(levels) for name, levels in factors.items()
               if is_option_factor(name) and levels}
    if not options:
        return {}
    found: dict[Level, str] = {}
    with signals_unwind():
        session = lab.open_session()
        try:
            prober = Prober(session)
            for row in range(max(len(levels) for levels in options.values())):
                chosen = [(name, levels[min(row, len(levels) - 1)])
                          for name, levels in options.items()]
                variant = dataclasses.replace(base, name=f"{base.name}-{row}")
                for name, level in chosen:
                    variant = with_level(variant, name, level)
                if prober.refusal(variant) is not None:
                    found.update(refused_alone(base, chosen, prober))
        finally:
            with signals_held():
                session.close()
    return found


def refused_alone(base: TargetSpec | None, levels: list[Level], prober: Prober
                  ) -> dict[Level, str]:
    """Each of `levels` tried alone on the target as declared: those refused, with the
    tool's words (none known without the declared target)."""
    if base is None:
        return {}
    found = {}
    for name, level in levels:
        spec = with_level(dataclasses.replace(base, name=f"{base.name}-{name}"), name, level)
        words = prober.refusal(spec)
        if words is not None:
            found[(name, level)] = words
    return found


def pointed_at(said: str, levels: list[Level]) -> list[Level]:
    """The levels whose option the tool's words name ('space cache v1' names
    space_cache=v1): keys compared with '_' and '-' read as spaces."""
    def plain(text: str) -> str:
        return re.sub(r"[_\-]+", " ", text.lower())

    words = plain(said)
    named = []
    for name, level in levels:
        keys = [option.split("=")[0].strip(" -") for option in re.split(r"[,\s]+", level)]
        if any(len(key) > 2 and plain(key) in words for key in keys):
            named.append((name, level))
    return named


def _why(variant: Target, levels_refused: dict[tuple[str, str, str], str],
         combinations: dict[str, str]) -> Refused | None:
    spec = variant.spec
    for name, level in _options(variant):
        said = levels_refused.get((spec.base, name, level))
        if said is not None:
            return Refused(f"{spec.fs} refuses {name}={level} ({briefly(said)})", said)
    said = combinations.get(spec.name)
    if said is None:
        return None
    levels = _options(variant)
    named = pointed_at(said, levels)
    pointer = (f"; the kernel names {named[0][0]}={named[0][1]}" if len(named) == 1
               else "")
    shown = ", ".join(f"{name}={level}" for name, level in levels)
    return Refused(f"{spec.fs} refuses this combination, {shown} ({briefly(said)}"
                   f"{pointer})", said)


def _notes(variants: list[Target], levels_refused: dict[tuple[str, str, str], str],
           combinations: dict[str, str]) -> tuple[str, ...]:
    """One line per level refused (how many configurations it takes out) and per
    combination refused."""
    notes = []
    for (base, name, level), said in levels_refused.items():
        count = sum(1 for v in variants if v.spec.base == base
                    and (name, level) in v.spec.levels)
        fs = next(v.spec.fs for v in variants if v.spec.base == base)
        notes.append(f"{fs} refuses {name}={level} ({briefly(said)}): the {count} "
                     f"configuration{'s' * (count != 1)} of target {base} with it are "
                     "dropped, each run of them recorded as refused")
    for variant in variants:
        if variant.spec.name in combinations:
            levels = ", ".join(f"{name}={level}" for name, level in _options(variant))
            notes.append(f"{variant.spec.fs} takes each of {levels} but not together "
                         f"({briefly(combinations[variant.spec.name])}): the runs of "
                         f"target {variant.spec.name} are recorded as refused")
    return tuple(notes)


def _options(target: Target) -> list[tuple[str, str]]:
    return [(name, level) for name, level in target.spec.levels if is_option_factor(name)]


def _refusal(spec: TargetSpec, session: Session) -> str | None:
    """Why the file system refuses the configuration on a scratch image (None: it
    mounts)."""
    scratch = make_target(dataclasses.replace(
        spec, name=f"probe-{path_name(spec.name)}", device="", size=spec.size or PROBE_SIZE))
    try:
        mounted = scratch.provision(session)
    except ToolError as exc:
        return str(exc)
    scratch.teardown(session, mounted)
    return None
