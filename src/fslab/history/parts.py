"""A catalogue on disk: a directory of immutable parts, so that any number of machines
write one history at once and nothing ever waits on a lock.

    DIR/catalogue.json          the format (refused when newer than this code)
    DIR/parts/<version>/        one part: campaigns, labels, runs and cells .parquet
    DIR/.tmp-<version>/         a part being written (readers never look here)

A writer builds a part under a temporary name, fsyncs every file, and renames the
directory into parts/ in one step (rename(2): atomic on a local file system and on NFS,
where file locks are unreliable or absent): a reader sees the whole part or none of it.
Every row carries its campaign's `version` (the name of the part that added it); the
newest version of a campaign is the one readers use, so adding a campaign again replaces
its rows in one rename, and a campaign's removal is a part that says so (a tombstone).
Parts are merged as a catalogue grows, as a log-structured store merges its runs: when
MERGE_FAN parts of one level gather, the next writer copies their current rows into one
part of the level above (their versions kept: readers take a version's rows from the
newest part that holds it) and names the parts it replaces in its merged.json, so that
readers skip them at once; `compact` merges everything into one part. A catalogue of
1,000 campaigns is then read from a few dozen files, not a thousand.

A killed writer leaves at most a .tmp- directory: readers never see it, the next writer
clears it (its process gone, or older than STALE_TMP_S), and adding again completes the
campaign. Parts whose every row has a newer copy are deleted by later writers once older
than GRACE_S, long after any reader that listed them has finished.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from fslab.core.dirformat import DirFormat

FORMAT = DirFormat("catalogue", "catalogue.json", unstamped=1, history={
    1: "a directory of immutable parts (parts/<version>/: campaigns, labels, runs and "
       "cells as Parquet, every row with its campaign's version), renamed into place",
})
PARTS = "parts"
TMP_PREFIX = ".tmp-"
TABLES = ("campaigns", "labels", "runs", "cells")
# The campaigns table's columns (text), beside its version and removed flag.
CAMPAIGN_COLUMNS = ("campaign_id", "path", "name", "started", "machine", "labels", "added")
# Then a campaign's sitting (its own id), the host it sat on and the plan its sittings
# share (history/identity.py); a part written before them has none (the views fill them).
SITTING_COLUMNS = ("sitting", "host", "plan")
# A superseded part is deleted only when older than this: a reader that listed it before
# the part superseding it was renamed into place has long finished reading.
GRACE_S = 600.0
# A temporary part of another host (or of a process not known to be gone) is cleared
# only when this old: its writer cannot still be writing it.
STALE_TMP_S = 3600.0


MERGED = "merged.json"  # a merged part's list of the parts it replaces
MERGE_FAN = 16  # parts of one level merged into one of the next


@dataclass(frozen=True)
class Part:
    """One part on disk: its name (a version, '-L<level>' for a merged one) and its
    directory."""

    name: str
    path: Path

    def table(self, name: str) -> Path:
        return self.path / f"{name}.parquet"

    @property
    def level(self) -> int:
        """0 for a part a writer added; n for one merged from parts of level n - 1."""
        head, _, level = self.name.rpartition("-L")
        return int(level) if head and level.isdigit() else 0

    def replaces(self) -> list[str]:
        """The parts a merged part holds every current row of ([] for any other)."""
        import json

        if not self.level:
            return []
        try:
            found = json.loads((self.path / MERGED).read_text())
        except (OSError, ValueError):
            return []
        return [str(name) for name in found] if isinstance(found, list) else []


def is_catalogue_dir(path: Path) -> bool:
    return (path / FORMAT.marker).exists()


def create(root: Path) -> None:
    """Make `root` a catalogue (nothing when it is one already)."""
    import json

    (root / PARTS).mkdir(parents=True, exist_ok=True)
    if not is_catalogue_dir(root):
        tmp = root / f"{TMP_PREFIX}{FORMAT.marker}-{os.getpid()}-{secrets.token_hex(4)}"
        tmp.write_text(json.dumps(FORMAT.stamp(), indent=1))
        os.replace(tmp, root / FORMAT.marker)


def check(root: Path) -> None:
    """Refuse a catalogue written by a newer fslab, in one line."""
    FORMAT.read(root)


def new_version(after: str = "") -> str:
    """A part name that sorts after every part written before it here, and after
    `after` (a campaign's current version: a clock behind another machine's never makes
    a re-added campaign older than its last version)."""
    now = time.time_ns()
    if after:
        with contextlib.suppress(ValueError):
            now = max(now, int(after.split("-", 1)[0]) + 1)
    host = "".join(c if c.isalnum() else "_" for c in socket.gethostname())[:24]
    return f"{now:020d}-{host}-{os.getpid()}-{secrets.token_hex(3)}"


def live_parts(root: Path) -> list[Part]:
    """The parts a reader reads: every part but those a merged part replaces."""
    every = parts(root)
    replaced = {name for part in every if part.level for name in part.replaces()}
    return [part for part in every if part.name not in replaced]


def parts(root: Path) -> list[Part]:
    """Every part renamed into place, oldest first."""
    try:
        entries = [e for e in os.scandir(root / PARTS)
                   if e.is_dir() and not e.name.startswith(".")]
    except FileNotFoundError:
        return []
    return [Part(e.name, Path(e.path)) for e in sorted(entries, key=lambda e: e.name)]


def write_part(root: Path, version: str, copy: Callable[[str, Path], None],
               replaces: list[str] | None = None) -> Part:
    """Write one part named `version` (a merged part: with the names of the parts it
    replaces): `copy(table, path)` writes each of TABLES as Parquet (a DuckDB COPY: no
    pyarrow arrays, which would import pandas), every file is fsynced under a temporary
    name, then the directory is renamed into parts/ in one step."""
    import json

    tmp = root / f"{TMP_PREFIX}{version}"
    tmp.mkdir(parents=True)
    if replaces is not None:
        (tmp / MERGED).write_text(json.dumps(replaces))
        _fsync(tmp / MERGED)
    for name in TABLES:
        copy(name, tmp / f"{name}.parquet")
        _fsync(tmp / f"{name}.parquet")
    _fsync(tmp)
    final = root / PARTS / version
    os.rename(tmp, final)
    _fsync(root / PARTS)
    return Part(version, final)


def _fsync(path: Path) -> None:
    descriptor = os.open(path, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def clear_leftovers(root: Path) -> list[str]:
    """Remove temporary parts of writers that are gone: this host's whose process has
    ended, any host's older than STALE_TMP_S. Returns what it removed."""
    removed = []
    host = "".join(c if c.isalnum() else "_" for c in socket.gethostname())[:24]
    now = time.time()
    for entry in os.scandir(root):
        if not entry.name.startswith(TMP_PREFIX):
            continue
        fields = entry.name[len(TMP_PREFIX):].split("-")
        mine = len(fields) >= 3 and fields[1] == host
        gone = mine and fields[2].isdigit() and not _alive(int(fields[2]))
        try:
            old = now - entry.stat(follow_symlinks=False).st_mtime > STALE_TMP_S
        except FileNotFoundError:
            continue
        if gone or old:
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(entry.path)
            removed.append(entry.name)
    return removed


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)  # signal 0: whether it exists; nothing is sent
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def delete_superseded(root: Path, superseded: list[str]) -> list[str]:
    """Delete the named parts that are older than GRACE_S (every row of each has a newer
    copy: the caller decides that from the catalogue it read)."""
    done = []
    now = time.time()
    for name in superseded:
        path = root / PARTS / name
        try:
            if now - path.stat().st_mtime <= GRACE_S:
                continue
        except FileNotFoundError:
            continue
        # renamed out of parts/ first: a reader never lists a half-deleted part
        doomed = root / f"{TMP_PREFIX}deleting-{name}"
        try:
            os.rename(path, doomed)
        except FileNotFoundError:
            continue
        shutil.rmtree(doomed, ignore_errors=True)
        done.append(name)
    return done
