"""The catalogue: every campaign fslab was told of, in one embedded DuckDB file.

Tables (written by `add`):
    campaigns   one row per campaign: id, path, name, started, machine, labels (JSON)
    labels      one row per campaign and label (machine facts, tools, the user's own)
    runs        a copy of each campaign's per-run table (stats/runs.parquet) with the
                campaign id, whether the witness saw the run disturbed, and the
                signatures that say which cells are alike
    cells       per campaign × target × workload × op × metric: n, geometric mean and its
                95 % interval, disturbed runs
Views:
    metrics     every campaign's metrics.parquet, read where it lies (DuckDB reads
                Parquet from a local or shared directory, or an object store it is set
                up for), with the campaign id

Adding a directory again replaces its rows (nothing doubles); a directory moved
elsewhere keeps its id (history/identity.py) and its new path is recorded.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fslab.core.errors import UserError
from fslab.history.identity import Identity, identify

if TYPE_CHECKING:
    import duckdb
    import pandas as pd

ENV_VAR = "FSLAB_CATALOGUE"
FILE_NAME = "catalogue.duckdb"
TABLES = ("campaigns", "labels", "runs", "cells")

SCHEMA = """
CREATE TABLE IF NOT EXISTS campaigns (
    campaign_id VARCHAR PRIMARY KEY, path VARCHAR, name VARCHAR, started VARCHAR,
    machine VARCHAR, labels JSON, added VARCHAR);
CREATE TABLE IF NOT EXISTS labels (campaign_id VARCHAR, key VARCHAR, value VARCHAR);
CREATE TABLE IF NOT EXISTS runs (
    campaign_id VARCHAR, run_id VARCHAR, target VARCHAR, fs VARCHAR, fs_impl VARCHAR,
    workload VARCHAR, op VARCHAR, metric VARCHAR, unit VARCHAR, better VARCHAR,
    iteration BIGINT, sample BIGINT, value DOUBLE, disturbed BOOLEAN, "primary" BOOLEAN,
    workload_signature VARCHAR, target_signature VARCHAR);
CREATE TABLE IF NOT EXISTS cells (
    campaign_id VARCHAR, target VARCHAR, workload VARCHAR, op VARCHAR, metric VARCHAR,
    unit VARCHAR, better VARCHAR, "primary" BOOLEAN, n BIGINT, geomean DOUBLE,
    ci_low DOUBLE, ci_high DOUBLE, disturbed BIGINT, workload_signature VARCHAR,
    target_signature VARCHAR);
"""


def default_path() -> Path:
    """$FSLAB_CATALOGUE, else the user's data directory (XDG_DATA_HOME or ~/.local/share)."""
    if os.environ.get(ENV_VAR):
        return Path(os.environ[ENV_VAR])
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "fslab" / FILE_NAME


def resolve_path(path: Path | None) -> Path:
    return Path(path) if path else default_path()


