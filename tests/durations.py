"""The tests' durations record: what each test took, kept in the repository
(`tests/durations.txt`), so that the check tier's growth is seen in the commit that adds
it (`tests/test_durations.py` holds the tier to its budget), not after the fact.

The machine's speed moves by a fifth within an hour here (the same check tier recorded
35.6 s, 43.5 s and 50.7 s of CPU on 2026-12-06, every row grown alike), so the record also
keeps a calibration: the CPU seconds of one fixed computation (`calibrate`), measured
before and after the tests in the same process; the budget is held in those units.

A pytest plugin (tests/conftest.py loads it). Asked with `--record-durations=FILE`
(`make durations`), it measures every test's setup, call and teardown in the process that
runs it: CPU seconds (every thread of the process and the children it waited for: what
the neighbours on a busy machine change least) and wall seconds; and when the session
ends it rewrites FILE's rows of each tier the session ran, sorted and rounded, so the
record diffs line by line. A session that ran a part of a tier (-k, node ids) is refused: its
rows would replace a whole tier's.
"""

from __future__ import annotations

import os
import platform
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest

RECORD = Path(__file__).with_name("durations.txt")
# the markers tests/conftest.py sets: a test's tier is the last of them it has
TIERS = ("check", "machine", "simulation", "quiet")
DIGITS = 2  # hundredths of a second: finer is noise between two recordings
_CPU = "cpu_s"


@dataclass(frozen=True)
class Duration:
    """One test's row of the record: its tier, its node id and its seconds."""

    tier: str
    test: str
    cpu_s: float
    wall_s: float

    def line(self) -> str:
        return f"{self.tier:8s} {self.cpu_s:7.{DIGITS}f} {self.wall_s:7.{DIGITS}f}  {self.test}"


HEADER = "# tier  cpu_s  wall_s  test"


CALIBRATION = re.compile(r"^# calibration of (\w+): ([0-9.]+) s of CPU")


def calibrate() -> float:
    """CPU seconds of a fixed computation, the best of five: the record's unit of the
    machine's speed (Python's own work, as most of a check-tier test is)."""
    best = float("inf")
    for _ in range(5):
        start = time.process_time()
        total = 0
        for i in range(2_400_000):
            total += (i * i) % 7
        sorted(str(i) for i in range(400_000))
        best = min(best, time.process_time() - start)
    return best


def calibrations(path: Path = RECORD) -> dict[str, float]:
    """Each tier's calibration, measured in the session that recorded it."""
    if not path.exists():
        return {}
    return {found.group(1): float(found.group(2)) for line in path.read_text().splitlines()
            if (found := CALIBRATION.match(line))}


def read(path: Path = RECORD) -> list[Duration]:
    """The record's rows (none when there is no record yet)."""
    if not path.exists():
        return []
    rows = []
    for line in path.read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        tier, cpu_s, wall_s, test = line.split(None, 3)
        rows.append(Duration(tier, test, float(cpu_s), float(wall_s)))
    return rows


def tier_of(keywords: object) -> str:
    """A test's tier from its markers (a report's keywords)."""
    marks = set(keywords)  # type: ignore[call-overload]
    return next((tier for tier in reversed(TIERS) if tier in marks), "check")


def write(path: Path, rows: list[Duration], tiers: set[str], note: str,
          unit: float | None = None) -> None:
    """Replace the rows of `tiers` with `rows`, keep the other tiers' rows; `unit` is the
    calibration measured beside them, kept for each of `tiers`."""
    kept = [row for row in read(path) if row.tier not in tiers]
    units = {tier: u for tier, u in calibrations(path).items() if tier not in tiers}
    units.update({tier: unit for tier in tiers if unit})
    every = sorted(kept + rows, key=lambda row: (TIERS.index(row.tier), row.test))
    totals = ", ".join(
        f"{tier} {sum(r.cpu_s for r in every if r.tier == tier):.1f} s CPU "
        f"({sum(1 for r in every if r.tier == tier)} tests)"
        for tier in TIERS if any(r.tier == tier for r in every))
    text = [
        "# What each test took: CPU seconds of the process that ran it (setup, call and",
        "# teardown; every thread and waited-for child) and wall seconds. Written by `make",
        "# durations` (the check tier and the SIMULATIONS of tests/conftest.py, one process);",
        "# tests/test_durations.py holds the check tier to its budget; make test deals by it.",
        f"# {note}",
        *(f"# calibration of {tier}: {units[tier]:.4f} s of CPU (tests/durations.calibrate, "
          "before and after its tests)" for tier in TIERS if tier in units),
        f"# totals: {totals}",
        HEADER,
        *(row.line() for row in every),
    ]
    tmp = path.with_suffix(".tmp")
    tmp.write_text("\n".join(text) + "\n")
    os.replace(tmp, path)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--record-durations", metavar="FILE", default=None,
                     help="write each test's CPU and wall seconds to FILE (its tiers' rows)")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    """Each phase's CPU seconds, read by the report made after it."""
    item.stash[_started] = cpu_seconds()
    yield


def cpu_seconds() -> float:
    """CPU seconds of this process (every thread) and of the children it has waited for
    (the tools a test runs): user and system."""
    now = os.times()
    return now.user + now.system + now.children_user + now.children_system


_started = pytest.StashKey[float]()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()
    now = cpu_seconds()
    report.user_properties.append((_CPU, now - item.stash.get(_started, now)))
    item.stash[_started] = now  # the next phase starts here


class Recorder:
    """Sums each test's phases as their reports arrive (from xdist's workers too)."""

    def __init__(self, path: Path, processes: int) -> None:
        self.path, self.processes = path, processes
        self.unit = calibrate()
        self.cpu: dict[str, float] = {}
        self.wall: dict[str, float] = {}
        self.tier: dict[str, str] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.skipped and report.when == "call":
            return
        cpu = dict(report.user_properties).get(_CPU, 0.0)
        self.cpu[report.nodeid] = self.cpu.get(report.nodeid, 0.0) + float(cpu)  # type: ignore[arg-type]
        self.wall[report.nodeid] = self.wall.get(report.nodeid, 0.0) + report.duration
        self.tier[report.nodeid] = tier_of(report.keywords)

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        if exitstatus not in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
            return
        rows = [Duration(self.tier[test], test, round(self.cpu[test], DIGITS),
                         round(self.wall[test], DIGITS)) for test in self.cpu]
        note = (f"{datetime.now(UTC):%Y-%m-%d}, {platform.machine()} "
                f"{os.cpu_count()} CPUs, {self.processes} pytest process(es), load average "
                f"{os.getloadavg()[0]:.1f} at the end")
        unit = (self.unit + calibrate()) / 2
        write(self.path, rows, set(self.tier.values()), note, unit)


def pytest_configure(config: pytest.Config) -> None:
    path = config.getoption("--record-durations")
    if not path or hasattr(config, "workerinput"):  # xdist's workers report to the controller
        return
    if config.getoption("keyword") or any("::" in arg for arg in config.args):
        raise pytest.UsageError("--record-durations records whole tiers: no -k, no node ids")
    processes = max(1, int(getattr(config.option, "numprocesses", 0) or 0))
    config.pluginmanager.register(Recorder(Path(path), processes), "fslab-durations")
