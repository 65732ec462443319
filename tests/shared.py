"""Results a module's tests share: a simulated campaign several tests read is made once
per module (per worker), not once per test. Shared, never mutable: a test that changes
a directory takes its own copy, and when the module is done every shared directory must
be as it was made (the `shared` fixture in tests/conftest.py fails the module's last
test otherwise), so no test can depend on what another one did to it.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path


def fingerprint(root: Path) -> dict[str, tuple[int, int]]:
    """Every file under `root`: its size and modification time."""
    return {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime_ns)
            for p in sorted(root.rglob("*")) if p.is_file()}


class Shared:
    """Directories made on first ask, by key, under `root`."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._made: dict[str, Path] = {}
        self._prints: dict[str, dict[str, tuple[int, int]]] = {}

    def get(self, key: str, make: Callable[[Path], Path]) -> Path:
        """The directory `make(parent)` returns, made in a parent of its own the first
        time `key` is asked for. Read it; never write into it (take a `copy`)."""
        if key not in self._made:
            parent = self.root / f"{len(self._made):03d}"
            parent.mkdir(parents=True)
            self._made[key] = made = make(parent)
            self._prints[key] = fingerprint(made)
        return self._made[key]

    def copy(self, key: str, make: Callable[[Path], Path], to: Path) -> Path:
        """A copy of the shared directory at `to`, to change as the test likes."""
        shutil.copytree(self.get(key, make), to)
        return to

    def changed(self) -> list[str]:
        """The shared directories a test wrote into."""
        return [key for key, made in self._made.items()
                if fingerprint(made) != self._prints[key]]
