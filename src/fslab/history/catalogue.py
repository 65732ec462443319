"""The catalogue: every campaign fslab was told of, as a directory of immutable Parquet
parts (history/parts.py) that any number of machines write at once, read through DuckDB
in memory: no writer waits on another, no reader waits on a writer.

Tables (views of each reader's own in-memory DuckDB):
    campaigns   one row per campaign: id, path, name, started, machine, labels (JSON),
                its sitting (its own id), host (the one it sat on) and plan (what its
                sittings share: history/identity.py)
    labels      one row per campaign and label (machine facts, tools, the user's own)
    runs        a copy of each campaign's per-run table (stats/runs.parquet) with the
                campaign id, whether the witness saw the run disturbed, and the
                signatures that say which cells are alike
    cells       per campaign × target × workload × op × metric: n, geometric mean and its
                95 % interval, disturbed runs
    metrics     every campaign's metrics.parquet, read where it lies (DuckDB reads
                Parquet from a local or shared directory, or an object store it is set
                up for), with the campaign id

Adding a directory again replaces its rows (a new version of the campaign, in one
rename); a directory moved elsewhere keeps its id (history/identity.py) and its new path
is recorded; a campaign removed is gone (history/writing.py). A single-file catalogue of
an earlier fslab (`.duckdb`) is read as it is; `migrate` copies it into a directory.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from fslab.core.errors import UserError
from fslab.history import parts

if TYPE_CHECKING:
    import duckdb
    import pandas as pd

ENV_VAR = "FSLAB_CATALOGUE"
DIR_NAME = "catalogue"
TABLES = parts.TABLES
# The sitting columns (parts.SITTING_COLUMNS), each as a catalogue written before
# sittings were recorded reads it: a campaign is its own
# sitting on its machine; its plan is unknown (it pools with nothing).
SITTING_OF = {"sitting": "coalesce(a.sitting, a.campaign_id) AS sitting",
              "host": "coalesce(a.host, a.machine) AS host",
              "plan": "a.plan::VARCHAR AS plan"}
# A reader that lists parts while a writer deletes one it has superseded (after
# parts.GRACE_S) tries again, this many times.
READ_ATTEMPTS = 3


def default_path() -> Path:
    """$FSLAB_CATALOGUE, else the user's data directory (XDG_DATA_HOME or ~/.local/share)."""
    if os.environ.get(ENV_VAR):
        return Path(os.environ[ENV_VAR])
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "fslab" / DIR_NAME


def resolve_path(path: Path | None) -> Path:
    return Path(path) if path else default_path()


def is_legacy(path: Path) -> bool:
    """A single-file catalogue of an earlier fslab (one DuckDB database file)."""
    return path.is_file()


# Reading ---------------------------------------------------------------------------------


