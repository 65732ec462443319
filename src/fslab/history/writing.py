"""Writing the catalogue: add a campaign (a part of its own), take one out, compact many
small parts into one, migrate a single-file catalogue of an earlier fslab; and after each,
clear what killed writers left and parts superseded long enough ago (history/parts.py).
Every write is a new part renamed into place: writers never wait on each other."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from fslab.core.errors import UserError
from fslab.history import parts
from fslab.history.campaign_rows import campaign_session, current_stats
from fslab.history.catalogue import (
    TABLES,
    connect,
    is_legacy,
    not_one,
    part_rows,
    resolve_path,
)
from fslab.history.identity import Identity, identify

if TYPE_CHECKING:
    import duckdb


@dataclass(frozen=True)
class Recorded:
    """A campaign `add` recorded, and where the catalogue had it before (None: new)."""

    identity: Identity
    path: Path
    before: str | None

    def describe(self) -> str:
        """'added …', 'already recorded …: its rows replaced, nothing added' or 'found …
        at PATH (was PATH): nothing added'."""
        head = f"{self.identity.campaign_id} {self.identity.name}"
        if self.before is None:
            return f"added {head} ({len(self.identity.labels)} labels)"
        if self.before == str(self.path):
            return f"already recorded {head}: its rows replaced, nothing added"
        return f"found {head} at {self.path} (was {self.before}): nothing added"


def writable(path: Path | None) -> Path:
    """The catalogue directory to write (made when new); a single-file catalogue of an
    earlier fslab is refused in one line that says how to migrate it."""
    where = resolve_path(path)
    if is_legacy(where):
        raise UserError(f"{where} is a single-file catalogue of an earlier fslab (one "
                        f"writer at a time): copy it once into a directory catalogue with "
                        f"`fslab history migrate {where} DIR`, then use DIR")
    if not parts.is_catalogue_dir(where):
        not_one(where)
    parts.create(where)
    parts.check(where)
    return where


def add(path: Path | None, directories: list[Path],
        labels: dict[str, str] | None = None) -> list[Recorded]:
    """Record results directories (analysed first where their stats are missing or out
    of date), each as a part of its own: a campaign the catalogue has already (by its id,
    wherever it lies now) gets a new version whose rows replace the old ones."""
    where = writable(path)
    found = []
    for directory in map(Path, directories):
        directory = directory.resolve()
        if not (directory / "metrics.parquet").exists():
            raise UserError(f"{directory} is not a results directory (no metrics.parquet)")
        current_stats(directory)  # analysed first where stats/ is missing or stale
        found.append((identify(directory, labels), directory))
    known = _versions(where)
    out = []
    for identity, directory in found:
        before = known.get(identity.campaign_id)
        version = parts.new_version(after=before[1] if before else "")
        with campaign_session(directory, identity, version) as session:
            parts.write_part(where, version, copier(session))
        out.append(Recorded(identity, directory, before[0] if before else None))
    tidy(where)
    return out


def copier(db: duckdb.DuckDBPyConnection, sql: dict[str, str] | None = None,
           parameters: dict[str, object] | None = None) -> Callable[[str, Path], None]:
    """What writes each table of a part (parts.write_part): a DuckDB COPY of the
    session's table of that name, or of the query `sql` gives for it, with the
    `parameters` it names ($name)."""
    def copy(table: str, file: Path) -> None:
        query = (sql or {}).get(table) or f"SELECT * FROM {table}"
        quoted = str(file).replace("'", "''")
        used = {k: v for k, v in (parameters or {}).items() if f"${k}" in query}
        db.execute(f"COPY ({query}) TO '{quoted}' (FORMAT parquet)", used)

    return copy


def remove(path: Path | None, campaign_id: str) -> str:
    """Take a campaign out (a part that says it is removed); its name, for the message."""
    import duckdb

    where = writable(path)
    known = _versions(where)
    if campaign_id not in known:
        raise UserError(f"no campaign {campaign_id} in {where} (`fslab history list` shows "
                        "their ids)")
    version = parts.new_version(after=known[campaign_id][1])
    tombstone = duckdb.connect(":memory:")
    try:
        columns = ", ".join(f"{c} VARCHAR" for c in parts.CAMPAIGN_COLUMNS)
        tombstone.execute(f"CREATE TABLE campaigns ({columns}, version VARCHAR, "
                          "removed BOOLEAN)")
        tombstone.execute("INSERT INTO campaigns VALUES (?, ?, '', '', '', '{}', ?, ?, true)",
                          [campaign_id, known[campaign_id][0], _now(), version])
        for table in TABLES[1:]:  # empty, with the columns every part has
            tombstone.execute(f"CREATE TABLE {table} (campaign_id VARCHAR, version VARCHAR)")
        parts.write_part(where, version, copier(tombstone))
    finally:
        tombstone.close()
    tidy(where)
    return campaign_id


