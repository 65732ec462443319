"""Run one function in a forked child process while the caller goes on.

The analysis is single-threaded Python and numpy; on a machine with two cores the
second idles. Work that needs nothing from the rest (the drivers' models) runs in a child
started with fork (it inherits every imported module, so it starts in milliseconds).
If the child cannot be started, or dies, the work is done in-process instead: the
result never depends on whether the background worked.

A `Prepared` child is started before its work is known, to load what that work will
need (e.g. modules to import) while the caller is busy with something else.
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class Background(Generic[T]):
    """`Background(fn, *args).result()` equals `fn(*args)`, computed meanwhile elsewhere."""

    def __init__(self, fn: Callable[..., T], *args: Any,
                 pool: ProcessPoolExecutor | None = None) -> None:
        """`pool`: a one-process pool to use (and close when done), else a new one."""
        self.fn, self.args = fn, args
        self.pool = pool if pool is not None else _fork_pool()
        self.future: Future[T] | None = None
        if self.pool is None:
            return
        try:
            self.future = self.pool.submit(fn, *args)
        except (OSError, ValueError, RuntimeError, AssertionError, BrokenProcessPool):
            self.close()

    def result(self) -> T:
        """The function's result (its exception, if it raised one)."""
        try:
            if self.future is not None:
                return self.future.result()
        except BrokenProcessPool:
            pass  # the child died (killed, out of memory): do the work here
        finally:
            self.close()
        return self.fn(*self.args)

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
            self.pool = None


def _fork_pool() -> ProcessPoolExecutor | None:
    """A pool of one forked child, or None where there is nothing to gain or no child."""
    if (multiprocessing.cpu_count() or 1) < 2:
        return None  # nothing to overlap with: compute when asked
    try:
        return ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork"))
    except (OSError, ValueError, RuntimeError, AssertionError):
        return None  # e.g. no fork here, or a daemonic caller may not have children


class Prepared:
    """A child started now, loading what later work needs (`preload` runs in it at once);
    `start(fn, *args)` then runs that work there as a `Background`."""

    def __init__(self, preload: Callable[[], object]) -> None:
        self.pool = _fork_pool()
        if self.pool is not None:
            try:
                self.pool.submit(preload)  # its failure shows, if at all, in the work itself
            except (OSError, ValueError, RuntimeError, AssertionError, BrokenProcessPool):
                self.close()

    def start(self, fn: Callable[..., T], *args: Any) -> Background[T]:
        """Run `fn(*args)` in the prepared child (or a new one, or here: see Background)."""
        pool, self.pool = self.pool, None  # the Background owns and closes it
        return Background(fn, *args, pool=pool)

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
            self.pool = None

    def __enter__(self) -> Prepared:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()