@contextmanager
def connect(path: Path | None, read_only: bool = False) -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection to the catalogue (created when writing; refused when reading one
    that does not exist)."""
    import duckdb

    where = resolve_path(path)
    if read_only and not where.exists():
        raise UserError(f"no catalogue at {where}: add campaigns with `fslab history add DIR`")
    where.parent.mkdir(parents=True, exist_ok=True)
    try:
        connection = duckdb.connect(str(where), read_only=read_only)
    except duckdb.Error as exc:
        raise UserError(f"catalogue {where}: {str(exc).splitlines()[0]}") from exc
    try:
        if not read_only:
            connection.execute(SCHEMA)
        yield connection
    finally:
        connection.close()


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


def add(path: Path | None, directories: list[Path],
        labels: dict[str, str] | None = None) -> list[Recorded]:
    """Record results directories (analysed first where their stats are missing or out
    of date): a campaign the catalogue has already (by its id, wherever it lies now) has
    its rows replaced, so adding twice changes nothing."""
    tables = [_tables_of(Path(d), labels) for d in directories]
    out = []
    with connect(path) as db:
        for identity, directory, runs in tables:
            known = db.execute("SELECT path FROM campaigns WHERE campaign_id = ?",
                               [identity.campaign_id]).fetchone()
            _replace(db, identity, directory, runs)
            out.append(Recorded(identity, directory, str(known[0]) if known else None))
        _refresh_views(db)
    return out


def _tables_of(directory: Path, labels: dict[str, str] | None
               ) -> tuple[Identity, Path, pd.DataFrame]:
    from fslab.history.cells import runs_table

    directory = directory.resolve()
    if not (directory / "metrics.parquet").exists():
        raise UserError(f"{directory} is not a results directory (no metrics.parquet)")
    identity = identify(directory, labels)
    return identity, directory, runs_table(directory, identity)


def _replace(db: duckdb.DuckDBPyConnection, identity: Identity, directory: Path,
             runs: pd.DataFrame) -> None:
    from fslab.history.cells import cells_table

    cells = cells_table(runs)
    key = identity.campaign_id
    db.execute("BEGIN TRANSACTION")
    for table in TABLES:
        db.execute(f"DELETE FROM {table} WHERE campaign_id = ?", [key])
    db.execute("INSERT INTO campaigns VALUES (?, ?, ?, ?, ?, ?, ?)",
               [key, str(directory), identity.name, identity.started, identity.machine,
                json.dumps(identity.labels), time.strftime("%Y-%m-%dT%H:%M:%S%z")])
    db.executemany("INSERT INTO labels VALUES (?, ?, ?)",
                   [[key, k, v] for k, v in sorted(identity.labels.items())])
    db.register("new_runs", runs)
    db.execute("INSERT INTO runs BY NAME SELECT * FROM new_runs")
    db.unregister("new_runs")
    db.register("new_cells", cells)
    db.execute("INSERT INTO cells BY NAME SELECT * FROM new_cells")
    db.unregister("new_cells")
    db.execute("COMMIT")


def _refresh_views(db: duckdb.DuckDBPyConnection) -> None:
    """The metrics view over every recorded campaign's metrics.parquet that can be read
    now (a directory that is gone drops out of the view, not the catalogue)."""
    paths = [row[0] for row in db.execute("SELECT path FROM campaigns ORDER BY path").fetchall()]
    files = [f"{p}/metrics.parquet" for p in paths
             if "://" in p or Path(p, "metrics.parquet").exists()]
    if not files:
        db.execute("CREATE OR REPLACE VIEW metrics AS SELECT NULL::VARCHAR AS campaign_id "
                   "WHERE false")
        return
    listed = ", ".join("'" + f.replace("'", "''") + "'" for f in files)
    db.execute(
        "CREATE OR REPLACE VIEW metrics AS SELECT c.campaign_id, m.* EXCLUDE (filename) "
        f"FROM read_parquet([{listed}], union_by_name = true, filename = true) m "
        "JOIN campaigns c ON m.filename = c.path || '/metrics.parquet'")


def campaigns(path: Path | None) -> pd.DataFrame:
    """Every campaign with its labels, oldest first."""
    with connect(path, read_only=True) as db:
        return db.execute("SELECT * FROM campaigns ORDER BY started, campaign_id").df()


def query(path: Path | None, sql: str) -> pd.DataFrame:
    """A read-only query over the catalogue's tables and views."""
    import duckdb

    with connect(path, read_only=True) as db:
        try:
            return db.execute(sql).df()
        except duckdb.Error as exc:
            raise UserError(f"query failed: {str(exc).splitlines()[0]}") from exc


def counts(path: Path | None) -> dict[str, int]:
    """Rows per table (what adding the same directory twice must not change)."""
    with connect(path, read_only=True) as db:
        return {t: int(db.execute(f"SELECT count(*) FROM {t}").fetchone()[0])  # type: ignore[index]
                for t in TABLES}


def series_rows(path: Path | None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(runs joined with their campaigns' machine, start and labels; the labels table)."""
    with connect(path, read_only=True) as db:
        runs = db.execute(
            "SELECT r.*, c.machine, c.started, c.name AS campaign_name FROM runs r "
            "JOIN campaigns c USING (campaign_id)").df()
        labels = db.execute("SELECT * FROM labels").df()
    return runs, labels


def labels_wide(labels: pd.DataFrame) -> dict[str, dict[str, Any]]:
    """campaign_id -> {label: value}."""
    found: dict[str, dict[str, Any]] = {}
    for row in labels.itertuples(index=False):
        found.setdefault(str(row.campaign_id), {})[str(row.key)] = row.value
    return found
