"""Swept mount and mkfs options, tried once before the campaign.

Whether a kernel file system takes an option is the kernel's and mkfs's to say (no list
fslab could keep matches every kernel), so variants of a target that between them set
every level of its mount and mkfs option factors are made once on a scratch image in the
lab — mkfs, mount, unmount, released — before the results directory exists. A level
the file system does not know ends the campaign there in one line, naming the target and
the tool's own words (the kernel's, for a mount), instead of failing every run of that
cell later. A variant refused only as a combination (each of its levels mounts in another
variant) does not end it: a sweep or a tuner's space may hold combinations a file system
refuses, and those cells fail with the reason, as any run that fails does.
"""

from __future__ import annotations

import dataclasses

from fslab.core.cell_keys import is_option_factor
from fslab.core.errors import ToolError, UserError
from fslab.host.kernel_log import briefly
from fslab.host.lab import Lab, Session
from fslab.host.signals import signals_held, signals_unwind
from fslab.plan.levels import path_name
from fslab.targets import Target, make_target

# A target without a size of its own (a device) is tried on an image with room for any
# kernel file system's minimum (xfs: 300 MiB); one with a size on a sparse image of that
# size, since sizes decide what mkfs takes (an XFS log must fit in one allocation group:
# `-l size=128m -d agcount=16` is refused on 1 GiB, taken on 4 GiB).
PROBE_SIZE = 512 * 1024**2


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


def check_swept_options(targets: dict[str, Target], lab: Lab) -> list[str]:
    """Make and release each target variant that sweeps mount or mkfs options once, on a
    scratch image (never a device). A level the file system refuses on its own is one
    UserError; a variant refused although each of its levels is taken in another
    variant is a combination the file system refuses ("ext4 takes data=journal and
    delalloc, not together"): its cells fail with that reason, recorded as any failed run
    (a tuner drops them), and the returned notes (said once, with the campaign's
    warnings) name it."""
    variants = list(targets.values())
    tried = covering(variants)
    if not tried:
        return []
    notes: list[str] = []
    with signals_unwind():
        session = lab.open_session()
        try:
            refusals: dict[int, str | None] = {}  # by the variant (names may repeat)

            def refused(target: Target) -> str | None:
                if id(target) not in refusals:
                    refusals[id(target)] = _refusal(target, session)
                return refusals[id(target)]

            for target in tried:
                reason = refused(target)
                if reason is None:
                    continue
                for name, level in _options(target):
                    alone = _apart(variants, target, name, level)
                    why = reason if alone is None else refused(alone)
                    if why is not None:
                        spec = (alone or target).spec
                        raise UserError(f"target {spec.name}: {spec.fs} does not take "
                                        f"{name}={level} ({why})")
                levels = ", ".join(f"{name}={level}" for name, level in _options(target))
                notes.append(f"{target.spec.fs} takes each of {levels} but not together "
                             f"({briefly(reason)}): the runs of target {target.spec.name} "
                             "fail with that reason")
        finally:
            with signals_held():
                session.close()
    return notes


def _options(target: Target) -> list[tuple[str, str]]:
    return [(name, level) for name, level in target.spec.levels if is_option_factor(name)]


def _apart(variants: list[Target], target: Target, name: str, level: str) -> Target | None:
    """Another variant that sets `name=level` and shares the fewest of `target`'s other
    option levels (the level tried away from the rest of the combination), or None."""
    others = set(_options(target)) - {(name, level)}
    having = [v for v in variants if v is not target and (name, level) in v.spec.levels
              and v.spec.base == target.spec.base]
    return min(having, key=lambda v: len(others & set(v.spec.levels)), default=None)


def _refusal(target: Target, session: Session) -> str | None:
    """Why the file system refuses the variant on a scratch image (None: it mounts)."""
    spec = target.spec
    scratch = make_target(dataclasses.replace(
        spec, name=f"probe-{path_name(spec.name)}", device="", size=spec.size or PROBE_SIZE))
    try:
        mounted = scratch.provision(session)
    except ToolError as exc:
        return str(exc)
    scratch.teardown(session, mounted)
    return None
