"""Shared fixtures: a private lab directory per test, and leftover checks.

Privileged tests need root, loop devices, mkfs and fio. Where a requirement is missing
they skip with the reason on a developer machine, and FAIL under CI (CI=true): CI must
run every test, none may skip silently.
"""

from __future__ import annotations

import contextlib
import inspect
import io
import os
import shutil
import subprocess
import sys
import traceback
from collections.abc import Iterator
from pathlib import Path

import pytest

from fslab.host import system
from fslab.host.lab import Lab

REPO = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).parent / "fixtures"
FSLAB = [sys.executable, "-m", "fslab.cli"]


def requires(*tools: str, root: bool = True) -> None:
    """Skip (or fail under CI) unless root and every tool are available."""
    missing = [tool for tool in tools if system.which(tool) is None]
    reasons = []
    if root and os.geteuid() != 0:
        reasons.append("needs root")
    if missing:
        reasons.append(f"missing {', '.join(missing)}")
    if reasons:
        message = "; ".join(reasons)
        if os.environ.get("CI"):
            pytest.fail(f"CI must run every test: {message}")
        pytest.skip(message)


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[Lab]:
    """A private lab; after the test, nothing of it may stay mounted or attached."""
    the_lab = Lab(tmp_path / "lab")
    yield the_lab
    problems = leftovers(the_lab.root)
    the_lab.cleanup()  # never leave the machine dirty, even when the test failed
    assert not problems, f"left behind: {problems}"


def leftovers(root: Path) -> list[str]:
    """Mounts under `root` and loop devices backed by files under it."""
    root_text = str(root.resolve())
    found = [f"mount {point}" for point in system.mounted_paths()
             if point.startswith(root_text)]
    if shutil.which("losetup") or system.which("losetup"):
        out = subprocess.run(["losetup", "-n", "-O", "NAME,BACK-FILE", "--list"],
                             capture_output=True, text=True).stdout
        for line in out.splitlines():
            parts = line.split(None, 1)
            if len(parts) == 2 and parts[1].strip().startswith(root_text):
                found.append(f"loop {parts[0]} -> {parts[1].strip()}")
    return found


