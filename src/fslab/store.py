"""The results directory: raw artifacts beside parsed values, written atomically.

    DIR/format.json        format version (refused when newer than this code)
    DIR/campaign.toml      the resolved campaign (seed included)
    DIR/environment.json   host, kernel, CPU, RAM, tool versions
    DIR/runs/<run_id>/     job.fio, fio.json, stderr.txt, run.json (status + values)
    DIR/metrics.parquet    the tidy metrics table, rebuilt after every run
    DIR/stats/             written by `fslab analyze`

A run counts as done only once its run.json exists; run.json is written last, by rename,
so a run killed in flight leaves no run.json and is redone on --resume.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import tomli_w

from fslab.errors import UserError
from fslab.metrics import COLUMNS

# Results format history:
#   1 — first version: runs/<id>/run.json with measurements, metrics.parquet
#       (columns of fslab.metrics.COLUMNS, including sample and note).
#   2 — one observation per fio section: a multi-section job's rows carry the workload
#       `<workload>/<section>` (run.json's workload_metadata.observations says which jobs
#       formed which); stats/pairwise.csv `ratio` is a ratio of geometric means from the
#       log-scale model (was: of arithmetic means, bootstrap CI), with `test` naming the
#       model; summary.csv gains cache_bound and cache_bound_reason; DIR/ceiling/ holds
#       the raw-device runs. Version 1 directories read as before.
FORMAT_VERSION = 2
FORMAT_NOTES = {
    2: "one observation per fio section; pairwise ratio = ratio of geometric means "
       "(log-scale model, Bonferroni); cache_bound in summary.csv",
}
RUN_RECORD = "run.json"


def metrics_schema() -> Any:
    """The Arrow schema of metrics.parquet, column by column as in metrics.COLUMNS."""
    import pyarrow as pa

    types = {"iteration": pa.int64(), "value": pa.float64(), "sample": pa.int64()}
    return pa.schema([(name, types.get(name, pa.string())) for name in COLUMNS])


def metrics_table(columns: dict[str, list[Any]]) -> Any:
    """An Arrow table of metrics rows from one list per column (an import's ~10^5 rows
    are built column by column: far cheaper than a dict per row)."""
    import pyarrow as pa

    schema = metrics_schema()
    return pa.table([pa.array(columns[field.name], field.type) for field in schema],
                    schema=schema)


def write_atomic(path: Path, data: bytes | str) -> None:
    """Write a file so that readers see the old or the new content, never a torn one."""
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    with tmp.open("wb") as handle:
        handle.write(data.encode() if isinstance(data, str) else data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


def write_json(path: Path, data: Any) -> None:
    write_atomic(path, json.dumps(data, indent=2, default=str) + "\n")


class ResultsDir:
    """A results directory on disk."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    @property
    def runs_dir(self) -> Path:
        return self.path / "runs"

    @property
    def stats_dir(self) -> Path:
        return self.path / "stats"

    @property
    def metrics_path(self) -> Path:
        return self.path / "metrics.parquet"

    @classmethod
    def create(cls, path: Path) -> ResultsDir:
        """Make a new results directory; refuse one that already holds results."""
        if (path / "format.json").exists() or (path.is_dir() and any(path.iterdir())):
            raise UserError(
                f"{path} already holds results: pass --resume to continue it, or another --out"
            )
        path.mkdir(parents=True, exist_ok=True)
        results = cls(path)
        results.runs_dir.mkdir(exist_ok=True)
        write_json(path / "format.json", {"format": FORMAT_VERSION,
                                          "changes": FORMAT_NOTES[FORMAT_VERSION]})
        return results

    @classmethod
    def open(cls, path: Path) -> ResultsDir:
        """Open an existing results directory written by this or an older fslab."""
        marker = path / "format.json"
        if not marker.exists():
            raise UserError(f"{path} is not an fslab results directory (no format.json)")
        try:
            found = json.loads(marker.read_text())
            version = found.get("format", 0) if isinstance(found, dict) else None
            if not isinstance(version, int) or isinstance(version, bool):
                raise ValueError(f"format is {version!r}, not a version number")
        except (OSError, ValueError, UnicodeDecodeError) as exc:
            raise UserError(f"{marker} is damaged ({exc}); it should read "
                            f'{{"format": {FORMAT_VERSION}}}') from None
        if version > FORMAT_VERSION:
            raise UserError(
                f"{path} was written by a newer fslab (format {version}; this one reads up to "
                f"{FORMAT_VERSION}): upgrade fslab"
            )
        return cls(path)

    def write_campaign(self, data: dict[str, Any]) -> None:
        write_atomic(self.path / "campaign.toml", tomli_w.dumps(data))

    def campaign_path(self) -> Path:
        return self.path / "campaign.toml"

    def write_environment(self, data: dict[str, Any]) -> None:
        write_json(self.path / "environment.json", data)

    def environment(self) -> dict[str, Any]:
        path = self.path / "environment.json"
        return json.loads(path.read_text()) if path.exists() else {}

    def fresh_run_dir(self, run_id: str) -> Path:
        """An empty directory for a run; leftovers of an interrupted attempt are removed."""
        run_dir = self.runs_dir / run_id
        if run_dir.exists():
            shutil.rmtree(run_dir)
        run_dir.mkdir(parents=True)
        return run_dir

    def save_run(self, run_id: str, record: dict[str, Any]) -> None:
        """Mark a run done by writing its record (status, reason, values) last."""
        write_json(self.runs_dir / run_id / RUN_RECORD, record)

    def run_records(self) -> Iterator[dict[str, Any]]:
        """Every finished run's record, in run-id order; a damaged one is skipped and
        named in `damaged` (one bad run directory never costs the others)."""
        self.damaged: dict[str, str] = {}
        if not self.runs_dir.is_dir():
            return
        for run_dir in sorted(self.runs_dir.iterdir()):
            record_path = run_dir / RUN_RECORD
            if not record_path.exists():
                continue
            try:
                record = json.loads(record_path.read_text())
                if not isinstance(record, dict) or not isinstance(record.get("run_id"), str):
                    raise ValueError("not a run record")
            except (OSError, ValueError, UnicodeDecodeError) as exc:
                self.damaged[run_dir.name] = f"{RUN_RECORD} unreadable: {exc}"
                continue
            yield record

    def completed_run_ids(self) -> set[str]:
        return {record["run_id"] for record in self.run_records()}

    def metric_rows(self) -> list[dict[str, Any]]:
        """Every metrics row of every finished run."""
        return [row for record in self.run_records() for row in record.get("metrics", [])
                if isinstance(row, dict)]

    def rebuild_metrics(self, rows: list[dict[str, Any]] | None = None) -> int:
        """Rewrite metrics.parquet from `rows` (default: every run record); return the count.

        Written with pyarrow alone: the runner does this after every run and should not
        pay for importing pandas.
        """
        import pyarrow as pa

        if rows is None:
            rows = self.metric_rows()
        return self._write_metrics(pa.Table.from_pylist(rows, schema=metrics_schema()))

    def write_metrics_tables(self, tables: list[Any]) -> int:
        """Write metrics.parquet from Arrow tables of `metrics_schema()` (an import's
        workers each build one)."""
        import pyarrow as pa

        return self._write_metrics(pa.concat_tables(tables) if tables
                                   else metrics_schema().empty_table())

    def _write_metrics(self, table: Any) -> int:
        import pyarrow.parquet as pq

        tmp = self.path / f".metrics.parquet.tmp-{os.getpid()}"
        pq.write_table(table, tmp)
        os.replace(tmp, self.metrics_path)
        return table.num_rows

    def load_metrics(self, categorical: bool = False) -> Any:
        """The metrics table as a pandas DataFrame.

        `categorical` reads the text columns as pandas categoricals: the analysis groups
        and filters ~10^5 rows by them many times, several times faster on integer codes.
        """
        import pandas as pd

        if not self.metrics_path.exists():
            return pd.DataFrame(columns=list(COLUMNS))
        try:
            return self._read_metrics(categorical)
        except Exception as exc:  # pyarrow raises its own types for a damaged file
            if not any(True for _ in self.run_records()):
                raise UserError(f"{self.metrics_path} is damaged ({type(exc).__name__}) "
                                "and there are no run records to rebuild it from") from None
        self.rebuild_metrics()  # a run's record keeps its rows: the table comes back
        return self._read_metrics(categorical)

    def _read_metrics(self, categorical: bool) -> Any:
        import pyarrow.parquet as pq

        table = pq.read_table(self.metrics_path, read_dictionary=[
            f.name for f in metrics_schema() if f.type == "string"] if categorical else None)
        missing = set(COLUMNS) - set(table.column_names)
        if missing:
            raise ValueError(f"columns missing: {', '.join(sorted(missing))}")
        return table.to_pandas()

    def load_runs(self) -> Any:
        """One row per finished run: status and reason (failed runs included)."""
        import pandas as pd

        keys = ("run_id", "iteration", "target", "fs", "workload", "status", "reason")
        rows = [{k: record.get(k) for k in keys} for record in self.run_records()]
        imported = self.path / "runs.csv"  # `fslab import` writes one index, not run dirs
        if not rows and imported.exists():
            return pd.read_csv(imported, keep_default_na=False)[list(keys)]
        return pd.DataFrame(rows, columns=list(keys))
