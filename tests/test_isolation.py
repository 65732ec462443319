"""A test that leaves the process changed is named (tests/isolation.py), so the tests
after it cannot come to depend on the order they were dealt in."""

from __future__ import annotations

import os
import signal

from tests import isolation


def test_a_handler_left_ignored_and_a_variable_left_set_are_named(monkeypatch):
    # from the default: a suite started as a background job has SIGINT ignored already
    previous = signal.signal(signal.SIGINT, signal.SIG_DFL)
    try:
        before = isolation.process_state()
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        monkeypatch.setenv("FSLAB_LEFT_BEHIND", "1")
        after = isolation.process_state()
    finally:
        signal.signal(signal.SIGINT, previous)
    found = isolation.changed(before, after)
    assert len(found) == 2 and found[0].startswith("signal handlers (SIGINT: ")
    assert found[0].endswith("-> <Handlers.SIG_IGN: 1>)")
    assert found[1] == "environment (FSLAB_LEFT_BEHIND)"


def test_what_pytest_sets_for_each_test_is_not_a_change():
    before = isolation.process_state()
    os.environ[isolation.PYTEST_OWN] = "another phase"  # pytest's own, set again by it
    assert isolation.changed(before, isolation.process_state()) == []
