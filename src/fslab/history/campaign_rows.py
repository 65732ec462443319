"""A results directory's rows for the catalogue: its per-run values (the analysis' own
runs table, so the history sees the observations the verdicts saw) and its cells.

Read and joined by DuckDB straight from stats/ (runs.parquet, summary.csv's primary
questions and per-cell intervals, disturbed.csv) into one in-memory session holding the
four tables of its part, which DuckDB writes as Parquet (history/parts.py): adding a
campaign loads neither pandas nor scipy nor the analysis (0.6 s of a 1 s goal) unless its
stats/ is missing or stale (then it is analysed first).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from fslab.analysis.pipeline import analyze_results
from fslab.history.identity import Identity
from fslab.history.parts import CAMPAIGN_COLUMNS, SITTING_COLUMNS
from fslab.results.stats_files import stale_reason
from fslab.results.store import ResultsDir

if TYPE_CHECKING:
    import duckdb

CELL_KEYS = ("campaign_id", "target", "workload", "op", "metric", "unit", "better",
             "primary", "workload_signature", "target_signature")


@contextmanager
def campaign_session(directory: Path, identity: Identity, version: str
                     ) -> Iterator[duckdb.DuckDBPyConnection]:
    """A DuckDB session with the four tables of one campaign's part (history/parts.py:
    TABLES), every row with its `version`:
    campaigns  one row: id, path, name, start, machine, labels (JSON), when added,
               sitting, host and plan;
    labels     one row per label;
    runs       one row per run, metric and sample: the analysis' runs table with the
               witness' verdict (`disturbed`), whether the metric is its workload's
               primary question (`primary`, summary.csv), the signatures that say which
               cells are alike, and the campaign id;
    cells      cells_of those runs."""
    import duckdb

    stats = current_stats(directory)
    db = duckdb.connect(":memory:")
    try:
        _campaign(db, directory, identity, version)
        w_sig, t_sig = identity.workload_signatures, identity.target_signatures
        db.execute("CREATE TABLE workload_sigs (workload VARCHAR, workload_signature VARCHAR)")
        db.execute("CREATE TABLE target_sigs (target VARCHAR, target_signature VARCHAR)")
        if w_sig:
            db.executemany("INSERT INTO workload_sigs VALUES (?, ?)", list(w_sig.items()))
        if t_sig:
            db.executemany("INSERT INTO target_sigs VALUES (?, ?)", list(t_sig.items()))
        disturbed = stats / "disturbed.csv"
        flagged = (f"SELECT DISTINCT run_id FROM read_csv({_quoted(disturbed)}, "
                   "all_varchar = true) WHERE lower(disturbed) = 'true'"
                   if disturbed.exists() else "SELECT NULL::VARCHAR AS run_id WHERE false")
        db.execute(f"""
            CREATE TABLE runs AS
            SELECT r.*, r.run_id IN ({flagged}) AS disturbed,
                   coalesce(q."primary", false) AS "primary",
                   coalesce(w.workload_signature, $any) AS workload_signature,
                   coalesce(t.target_signature, '') AS target_signature,
                   $campaign AS campaign_id, $version AS version
            FROM ({_runs(stats)}) r
            LEFT JOIN ({_questions(stats)}) q USING (workload, op, metric)
            LEFT JOIN workload_sigs w ON w.workload = r.job
            LEFT JOIN target_sigs t USING (target)""",
                   {"any": w_sig.get("*", ""), "campaign": identity.campaign_id,
                    "version": version})
        cells_of(db, stats)
        yield db
    finally:
        db.close()


def _campaign(db: duckdb.DuckDBPyConnection, directory: Path, identity: Identity,
              version: str) -> None:
    """The campaigns and labels tables of the session."""
    columns = ", ".join(f"{c} VARCHAR" for c in CAMPAIGN_COLUMNS)
    sitting = ", ".join(f"{c} VARCHAR" for c in SITTING_COLUMNS)
    db.execute(f"CREATE TABLE campaigns ({columns}, version VARCHAR, removed BOOLEAN, "
               f"{sitting})")
    db.execute("INSERT INTO campaigns VALUES (?, ?, ?, ?, ?, ?, ?, ?, false, ?, ?, ?)",
               [identity.campaign_id, str(directory), identity.name, identity.started,
                identity.machine, json.dumps(identity.labels),
                time.strftime("%Y-%m-%dT%H:%M:%S%z"), version, identity.sitting,
                identity.host, identity.plan])
    db.execute("CREATE TABLE labels (campaign_id VARCHAR, key VARCHAR, value VARCHAR, "
               "version VARCHAR)")
    if identity.labels:
        db.executemany("INSERT INTO labels VALUES (?, ?, ?, ?)",
                       [[identity.campaign_id, k, v, version]
                        for k, v in sorted(identity.labels.items())])


def current_stats(directory: Path) -> Path:
    """stats/ of the directory, analysed first when missing or stale."""
    results = ResultsDir.open(directory)
    if stale_reason(results) is not None:
        analyze_results(results)
    return results.stats_dir


def _quoted(path: Path) -> str:
    return "'" + str(path).replace("'", "''") + "'"


def _runs(stats: Path) -> str:
    """The runs table (its sample column added where an older one has none)."""
    path = _quoted(stats / "runs.parquet")
    return (f"SELECT * REPLACE (coalesce(sample, 0)::BIGINT AS sample) FROM "
            f"read_parquet({path}, union_by_name = true)"
            if _has_column(stats / "runs.parquet", "sample") else
            f"SELECT *, 0::BIGINT AS sample FROM read_parquet({path})")


def _has_column(path: Path, name: str) -> bool:
    """From the file's footer, as history/identity.py reads a runs table's columns (a
    DuckDB connection of its own took 33 ms here, pyarrow 0.6 ms)."""
    import pyarrow.parquet as pq

    return name in pq.read_schema(path).names


def _questions(stats: Path) -> str:
    """Each workload's primary question (summary.csv's `primary`, from analysis format 6
    on; older stats/ are analysed again, as they are stale)."""
    return (f"SELECT DISTINCT workload, op, metric, true AS \"primary\" FROM "
            f"read_csv({_quoted(stats / 'summary.csv')}, all_varchar = true) "
            "WHERE lower(\"primary\") = 'true'")


def cells_of(db: duckdb.DuckDBPyConnection, stats: Path) -> None:
    """The table `cells` of the session's `runs`: per target × workload × op × metric,
    the summary's own n, geometric mean and 95 % interval on the log scale (stats/
    summary.csv: analysis.cells.stats.log_ci; no interval where the summary's is not on
    the log scale) and the runs the witness saw disturbed."""
    keys = ", ".join(f'"{k}"' for k in CELL_KEYS)

    def number(column: str) -> str:
        return f"TRY_CAST(NULLIF({column}, '') AS DOUBLE)"

    db.execute(f"""
        CREATE TABLE cells AS
        SELECT r.*, TRY_CAST(NULLIF(s.n, '') AS BIGINT) AS n,
               {number('s.geomean')} AS geomean,
               CASE WHEN s.ci_scale = 'log' THEN {number('s.ci_low')} END AS ci_low,
               CASE WHEN s.ci_scale = 'log' THEN {number('s.ci_high')} END AS ci_high
        FROM (SELECT {keys}, version,
                     count(DISTINCT run_id) FILTER (WHERE disturbed) AS disturbed
              FROM runs GROUP BY {keys}, version) r
        LEFT JOIN read_csv({_quoted(stats / 'summary.csv')}, all_varchar = true) s
          USING (target, workload, op, metric)""")
