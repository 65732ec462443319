"""The raw files one run kept, wherever they are: its directory, an import archive, or
one file still in memory (`fslab import` before it stores the copy).

The parse stage (parsers/registry.py) reads runs only through this view, so one parser
serves `fslab run`, `fslab reparse` and `fslab import` alike.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from fslab.core.metrics import Measurement


class RawFiles(Protocol):
    """Names and contents of one run's raw files."""

    def names(self) -> list[str]: ...

    def read(self, name: str) -> bytes: ...


class DirFiles:
    """A run directory's files (a run fslab made)."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self._names: list[str] | None = None

    def names(self) -> list[str]:
        if self._names is None:
            self._names = sorted(p.name for p in self.run_dir.iterdir() if p.is_file())
        return self._names

    def read(self, name: str) -> bytes:
        return (self.run_dir / name).read_bytes()


class MemoryFiles:
    """Files held in memory, by name."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self.files = files

    def names(self) -> list[str]:
        return sorted(self.files)

    def read(self, name: str) -> bytes:
        try:
            return self.files[name]
        except KeyError:
            raise FileNotFoundError(name) from None


def read_json(files: RawFiles, name: str) -> Any:
    return json.loads(files.read(name))


def read_text(files: RawFiles, name: str) -> str:
    return files.read(name).decode(errors="replace")


def named(name: str) -> Callable[[RawFiles], bool]:
    """A detector: the run kept a file of this name (a workload's own record)."""
    return lambda files: name in files.names()


@dataclass
class Parsed:
    """One run's measurements and what is derived from its raw output alone."""

    kind: str
    measurements: list[Measurement]
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class RawKind:
    """One kind of raw output: how to recognise it among a run's files, how to read it."""

    name: str
    describes: str  # what it is, in messages ("fio JSON"); "" for fslab's own records
    detect: Callable[[RawFiles], bool]
    parse: Callable[[RawFiles], Parsed]


@dataclass(frozen=True)
class Addition:
    """Rows derived from one more raw file and the kind's own measurements."""

    name: str
    add: Callable[[RawFiles, list[Measurement]], list[Measurement]]


class RawOutputError(ValueError):
    """A run's raw files are of no kind fslab reads, its kind's parser failed, or its
    kind says the output is a failed run's (a job's error, a lost host)."""