@contextmanager
def connect(path: Path | None, metrics: bool = False
            ) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-only view of the catalogue: an in-memory DuckDB whose views (TABLES, and
    with `metrics` the metrics view: it reads every campaign's metrics.parquet schema)
    read the parts as they were when it opened; refused when there is none."""
    import duckdb

    where = resolve_path(path)
    if not where.exists():
        raise UserError(f"no catalogue at {where}: add campaigns with `fslab history add DIR`")
    for attempt in range(READ_ATTEMPTS):
        db = duckdb.connect(":memory:")
        try:
            if is_legacy(where):
                _legacy_views(db, where)
            else:
                parts.check(where) if parts.is_catalogue_dir(where) else not_one(where)
                _views(db, where)
            if metrics:
                _metrics_view(db)
        except duckdb.IOException as exc:  # a part deleted as it was listed: again
            db.close()
            if attempt + 1 == READ_ATTEMPTS or is_legacy(where):
                raise UserError(f"catalogue {where}: {str(exc).splitlines()[0]}") from exc
            time.sleep(0.05)
            continue
        except duckdb.Error as exc:
            db.close()
            raise UserError(f"catalogue {where}: {str(exc).splitlines()[0]}") from exc
        try:
            yield db
        finally:
            db.close()
        return


def not_one(where: Path) -> None:
    if where.is_dir() and any(where.iterdir()):
        raise UserError(f"{where} is not a catalogue (no {parts.FORMAT.marker}): name an "
                        "empty or new directory, or a catalogue")


def _files(paths: list[Path]) -> str:
    return "[" + ", ".join("'" + str(p).replace("'", "''") + "'" for p in paths) + "]"


PART_OF = r"regexp_extract(filename, '([^/]+)/[^/]+\.parquet$', 1)"


def _views(db: duckdb.DuckDBPyConnection, root: Path) -> None:
    """Views over the newest version of every campaign not removed (parts.py)."""
    listed = [p for p in parts.live_parts(root) if p.table("campaigns").exists()]
    if not listed:
        _empty_views(db)
        return
    db.execute("CREATE TEMP TABLE all_campaigns AS SELECT * EXCLUDE (filename), "
               f"{PART_OF} AS part FROM read_parquet("
               f"{_files([p.table('campaigns') for p in listed])}, filename = true, "
               "union_by_name = true)")
    db.execute("""
        CREATE TEMP TABLE chosen AS
        SELECT a.campaign_id, a.version, max(a.part) AS part, bool_or(a.removed) AS removed
        FROM all_campaigns a
        JOIN (SELECT campaign_id, max(version) AS version FROM all_campaigns GROUP BY 1) l
          USING (campaign_id, version)
        GROUP BY 1, 2""")
    db.execute("CREATE TEMP TABLE current AS SELECT campaign_id, version, part FROM chosen "
               "WHERE NOT removed")
    present = {str(row[0]) for row in db.execute("DESCRIBE all_campaigns").fetchall()}
    sitting = ", ".join(SITTING_OF[c] if c in present else SITTING_OF[c].replace(
        f"a.{c}", "NULL") for c in parts.SITTING_COLUMNS)
    columns = ", ".join("a." + c for c in parts.CAMPAIGN_COLUMNS)
    db.execute(f"CREATE VIEW campaigns AS SELECT {columns}, {sitting} "
               "FROM all_campaigns a JOIN current USING (campaign_id, version, part)")
    wanted = {name for (name,) in db.execute("SELECT DISTINCT part FROM current").fetchall()}
    for table in TABLES[1:]:
        files = [p.table(table) for p in listed if p.name in wanted and p.table(table).exists()]
        if not files:
            db.execute(f"CREATE VIEW {table} AS SELECT * FROM ({_empty(table)})")
            continue
        db.execute(
            f"CREATE VIEW {table} AS SELECT t.* EXCLUDE (filename, version) FROM "
            f"read_parquet({_files(files)}, filename = true, union_by_name = true) t "
            f"JOIN current c ON t.campaign_id = c.campaign_id AND t.version = c.version "
            f"AND {PART_OF.replace('filename', 't.filename')} = c.part")


def part_rows(db: duckdb.DuckDBPyConnection, root: Path, table: str, names: list[str]
              ) -> str:
    """SQL for the rows of `table` in the named parts that are their campaign's chosen
    version (the newest version, from the newest part holding it), with their version:
    what a merge copies."""
    files = [part.table(table) for part in parts.live_parts(root)
             if part.name in set(names) and part.table(table).exists()]
    if table == "campaigns":
        listed = ", ".join("'" + n.replace("'", "''") + "'" for n in names) or "''"
        return ("SELECT a.* EXCLUDE (part) FROM all_campaigns a JOIN chosen c "
                f"USING (campaign_id, version, part) WHERE a.part IN ({listed})")
    if not files:
        return ""
    return (f"SELECT t.* EXCLUDE (filename) FROM read_parquet({_files(files)}, filename = "
            "true, union_by_name = true) t JOIN chosen c ON t.campaign_id = c.campaign_id "
            f"AND t.version = c.version AND {PART_OF.replace('filename', 't.filename')} = "
            "c.part")


def _empty(table: str) -> str:
    columns = {"labels": "campaign_id VARCHAR, key VARCHAR, value VARCHAR",
               "runs": "campaign_id VARCHAR, target VARCHAR, workload VARCHAR, op VARCHAR, "
                       "metric VARCHAR, value DOUBLE, \"primary\" BOOLEAN",
               "cells": "campaign_id VARCHAR, target VARCHAR, workload VARCHAR, op VARCHAR, "
                        "metric VARCHAR, geomean DOUBLE"}[table]
    names = ", ".join(f"NULL::{c.split()[1]} AS {c.split()[0]}" for c in columns.split(", "))
    return f"SELECT {names} WHERE false"


def _empty_views(db: duckdb.DuckDBPyConnection) -> None:
    names = ", ".join(f"NULL::VARCHAR AS {c}" for c in [*parts.CAMPAIGN_COLUMNS,
                                                         *parts.SITTING_COLUMNS])
    db.execute(f"CREATE VIEW campaigns AS SELECT {names} WHERE false")
    for table in TABLES[1:]:
        db.execute(f"CREATE VIEW {table} AS {_empty(table)}")
    db.execute("CREATE VIEW metrics AS SELECT NULL::VARCHAR AS campaign_id WHERE false")


def _legacy_views(db: duckdb.DuckDBPyConnection, file: Path) -> None:
    """A single-file catalogue of an earlier fslab, attached read-only."""
    quoted = str(file).replace("'", "''")
    db.execute(f"ATTACH '{quoted}' AS legacy (READ_ONLY)")
    for table in TABLES:
        db.execute(f"CREATE VIEW {table} AS SELECT * FROM legacy.{table}")


def _metrics_view(db: duckdb.DuckDBPyConnection) -> None:
    """The metrics view over every recorded campaign's metrics.parquet that can be read
    now (a directory that is gone drops out of the view, not the catalogue)."""
    paths = [row[0] for row in db.execute("SELECT path FROM campaigns ORDER BY path").fetchall()]
    files = [f"{p}/metrics.parquet" for p in paths
             if "://" in p or Path(p, "metrics.parquet").exists()]
    if not files:
        db.execute("CREATE VIEW metrics AS SELECT NULL::VARCHAR AS campaign_id WHERE false")
        return
    listed = ", ".join("'" + f.replace("'", "''") + "'" for f in files)
    db.execute(
        "CREATE VIEW metrics AS SELECT c.campaign_id, m.* EXCLUDE (filename) "
        f"FROM read_parquet([{listed}], union_by_name = true, filename = true) m "
        "JOIN campaigns c ON m.filename = c.path || '/metrics.parquet'")


def campaigns(path: Path | None) -> pd.DataFrame:
    """Every campaign with its labels, oldest first."""
    with connect(path) as db:
        return db.execute("SELECT * FROM campaigns ORDER BY started, campaign_id").df()


def query(path: Path | None, sql: str) -> pd.DataFrame:
    """A read-only query over the catalogue's tables and views."""
    import duckdb

    with connect(path, metrics="metrics" in sql.lower()) as db:
        try:
            kinds = {statement.type for statement in db.extract_statements(sql)}
            if not kinds <= {duckdb.StatementType.SELECT, duckdb.StatementType.EXPLAIN}:
                raise UserError("query failed: the catalogue is read-only here (SELECT only; "
                                "`fslab history add` and `remove` change it)")
            return db.execute(sql).df()
        except duckdb.Error as exc:
            raise UserError(f"query failed: {str(exc).splitlines()[0]}") from exc


def counts(path: Path | None) -> dict[str, int]:
    """Rows per table (what adding the same directory twice must not change)."""
    with connect(path) as db:
        return {t: int(db.execute(f"SELECT count(*) FROM {t}").fetchone()[0])  # type: ignore[index]
                for t in TABLES}


SERIES_KEYS = ("machine_key", "target", "target_signature", "workload",
               "workload_signature", "op", "metric")


def series_points(path: Path | None, by: str | None = None, across_machines: bool = False,
                  metrics: list[str] | None = None) -> pd.DataFrame:
    """One row per point of every series (history/series.py), summarised by DuckDB where
    the rows lie: SERIES_KEYS, the point's label (the campaigns' value of the label `by`,
    else their start), its campaigns, and over its runs (each run's value the mean of its
    samples, on the log scale) n, mean and SD of the logs, disturbed runs; each
    workload's primary metric, or `metrics`; positive values only."""
    wanted = "metric IN (SELECT unnest($metrics))" if metrics else '"primary"'
    machine = ("''" if across_machines else
               "concat_ws('|', max(CASE WHEN key = 'host' THEN value END), "
               "max(CASE WHEN key = 'cpu_model' THEN value END), "
               "max(CASE WHEN key = 'disk_model' THEN value END))")
    label = "max(CASE WHEN key = $by THEN value END)" if by else "NULL"
    sql = f"""
        WITH per_run AS (
            SELECT campaign_id, run_id, target, target_signature, workload,
                   workload_signature, op, metric, first(unit) AS unit,
                   first(better) AS better, ln(avg(value)) AS log,
                   max(disturbed::INTEGER) AS disturbed
            FROM runs WHERE {wanted} AND value > 0
            GROUP BY ALL),
        named AS (
            SELECT campaign_id, {machine} AS machine_key, {label} AS by_label
            FROM labels GROUP BY campaign_id),
        placed AS (
            SELECT p.*, coalesce(n.machine_key, '') AS machine_key, c.machine,
                   {'n.by_label' if by else 'c.started'} AS order_label
            FROM per_run p JOIN campaigns c USING (campaign_id)
            LEFT JOIN named n USING (campaign_id))
        SELECT {', '.join(SERIES_KEYS)}, order_label, count(*) AS n, avg(log) AS mean,
               stddev_samp(log) AS sd, sum(disturbed) AS disturbed,
               first(machine) AS machine, first(unit) AS unit, first(better) AS better,
               list(DISTINCT campaign_id ORDER BY campaign_id) AS campaigns
        FROM placed WHERE order_label IS NOT NULL
        GROUP BY {', '.join(SERIES_KEYS)}, order_label"""
    parameters: dict[str, object] = {}
    if metrics:
        parameters["metrics"] = list(metrics)
    if by:
        parameters["by"] = by
    with connect(path) as db:
        found = db.execute(sql, parameters).df()
        if by and found.empty and db.execute(
                "SELECT count(*) FROM runs").fetchone()[0]:  # type: ignore[index]
            raise UserError(f"no campaign in the catalogue has the label {by!r}; "
                            "`fslab history list` shows the labels")
    return found