def fslab_cmd(*args: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
    """Run the real `fslab` command line in a subprocess."""
    return subprocess.run([*FSLAB, *args], capture_output=True, text=True, cwd=REPO,
                          **kwargs)  # type: ignore[call-overload]


def fslab_here(*args: str) -> subprocess.CompletedProcess[str]:
    """The `fslab` entry point (cli.main: its error handling included) in this process:
    for commands that need no process of their own, without a cold interpreter's second.
    An exception that escapes main() comes back as the traceback a user would see."""
    from fslab.cli import main as cli

    out, err = io.StringIO(), io.StringIO()
    argv, sys.argv = sys.argv, ["fslab", *args]
    code: int | str | None = 0
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                cli.main()
            except SystemExit as exc:
                code = exc.code
            except Exception:
                err.write(traceback.format_exc())
                code = 1
    finally:
        sys.argv = argv
    returncode = code if isinstance(code, int) else (0 if code is None else 1)
    return subprocess.CompletedProcess(args, returncode, out.getvalue(), err.getvalue())


MACHINE_FIXTURES = {"lab", "aged_image", "servers"}  # servers: fio servers of its own
# Tests that start processes of their own through fslab's code, not their own source.
MACHINE_TESTS = {"test_work_waits_for_a_child_nobody_measures": "starts children to wait on"}


def touches_the_machine(item: pytest.Item) -> str:
    """Why a test needs the machine (root, mkfs, loop devices, fio, a process of its own),
    read off what it uses; '' when it needs none of it."""
    fixtures = set(getattr(item, "fixturenames", ()))
    if used := fixtures & MACHINE_FIXTURES:
        return f"uses {', '.join(sorted(used))}"
    if why := MACHINE_TESTS.get(getattr(item, "originalname", item.name), ""):
        return why
    source = _source(item)
    for call in ("requires(", "fslab_cmd(", "subprocess."):
        if call in source:
            return f"calls {call.rstrip('(')}"
    return ""


# Tests that measure the machine itself run alone, after the others (make test): a test
# running beside them would be part of what they measure. Module or test -> why.
QUIET = {
    "test_a_known_handicap_is_found_with_the_truth_in_its_interval":
        "asserts how narrow a throttled pair's interval is (1.32x wide beside the others)",
    "test_buffered_basic5_is_marked_where_it_beats_the_raw_device":
        "asserts that page-cache rates beat the disk's by a margin",
    "test_witness": "the witness counts every other process as a busy machine",
    "test_fios_own_files_stay_cached_across_a_cache_drop":
        "counts every byte read from the machine's disk",
    "test_steady_real": "asserts that an idle run's throughput holds still",
    "test_summed_jobs_match_group_reporting": "asserts that two paced fio runs keep pace",
    "test_loop_direct_io_and_slow_device_emulation": "asserts a throttled device's rate",
}
# Daemons tests share, count or kill by name (zfs-fuse serves every pool of the machine,
# and a test lists every pool; a test kills "the" ntfs-3g it finds): tests that name one,
# in their code or their parameters, run one after another.
SHARED_DAEMONS = ("zfs", "zpool", "daemons", "ntfs", "exfat", "fat32")


def _source(item: pytest.Item) -> str:
    function = getattr(item, "function", None)
    try:
        return inspect.getsource(function) if function else ""
    except (OSError, TypeError):
        return ""


@pytest.hookimpl(tryfirst=True)  # before xdist's loadgroup reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The tiers, decided here and nowhere else: a test that touches the machine is
    `machine` (make test runs it) and, when it measures the machine itself, `quiet` (run
    alone, after the rest); every other one is `check` (make check runs those). Machine
    tests that share a daemon are `shared_daemons`: they run one at a time."""
    for item in items:
        if not touches_the_machine(item):
            item.add_marker(pytest.mark.check)
            continue
        item.add_marker(pytest.mark.machine)
        module = item.module.__name__.rpartition(".")[2] if item.module else ""
        if module in QUIET or getattr(item, "originalname", item.name) in QUIET:
            item.add_marker(pytest.mark.quiet)
        elif any(name in _source(item) + str(getattr(item, "callspec", "") and
                                              item.callspec.params)  # type: ignore[attr-defined]
                 for name in SHARED_DAEMONS):
            item.add_marker(pytest.mark.shared_daemons)
    # Longest first: the machine's tests (seconds to a minute of real I/O each) are handed
    # out before the others (milliseconds each), which then fill the workers' gaps at the
    # end instead of one worker finishing a long test alone.
    items.sort(key=lambda item: item.get_closest_marker("machine") is None)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """The quiet tier alone (make test's `-m quiet`) reads only the files that hold a
    quiet test: importing the other test modules costs it 6 s of a 2-minute tier."""
    if (config.getoption("markexpr", "") != "quiet" or collection_path.suffix != ".py"
            or not collection_path.name.startswith("test_")):
        return None
    if collection_path.stem in QUIET:
        return None
    text = collection_path.read_text()
    return None if any(f"def {name}(" in text for name in QUIET) else True


DAEMONS_LOCK = Path("/tmp/fslab-tests-shared-daemons.lock")


@pytest.fixture(autouse=True)
def one_at_a_time_with_shared_daemons(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test marked shared_daemons holds an exclusive lock while it runs, so that of the
    parallel workers (make test: pytest -n 4) only one at a time uses those daemons."""
    if request.node.get_closest_marker("shared_daemons") is None:
        yield
        return
    import fcntl

    with DAEMONS_LOCK.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def verdict_lines(headline, ranking, tests, pairwise) -> list[str]:
    """verdicts.txt's lines of these questions (verdict_rows as text)."""
    import pandas as pd

    from fslab.analysis.verdicts import VERDICT_COLUMNS, as_text, verdict_rows

    return as_text(pd.DataFrame(verdict_rows(headline, ranking, tests, pairwise),
                                columns=VERDICT_COLUMNS))
