"""Shared fixtures: a private lab directory per test, and leftover checks.

Privileged tests need root, loop devices, mkfs and fio. Where a requirement is missing
they skip with the reason on a developer machine, and FAIL under CI (CI=true): CI must
run every test, none may skip silently.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
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
