"""Swept mount and mkfs options, tried once before the campaign.

Whether a kernel file system takes an option is the kernel's and mkfs's to say (no list
fslab could keep matches every kernel), so variants of a target that between them set
every level of its mount and mkfs option factors are made once on a scratch image in the
lab — mkfs, mount, unmount,
released — before the results directory exists. A level the file system does not know
ends the campaign there in one line, naming the target and the tool's own words, instead
of failing every run of that cell later.
"""

from __future__ import annotations

import dataclasses

from fslab.core.cells import is_option_factor
from fslab.core.errors import ToolError, UserError
from fslab.host.lab import Lab
from fslab.host.signals import signals_ignored, signals_unwind
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


def check_swept_options(targets: dict[str, Target], lab: Lab) -> None:
    """Make and release each target variant that sweeps mount or mkfs options once, on a
    scratch image (never a device); a failure is one UserError."""
    tried = covering(list(targets.values()))
    if not tried:
        return
    with signals_unwind():
        session = lab.open_session()
        try:
            for target in tried:
                spec = target.spec
                scratch = make_target(dataclasses.replace(
                    spec, name=f"probe-{path_name(spec.name)}", device="",
                    size=spec.size or PROBE_SIZE))
                try:
                    mounted = scratch.provision(session)
                except ToolError as exc:
                    levels = ", ".join(f"{name}={level}" for name, level in spec.levels
                                       if is_option_factor(name))
                    raise UserError(f"target {spec.name}: {spec.fs} does not take {levels} "
                                    f"({exc})") from None
                scratch.teardown(session, mounted)
        finally:
            with signals_ignored():
                session.close()
