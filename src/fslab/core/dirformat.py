"""Versioned directory formats with a written history: one machinery for every directory
fslab writes (results and imports: format.json; aging runs: aging.json).

Each format has a current version and a history saying what every version changed (as
pyperf's and asv's format histories do). A directory is stamped with the version that
wrote it; readers accept every version up to the current one (what an older directory
lacks, its reader rebuilds or does without, as each history entry says) and refuse a
newer one in one line: a newer fslab may have changed what the files mean.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fslab.core.errors import UserError


@dataclass(frozen=True)
class DirFormat:
    """One kind of directory: where its version is stamped, and its history."""

    what: str  # "results", "aging": names the format in messages
    marker: str  # the JSON file whose "format" key holds the version
    history: dict[int, str]  # version -> what it changed
    unstamped: int  # the version of a marker written before versions were stamped

    @property
    def current(self) -> int:
        return max(self.history)

    def stamp(self) -> dict[str, object]:
        """The keys that mark a directory as written in the current version."""
        return {"format": self.current, "changes": self.history[self.current]}

    def version_of(self, record: Any, path: Path) -> int:
        """The format version of a directory whose marker holds `record`, if this fslab
        can read it; a UserError in one line when it cannot."""
        marker = Path(path) / self.marker
        if not isinstance(record, dict):
            raise UserError(f"{marker} is damaged (not a JSON object); it should read "
                            f'{{"format": {self.current}, ...}}')
        version = record.get("format", self.unstamped)
        if not isinstance(version, int) or isinstance(version, bool) or version < 0:
            raise UserError(f"{marker} is damaged (format is {version!r}, not a version "
                            f'number); it should read {{"format": {self.current}, ...}}')
        if version > self.current:
            raise UserError(f"{path} was written by a newer fslab ({self.what} format "
                            f"{version}; this one reads up to {self.current}): upgrade fslab")
        return version

    def read(self, path: Path) -> tuple[int, Any]:
        """The version and the parsed marker of the directory at `path`."""
        marker = Path(path) / self.marker
        try:
            record = json.loads(marker.read_text())
        except (OSError, ValueError, UnicodeDecodeError) as exc:
            raise UserError(f"{marker} is damaged ({exc}); it should read "
                            f'{{"format": {self.current}, ...}}') from None
        return self.version_of(record, path), record
