"""Signals during a campaign: SIGTERM and SIGHUP unwind like Ctrl-C, so every `finally`
releases what fslab made; a Ctrl-C during cleanup is held until the cleanup is done."""

from __future__ import annotations

import os
import signal
import sys
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any


class Interrupted(KeyboardInterrupt):
    """SIGTERM or SIGHUP arrived: unwind like Ctrl-C so every cleanup runs."""


@contextmanager
def signals_unwind() -> Iterator[None]:
    """Turn SIGTERM and SIGHUP into an exception, so `finally` blocks release resources."""

    def handler(signum: int, frame: FrameType | None) -> None:
        raise Interrupted(signal.Signals(signum).name)

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


@contextmanager
def signals_held() -> Iterator[None]:
    """Let cleanup finish whatever the user presses, then act on the first signal that
    came meanwhile as it would have acted (Ctrl-C: KeyboardInterrupt; SIGTERM under
    signals_unwind: Interrupted). Held, not ignored: a Ctrl-C that lands in the cleanup
    after a campaign's last run still stops what follows (the analysis) with exit 130,
    instead of being lost. A signal while the cleanup runs because of an earlier one
    adds nothing: the unwinding goes on."""
    handled = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    arrived: list[int] = []

    def hold(signum: int, frame: FrameType | None) -> None:
        arrived.append(signum)

    previous = {sig: signal.signal(sig, hold) for sig in handled}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
    if arrived:
        _act(arrived[0], previous[signal.Signals(arrived[0])])


def _act(signum: int, handler: Callable[..., Any] | int | None) -> None:
    """What `handler` (the one in place before the hold) does with `signum`."""
    if callable(handler):
        handler(signum, None)
    elif handler == signal.SIG_DFL:
        if signum == signal.SIGINT:
            raise KeyboardInterrupt
        os.kill(os.getpid(), signum)


def drop_unwound_frames() -> None:
    """Clear the locals of the frames an exception being handled has left (their
    iterators, open directories and files are then closed); no exception, nothing."""
    unwinding = sys.exc_info()[1]
    if unwinding is not None:
        traceback.clear_frames(unwinding.__traceback__)
