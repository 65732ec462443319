"""Where a run's machine time goes: each step of a run timed, for run.json's `steps`.

A run's fixed cost (making its file system, laying out its files, dropping caches,
starting fio, the ramp) is what a campaign pays beside the seconds that measure; it is
kept only where it keeps the numbers honest, and that is judged on these figures. The
steps are timed where they happen (a target's mkfs, fio's layout pass, a cache drop),
into the stopwatch of the run in hand (`timing`): code below the runner names a step
without being told which run it serves, as children go into the ledger (children.py).

Each second goes to one step: a step inside another is taken out of the outer one's time
(the time a step spends in nested ones is theirs). Whatever the run's own code does
between named steps is HARNESS, so a run's steps add up to the time it had the machine.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

# The steps of a run, in the order they happen (a reader's order: run.json keeps them so).
PROVISION = "provision"  # making the target, besides mkfs and mount (image, loop device)
MKFS = "mkfs"
MOUNT = "mount"
AGE = "age"  # aging to its level of `age`, or filling its twin (run/aging_places.py)
SPACE = "space"  # waiting for a reused target's deferred frees to land
PROBE = "probe"  # the free-space probes and fstrim around a run on an aged target
LAYOUT = "layout"  # writing the job's files before it runs (fio's create_only pass)
CACHE_DROP = "cache_drop"  # sync, then drop the caches
FIO_START = "fio_start"  # a fio process's time beside its ramp and measuring: start, stop
RAMP = "ramp"  # fio running before it measures (the job's ramp_time)
MEASURE = "measure"  # the workload measuring
RECORD = "record"  # the parse stage on the run's raw output, and its record
TEARDOWN = "teardown"  # releasing the target (its provisioning run carries it)
HARNESS = "harness"  # fslab's own work for the run between those steps
ORDER = (PROVISION, MKFS, MOUNT, AGE, SPACE, PROBE, LAYOUT, CACHE_DROP, FIO_START, RAMP,
         MEASURE, RECORD, TEARDOWN, HARNESS)


@dataclass
class Stopwatch:
    """The seconds of one run's steps."""

    seconds: dict[str, float] = field(default_factory=dict)
    _nested: list[float] = field(default_factory=list)  # time spent in nested steps, per level

    @contextmanager
    def step(self, name: str) -> Iterator[None]:
        """Time the block as `name`, less what steps inside it take."""
        start = time.perf_counter()
        self._nested.append(0.0)
        try:
            yield
        finally:
            elapsed = time.perf_counter() - start
            inner = self._nested.pop()
            self.add(name, elapsed - inner)
            if self._nested:
                self._nested[-1] += elapsed

    def add(self, name: str, seconds: float) -> None:
        self.seconds[name] = self.seconds.get(name, 0.0) + max(0.0, seconds)

    def split(self, name: str, **parts: float) -> None:
        """Move seconds from step `name` to `parts` (a fio process's known ramp and
        measuring out of its whole time), never more than `name` holds."""
        for part, seconds in parts.items():
            moved = min(max(0.0, seconds), self.seconds.get(name, 0.0))
            self.seconds[name] = self.seconds.get(name, 0.0) - moved
            self.add(part, moved)

    def rounded(self) -> dict[str, float]:
        """The steps in ORDER (others after), to the millisecond, empty ones left out."""
        names = [*ORDER, *sorted(set(self.seconds) - set(ORDER))]
        return {name: round(self.seconds[name], 3) for name in names
                if round(self.seconds.get(name, 0.0), 3) > 0}


_CURRENT: ContextVar[Stopwatch | None] = ContextVar("fslab_stopwatch", default=None)


@contextmanager
def timing(watch: Stopwatch) -> Iterator[Stopwatch]:
    """Steps named inside the block go to `watch`; the rest of its time is HARNESS."""
    token = _CURRENT.set(watch)
    try:
        with watch.step(HARNESS):
            yield watch
    finally:
        _CURRENT.reset(token)


@contextmanager
def step(name: str) -> Iterator[Stopwatch | None]:
    """Time the block as step `name` of the run in hand (nothing when there is none)."""
    watch = _CURRENT.get()
    if watch is None:
        yield None
        return
    with watch.step(name):
        yield watch


def split(name: str, **parts: float) -> None:
    """Stopwatch.split on the run in hand's stopwatch (nothing when there is none)."""
    watch = _CURRENT.get()
    if watch is not None:
        watch.split(name, **parts)


def add(name: str, seconds: float) -> None:
    """Count `seconds` to step `name` of the run in hand without timing anything: the
    simulator's virtual machine time (workloads/null.py)."""
    watch = _CURRENT.get()
    if watch is not None:
        watch.add(name, seconds)
