"""Signals during a campaign: SIGTERM and SIGHUP unwind like Ctrl-C, so every `finally`
releases what fslab made; a second Ctrl-C during cleanup is ignored until it is done."""

from __future__ import annotations

import signal
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
def signals_ignored() -> Iterator[None]:
    """Let cleanup finish even if the user presses Ctrl-C again."""
    handled = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    previous: dict[signal.Signals, Callable[..., Any] | int | None] = {}
    for sig in handled:
        previous[sig] = signal.signal(sig, signal.SIG_IGN)
    try:
        yield
    finally:
        for handled_sig, old in previous.items():
            signal.signal(handled_sig, old)
