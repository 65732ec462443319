"""A run's steps: each second goes to one step, nested steps taken out of their outer one,
and a fio process's known ramp and measuring moved out of its whole time."""

import time

import pytest

from fslab.core import stopwatch
from fslab.core.stopwatch import HARNESS, Stopwatch, step, timing


class Clock:
    """A clock the test moves by hand: the steps' arithmetic checked exactly, whatever
    the machine is doing (sleeps on a busy host overran the bounds)."""

    def __init__(self) -> None:
        self.now = 100.0

    def perf_counter(self) -> float:
        return self.now


def test_a_nested_step_is_taken_out_of_the_outer_one_and_the_rest_is_the_harness(monkeypatch):
    clock = Clock()
    monkeypatch.setattr(stopwatch, "time", clock)
    watch = Stopwatch()
    with timing(watch):
        clock.now += 0.02
        with step("provision"):
            clock.now += 0.03
            with step("mkfs"):
                clock.now += 0.05
        clock.now += 0.01
    seconds = watch.seconds
    assert seconds["mkfs"] == pytest.approx(0.05)
    assert seconds["provision"] == pytest.approx(0.03)  # without mkfs's 0.05
    assert seconds[HARNESS] == pytest.approx(0.03)
    assert sum(seconds.values()) == pytest.approx(0.11)  # every second counted once


def test_the_real_clock_counts_every_second_once():
    watch = Stopwatch()
    with timing(watch), step("provision"):
        time.sleep(0.01)
    assert sum(watch.seconds.values()) >= 0.01
    assert watch.seconds["provision"] >= 0.01


def test_split_moves_no_more_than_the_step_holds_and_steps_outside_a_run_go_nowhere():
    watch = Stopwatch({"fio_start": 1.2})
    watch.split("fio_start", ramp=0.3, measure=2.0)  # fio ended early: measure gets the rest
    assert watch.seconds == pytest.approx({"fio_start": 0.0, "ramp": 0.3, "measure": 0.9})
    assert list(watch.rounded()) == ["ramp", "measure"]  # empty steps left out, in ORDER
    with step("mkfs") as found:  # no run in hand: timed nowhere, and no error
        assert found is None
    stopwatch.split("fio_start", measure=1.0)


def test_steps_are_kept_in_the_order_they_happen():
    watch = Stopwatch({"teardown": 1.0, "zzz": 2.0, "mkfs": 0.5, "measure": 3.0})
    assert list(watch.rounded()) == ["mkfs", "measure", "teardown", "zzz"]
