"""Writing the catalogue: add a campaign (a part of its own), take one out, compact many
small parts into one, migrate a single-file catalogue of an earlier fslab; and after each,
clear what killed writers left and parts superseded long enough ago (history/parts.py).
Every write is a new part renamed into place: writers never wait on each other."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fslab.core.errors import UserError
from fslab.history import parts
from fslab.history.catalogue import (
    CAMPAIGN_COLUMNS,
    TABLES,
    connect,
    is_legacy,
    not_one,
    resolve_path,
)
from fslab.history.identity import Identity, identify

if TYPE_CHECKING:
    import duckdb
    import pandas as pd
    import pyarrow as pa


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
    tables = [_tables_of(Path(d), labels) for d in directories]
    known = _versions(where)
    out = []
    for identity, directory, runs in tables:
        before = known.get(identity.campaign_id)
        version = parts.new_version(after=before[1] if before else "")
        parts.write_part(where, version, _part_tables(identity, directory, runs, version))
        out.append(Recorded(identity, directory, before[0] if before else None))
    tidy(where)
    return out


def remove(path: Path | None, campaign_id: str) -> str:
    """Take a campaign out (a part that says it is removed); its name, for the message."""
    where = writable(path)
    known = _versions(where)
    if campaign_id not in known:
        raise UserError(f"no campaign {campaign_id} in {where} (`fslab history list` shows "
                        "their ids)")
    version = parts.new_version(after=known[campaign_id][1])
    parts.write_part(where, version, {"campaigns": _campaign_table([{
        "campaign_id": campaign_id, "path": known[campaign_id][0], "name": "", "started": "",
        "machine": "", "labels": "{}", "added": _now(), "version": version,
        "removed": True}])})
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


def _tables_of(directory: Path, labels: dict[str, str] | None
               ) -> tuple[Identity, Path, pd.DataFrame]:
    from fslab.history.cells import runs_table

    directory = directory.resolve()
    if not (directory / "metrics.parquet").exists():
        raise UserError(f"{directory} is not a results directory (no metrics.parquet)")
    identity = identify(directory, labels)
    return identity, directory, runs_table(directory, identity)


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


def _part_tables(identity: Identity, directory: Path, runs: pd.DataFrame,
                 version: str) -> dict[str, pa.Table]:
    """The four tables of one campaign's part, every row with its version."""
    import pandas as pd
    import pyarrow as pa

    from fslab.history.cells import cells_table

    key = identity.campaign_id
    campaign = _campaign_table([{
        "campaign_id": key, "path": str(directory), "name": identity.name,
        "started": identity.started, "machine": identity.machine,
        "labels": json.dumps(identity.labels), "added": _now(), "version": version,
        "removed": False}])
    labels = pd.DataFrame([{"campaign_id": key, "key": k, "value": v}
                           for k, v in sorted(identity.labels.items())],
                          columns=["campaign_id", "key", "value"])
    return {"campaigns": campaign,
            "labels": pa.Table.from_pandas(labels.assign(version=version),
                                           preserve_index=False),
            "runs": pa.Table.from_pandas(runs.assign(version=version), preserve_index=False),
            "cells": pa.Table.from_pandas(cells_table(runs).assign(version=version),
                                          preserve_index=False)}


def _campaign_table(rows: list[dict[str, Any]]) -> pa.Table:
    import pyarrow as pa

    schema = pa.schema([*((c, pa.string()) for c in CAMPAIGN_COLUMNS),
                        ("version", pa.string()), ("removed", pa.bool_())])
    return pa.Table.from_pylist(rows, schema=schema)


def tidy(root: Path) -> None:
    """Best effort, after writing: clear what killed writers left, and delete parts
    whose every row has a newer copy (parts.GRACE_S after they were superseded)."""
    parts.clear_leftovers(root)
    superseded, tombstones = _superseded(root)
    parts.delete_superseded(root, superseded)
    parts.delete_superseded(root, tombstones)  # after the versions they hide


def _superseded(root: Path) -> tuple[list[str], list[str]]:
    """(parts none of whose rows is current, tombstones that hide nothing any more)."""
    if not parts.parts(root):
        return [], []
    with connect(root) as db:
        needed = {p for (p,) in db.execute("SELECT DISTINCT part FROM chosen").fetchall()}
        every = db.execute("SELECT part, campaign_id, removed FROM all_campaigns").fetchall()
    held: dict[str, set[str]] = {}
    for part, campaign, _ in every:
        held.setdefault(str(part), set()).add(str(campaign))
    stale = sorted(p for p in held if p not in needed)
    tombstones = sorted(str(p) for p, c, removed in every if removed and p in needed
                        and all(q in stale for q, ids in held.items() if c in ids and q != p))
    return stale, tombstones


def compact(path: Path | None) -> tuple[int, int]:
    """Copy every current row into one part (a catalogue of many small parts reads
    faster as one); (parts before, campaigns kept). Never needed for correctness."""

    where = writable(path)
    before = len(parts.parts(where))
    with connect(where) as db:
        tables = {"campaigns": _arrow(db, "SELECT a.* EXCLUDE (part) FROM all_campaigns a "
                                          "JOIN current USING (campaign_id, version, part)")}
        for table in TABLES[1:]:
            tables[table] = _arrow(db, f"SELECT t.*, c.version FROM {table} t JOIN current c "
                                       "USING (campaign_id)")
        kept = tables["campaigns"].num_rows
    if kept:
        version = parts.new_version()
        parts.write_part(where, version, tables)
    tidy(where)
    return before, kept


def _arrow(db: duckdb.DuckDBPyConnection, sql: str, parameters: list[Any] | None = None
           ) -> pa.Table:
    """A query's rows as an Arrow table."""
    found = db.sql(sql, params=parameters or None).to_arrow_table()
    assert found is not None
    return found


def migrate(legacy: Path, to: Path) -> int:
    """Copy a single-file catalogue of an earlier fslab into a directory catalogue (one
    part); how many campaigns it holds."""

    if not is_legacy(Path(legacy)):
        raise UserError(f"{legacy} is not a single-file catalogue (a .duckdb file)")
    where = writable(to)
    version = parts.new_version()
    with connect(legacy) as db:
        found = {"campaigns": _arrow(db, "SELECT *, ? AS version, false AS removed FROM "
                                         "campaigns", [version])}
        for table in TABLES[1:]:
            found[table] = _arrow(db, f"SELECT *, ? AS version FROM {table}", [version])
    count = found["campaigns"].num_rows
    if count:
        parts.write_part(where, version, found)
    return count
