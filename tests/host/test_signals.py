"""A signal during cleanup is held, not lost: the cleanup finishes, then the signal acts
as it would have (the CI once saw a Ctrl-C land in a campaign's last cleanup and the
campaign end with exit 0)."""

import os
import signal

import pytest

from fslab.host.signals import Interrupted, signals_held, signals_unwind


@pytest.fixture(autouse=True)
def ctrl_c_as_python_sets_it():
    """Ctrl-C as Python sets it in a process started in the foreground, however this one
    was started: a shell that runs a job in the background (and a CI runner that does)
    starts it with SIGINT ignored, and Python then keeps it ignored."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)


@pytest.mark.parametrize("sig, raised", [(signal.SIGINT, KeyboardInterrupt),
                                         (signal.SIGTERM, Interrupted),
                                         (signal.SIGHUP, Interrupted)])
def test_a_signal_during_cleanup_acts_once_the_cleanup_is_done(sig, raised):
    steps = []
    with signals_unwind(), pytest.raises(raised):
        with signals_held():
            os.kill(os.getpid(), sig)
            steps.append("after the signal")  # the cleanup goes on
            os.kill(os.getpid(), sig)  # a second one adds nothing
            steps.append("done")
        steps.append("never")
    assert steps == ["after the signal", "done"]


def test_nothing_held_nothing_raised():
    with signals_unwind(), signals_held():
        pass
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_signal_held_inside_an_unwinding_replaces_nothing_but_its_kind():
    """Cleanup after a first Ctrl-C: a second Ctrl-C in it still ends as an interrupt."""
    with pytest.raises(KeyboardInterrupt):
        try:
            raise KeyboardInterrupt
        finally:
            with signals_held():
                os.kill(os.getpid(), signal.SIGINT)
