"""Run one function in a forked child process while the caller goes on.

The analysis is single-threaded Python and numpy; on a machine with two cores the
second idles. Work that needs nothing from the rest (the drivers' models) runs in a child
started with fork (it inherits every imported module, so it starts in milliseconds).
If the child cannot be started, or dies, the work is done in-process instead: the
result never depends on whether the background worked.
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

    def __init__(self, fn: Callable[..., T], *args: Any) -> None:
        self.fn, self.args = fn, args
        self.pool: ProcessPoolExecutor | None = None
        self.future: Future[T] | None = None
        if (multiprocessing.cpu_count() or 1) < 2:
            return  # nothing to overlap with: compute when asked
        try:
            self.pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork"))
            self.future = self.pool.submit(fn, *args)
        except (OSError, ValueError, RuntimeError, AssertionError):
            self.close()  # e.g. no fork here, or a daemonic caller may not have children

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
