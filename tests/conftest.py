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

from fslab import system
from fslab.lab import Lab

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
    from fslab import cli

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


MACHINE_FIXTURES = {"lab", "aged_image"}


def touches_the_machine(item: pytest.Item) -> str:
    """Why a test needs the machine (root, mkfs, loop devices, fio, a process of its own),
    read off what it uses; '' when it needs none of it."""
    fixtures = set(getattr(item, "fixturenames", ()))
    if used := fixtures & MACHINE_FIXTURES:
        return f"uses {', '.join(sorted(used))}"
    function = getattr(item, "function", None)
    try:
        source = inspect.getsource(function) if function else ""
    except (OSError, TypeError):
        source = ""
    for call in ("requires(", "fslab_cmd(", "subprocess."):
        if call in source:
            return f"calls {call.rstrip('(')}"
    return ""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The tiers, decided here and nowhere else: a test that touches the machine is
    `machine` (make test runs it); every other one is `check` (make check runs those)."""
    for item in items:
        item.add_marker(pytest.mark.machine if touches_the_machine(item) else pytest.mark.check)
