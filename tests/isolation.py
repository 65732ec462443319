"""Each test leaves the process as it found it: a test that changes a signal handler, the
working directory, the environment or the import path and does not put it back makes the
tests after it on the same worker depend on the order they were dealt in, which xdist's
stealing and `make check-orders` change from run to run. A pytest plugin
(tests/conftest.py loads it): the test that leaves something changed fails, at its
teardown, naming what it changed. (What the process started with is not a test's doing:
a background job starts with SIGINT ignored, and tests/host/test_signals.py sets the
handler it tests.)
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterator

import pytest

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
PYTEST_OWN = "PYTEST_CURRENT_TEST"  # pytest sets it for each phase of each test


def process_state() -> dict[str, object]:
    """What one test may change for the ones after it, in this process."""
    return {"signal handlers": {sig.name: signal.getsignal(sig) for sig in SIGNALS},
            "working directory": os.getcwd(),
            "environment": {k: v for k, v in os.environ.items() if k != PYTEST_OWN},
            "import path": list(sys.path)}


def changed(before: dict[str, object], after: dict[str, object]) -> list[str]:
    """What differs, in words (environment variables by name)."""
    found = []
    for what, old in before.items():
        new = after[what]
        if old == new:
            continue
        if isinstance(old, dict) and isinstance(new, dict):
            keys = sorted(k for k in old.keys() | new.keys() if old.get(k) != new.get(k))
            said = [f"{k}: {old.get(k)!r} -> {new.get(k)!r}" if what == "signal handlers"
                    else k for k in keys]  # an environment's values may be long
            found.append(f"{what} ({', '.join(said)})")
        else:
            found.append(what)
    return found


@pytest.fixture(autouse=True)
def leaves_the_process_as_it_found_it() -> Iterator[None]:
    """Set up before every other fixture, so torn down after them (monkeypatch's undoing
    included): what is still changed then, the test changed."""
    before = process_state()
    yield
    left = changed(before, process_state())
    assert not left, f"the test left the process changed: {'; '.join(left)}"
