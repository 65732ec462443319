"""The check tier keeps to its budget, and the record of what each test takes is whole:
a test that makes the edit-test loop slower is seen in the commit that adds it.

The record is `tests/durations.txt` (tests/durations.py writes it: `make durations`, the
check tier in one process, CPU seconds of each test's setup, call and teardown).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import durations

# The check tier's summed CPU seconds in the record (setup, call and teardown of every
# test, in one process). 45 s on the machine the record was made on (2 vCPUs): with two
# workers about 25 s of make check, beside ruff, mypy and collecting. Held in units of
# the record's calibration (tests/durations.calibrate): 45 s at the speed of the morning
# the budget was set (2026-12-06: the tier 35.6 s of CPU then; recorded again at 11:40
# with the calibration beside it, the same tests and four new ones of 0.3 s took 48.2 s
# and the calibration 0.1963 s, so that morning's unit was 0.1963 × 35.6 / 48.2 =
# 0.145 s). A record without a calibration is held to BUDGET_S as it stands.
BUDGET_S = 45.0
BUDGET_UNITS = BUDGET_S / 0.145
REGENERATE = "run `make durations` and commit tests/durations.txt"


def recording(config: pytest.Config) -> bool:
    return bool(config.getoption("--record-durations"))


def check_tier(session: pytest.Session) -> dict[str, pytest.Item]:
    return {item.nodeid: item for item in session.items if item.get_closest_marker("check")}


def test_the_check_tier_stays_within_its_budget(request: pytest.FixtureRequest) -> None:
    if recording(request.config):
        pytest.skip("the record is being made")
    rows = [row for row in durations.read() if row.tier == "check"]
    assert rows, f"no record of the check tier: {REGENERATE}"
    total = sum(row.cpu_s for row in rows)
    slowest = sorted(rows, key=lambda row: -row.cpu_s)[:5]
    unit = durations.calibrations().get("check")
    budget = BUDGET_UNITS * unit if unit else BUDGET_S  # this recording's speed
    assert total <= budget, (
        f"the check tier takes {total:.1f} s of CPU, over its budget of {budget:.1f} s "
        f"({BUDGET_S:.0f} s at the speed the budget was set; the record's calibration "
        f"{unit} s): "
        "make a test smaller, share its campaigns (a module fixture), or move a long "
        "simulation to the machine tier (tests/conftest.py SIMULATIONS). Slowest: "
        + ", ".join(f"{row.test} {row.cpu_s:.2f} s" for row in slowest))


def test_every_check_tier_test_is_in_the_record(request: pytest.FixtureRequest) -> None:
    if recording(request.config):
        pytest.skip("the record is being made")
    recorded = {row.test for row in durations.read() if row.tier == "check"}
    missing = sorted(set(check_tier(request.session)) - recorded)
    assert not missing, (f"{len(missing)} check-tier test(s) not in the record, e.g. "
                         f"{missing[:3]}: {REGENERATE}")


def test_the_record_names_no_test_that_is_gone(request: pytest.FixtureRequest) -> None:
    """Judged for the files this session collected whole (no -k, no node ids)."""
    config = request.config
    if recording(config) or config.getoption("keyword") or any("::" in a for a in config.args):
        pytest.skip("judged only where whole files were collected")
    here = check_tier(request.session)
    files = {test.partition("::")[0] for test in here}
    gone = sorted(row.test for row in durations.read() if row.tier == "check"
                  and (row.test.partition("::")[0] in files or not
                       (Path(config.rootpath) / row.test.partition("::")[0]).exists())
                  and row.test not in here)
    assert not gone, f"the record names {len(gone)} test(s) that are gone, e.g. {gone[:3]}: " \
                     f"{REGENERATE}"


def test_the_record_is_written_sorted_and_rounded_and_keeps_other_tiers(tmp_path) -> None:
    path = tmp_path / "durations.txt"
    machine = durations.Duration("machine", "tests/b.py::test_slow", 1.0, 30.0)
    durations.write(path, [machine], {"machine"}, "a machine")
    rows = [durations.Duration("check", "tests/b.py::test_b", 0.123, 0.5),
            durations.Duration("check", "tests/a.py::test_a", 2.0, 2.5)]
    durations.write(path, rows, {"check"}, "a machine")
    text = path.read_text()
    assert "totals: check 2.1 s CPU (2 tests), machine 1.0 s CPU (1 tests)" in text
    found = durations.read(path)
    assert [row.test for row in found] == ["tests/a.py::test_a", "tests/b.py::test_b",
                                           "tests/b.py::test_slow"]
    assert found[1].cpu_s == 0.12  # as written: hundredths


def test_the_tier_tables_name_tests_that_exist(request: pytest.FixtureRequest) -> None:
    """A renamed test would leave its entry behind and quietly change tier: each name in
    tests/conftest.py's tables is a test of the suite (judged when the whole suite is
    collected)."""
    from tests import conftest

    config = request.config
    if config.args_source != pytest.Config.ArgsSource.TESTPATHS or config.getoption("keyword"):
        pytest.skip("judged only where the whole suite was collected")
    collected = config.stash[conftest.COLLECTED]
    tables = [*conftest.SIMULATIONS, *conftest.MACHINE_TESTS, *conftest.LONG, *conftest.QUIET]
    assert not [name for name in tables if name not in collected]


def test_each_tier_keeps_the_calibration_of_the_session_that_recorded_it(tmp_path):
    record = tmp_path / "durations.txt"
    check = [durations.Duration("check", "tests/a.py::t", 1.0, 1.0)]
    simulation = [durations.Duration("simulation", "tests/b.py::t", 2.0, 2.0)]
    durations.write(record, check, {"check"}, "one", unit=0.2)
    durations.write(record, simulation, {"simulation"}, "two", unit=0.3)
    assert durations.calibrations(record) == {"check": 0.2, "simulation": 0.3}
    assert [row.test for row in durations.read(record)] == ["tests/a.py::t", "tests/b.py::t"]
