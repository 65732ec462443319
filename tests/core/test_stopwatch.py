"""A run's steps: each second goes to one step, nested steps taken out of their outer one,
and a fio process's known ramp and measuring moved out of its whole time."""

import time

import pytest

from fslab.core import stopwatch
from fslab.core.stopwatch import HARNESS, Stopwatch, step, timing


def test_a_nested_step_is_taken_out_of_the_outer_one_and_the_rest_is_the_harness():
    watch = Stopwatch()
    with timing(watch):
        time.sleep(0.02)
        with step("provision"):
            time.sleep(0.03)
            with step("mkfs"):
                time.sleep(0.05)
    seconds = watch.seconds
    assert 0.05 <= seconds["mkfs"] < 0.08
    assert 0.03 <= seconds["provision"] < 0.05  # without mkfs's 0.05
    assert 0.02 <= seconds[HARNESS] < 0.04
    assert abs(sum(seconds.values()) - 0.10) < 0.03  # every second counted once


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