def _versions(root: Path) -> dict[str, tuple[str, str]]:
    """campaign_id -> (its path, its current version) of every campaign recorded."""
    if not parts.parts(root):
        return {}
    with connect(root) as db:
        rows = db.execute("SELECT a.campaign_id, a.path, a.version FROM all_campaigns a "
                          "JOIN current USING (campaign_id, version, part)").fetchall()
    return {str(c): (str(p), str(v)) for c, p, v in rows}


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


def tidy(root: Path) -> None:
    """Best effort, after writing: clear what killed writers left, merge parts where a
    level has gathered parts.MERGE_FAN of them, and delete parts whose every row has a
    newer copy (parts.GRACE_S after they were superseded)."""
    parts.clear_leftovers(root)
    live = parts.live_parts(root)
    for level in sorted({part.level for part in live}):
        same = [part.name for part in live if part.level == level]
        if len(same) >= parts.MERGE_FAN:
            merge(root, same[:parts.MERGE_FAN], level + 1)
            break  # one merge per write: a writer's own work stays short
    superseded, tombstones = _superseded(root)
    parts.delete_superseded(root, superseded)
    parts.delete_superseded(root, tombstones)  # after the versions they hide


def merge(root: Path, names: list[str], level: int) -> int:
    """Copy the current rows of the named parts into one part of `level` that replaces
    them (parts.py); how many campaigns it holds. Safe beside any writer or reader: a
    row copied is a version already written, and readers take each version from the
    newest part that holds it."""
    with connect(root) as db:
        queries = {table: part_rows(db, root, table, names) or
                   f"SELECT * FROM {table} WHERE false" for table in TABLES}
        parts.write_part(root, f"{parts.new_version()}-L{level}", copier(db, queries),
                         replaces=names)
        found = db.execute(f"SELECT count(*) FROM ({queries['campaigns']}) WHERE NOT "
                           "removed").fetchone()
    return int(found[0]) if found else 0


def _superseded(root: Path) -> tuple[list[str], list[str]]:
    """(parts replaced by a merge or none of whose rows is current, tombstones that hide
    nothing any more)."""
    every_part = parts.parts(root)
    if not every_part:
        return [], []
    replaced = {name for part in every_part if part.level for name in part.replaces()}
    with connect(root) as db:
        needed = {p for (p,) in db.execute("SELECT DISTINCT part FROM chosen").fetchall()}
        every = db.execute("SELECT part, campaign_id, removed FROM all_campaigns").fetchall()
    held: dict[str, set[str]] = {}
    for part, campaign, _ in every:
        held.setdefault(str(part), set()).add(str(campaign))
    stale = sorted({p for p in held if p not in needed} | replaced)
    tombstones = sorted(str(p) for p, c, removed in every if removed and p in needed
                        and p not in stale and not p.count("-L")
                        and all(q in stale for q, ids in held.items() if c in ids and q != p))
    return stale, tombstones


def compact(path: Path | None) -> tuple[int, int]:
    """Merge every part into one (a catalogue read from one file reads fastest);
    (parts before, campaigns kept). Never needed for correctness: writers merge as the
    catalogue grows."""
    where = writable(path)
    live = parts.live_parts(where)
    kept = 0
    if len(live) > 1:
        kept = merge(where, [part.name for part in live],
                     max(part.level for part in live) + 1)
    elif live:
        with connect(where) as db:
            kept = int(db.execute("SELECT count(*) FROM current").fetchone()[0])  # type: ignore[index]
    tidy(where)
    return len(live), kept


def migrate(legacy: Path, to: Path) -> int:
    """Copy a single-file catalogue of an earlier fslab into a directory catalogue (one
    part); how many campaigns it holds."""

    if not is_legacy(Path(legacy)):
        raise UserError(f"{legacy} is not a single-file catalogue (a .duckdb file)")
    where = writable(to)
    version = parts.new_version()
    with connect(legacy) as db:
        count = int(db.execute("SELECT count(*) FROM campaigns").fetchone()[0])  # type: ignore[index]
        if count:
            queries = {"campaigns": "SELECT *, $version AS version, false AS removed "
                                    "FROM campaigns",
                       **{t: f"SELECT *, $version AS version FROM {t}" for t in TABLES[1:]}}
            parts.write_part(where, version, copier(db, queries, {"version": version}))
    return count
