"""Equal fullness: an aging that finishes full (`finish_full`, the age levels' setting)
ends at its utilisation of the space root can write, on every file system alike.

A mix of creates, appends, truncates and deletes hovers between its low-water mark and
its utilisation and stops anywhere between: ext4 and xfs aged with the same operations
ended 10 points apart here (issue 59). After its stop the engine fills the file system
up to the utilisation with new data in the level's sizes: a new file at the free index
nearest a seeded draw or, every index in use, appended to the existing file nearest it;
the last piece cut to what is missing, aimed inside the band so that the deletion rule
is not set off. The fill is read once deferred frees have landed (host/space.
settled_space: xfs keeps speculative preallocation past the end of files appended to
again and again, and gives it back when their inodes are evicted, in the background). The
filling is counted apart (`topped_up`), not in the op log: the latency during aging is
the mix's. A refusal for space (ENOSPC) is the file system's answer: counted, and the
filling stops short — the level then says it was not reached (aging/per_place.reached);
any other failure is counted and the filling goes on with the next piece.
"""

from __future__ import annotations

import dataclasses
import errno
from pathlib import Path
from typing import Protocol

from fslab.aging.config import AgingConfig
from fslab.aging.fileset import FileSet
from fslab.aging.generator import OpGenerator
from fslab.aging.log import AgingLog
from fslab.host import system
from fslab.host.space import RootSpace, settled_space

FINISH_WITHIN = 0.002  # an aging that finishes full ends within this of its utilisation
BATCH = 64  # pieces written between two readings of the fill
FULL = (errno.ENOSPC, errno.EDQUOT)  # refusals that end the filling (any other: the next)


class Writer(Protocol):
    """What the filling uses of the engine (aging/engine.py)."""

    config: AgingConfig
    root: Path
    log: AgingLog
    files: FileSet
    root_capacity: int | None

    def space(self) -> RootSpace | None: ...

    def add_file(self, index: int, size: int) -> None: ...

    def grow_file(self, index: int, size: int) -> None: ...


def finish_full(engine: Writer) -> None:
    """Fill the engine's file system up to its utilisation (module doc)."""
    config, log = engine.config, engine.log
    target = float(config.utilization or 0.0)
    draws = OpGenerator(dataclasses.replace(config, seed=config.seed + 2))
    files = written = 0
    settled = False
    while True:
        system.sync_file_system(engine.root)
        space = engine.space()
        if space is not None and space.fill >= target - FINISH_WITHIN and not settled:
            space, settled = settled_space(engine.root, engine.root_capacity), True
        if space is None or space.fill >= target - FINISH_WITHIN:
            break
        settled = False
        missing = int((target - FINISH_WITHIN / 2 - space.fill) * space.capacity)
        batch = draws.next_batch(BATCH)
        before = written
        for drawn, size in zip(batch.files, batch.sizes, strict=True):
            if missing <= 0:
                break
            size = max(1, min(size, missing))
            free = engine.files.free_near(drawn)
            index = free if free is not None else engine.files.near(drawn)
            if index is None:
                log.topped_up = (files, written)
                return
            try:
                if free is not None:
                    engine.add_file(index, size)
                else:
                    engine.grow_file(index, size)
            except OSError as exc:
                what = "create" if free is not None else "append"
                log.failures[(what, errno.errorcode.get(exc.errno or 0, "?"))] += 1
                if exc.errno in FULL:  # the file system's answer: as full as it gets
                    log.topped_up = (files, written)
                    return
                continue
            files, written, missing = files + (free is not None), written + size, \
                missing - size
        if written == before:  # a whole batch refused: no point drawing more
            break
    log.topped_up = (files, written)
