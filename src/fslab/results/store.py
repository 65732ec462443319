"""The results directory: raw artifacts beside parsed values, written atomically.

    DIR/format.json        format version (refused when newer than this code)
    DIR/campaign.toml      the resolved campaign (seed included)
    DIR/environment.json   host, kernel, CPU, RAM, tool versions
    DIR/runs/<run_id>/     raw output (job.fio, fio.json, stderr.txt, ...) and run.json
                           (core/record.RunRecord)
    DIR/runs/<name>.zip    runs packed in one file, the same <run_id>/ entries inside: an
                           import's files (a copy of each, and its run.json), 256 a file
    DIR/metrics.parquet    the tidy metrics table, rebuilt after every run
    DIR/stats/             written by `fslab analyze`

A run counts as done only once its run.json exists; run.json is written last, by rename,
so a run killed in flight leaves no run.json and is redone on --resume.
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

import orjson

from fslab.core.campaign_settings import CampaignSettings
from fslab.core.environment_record import Environment
from fslab.core.errors import UserError
from fslab.core.metrics import COLUMNS, factor_columns, metrics_frame, metrics_schema
from fslab.core.record import RunRecord
from fslab.core.units import format_bytes
from fslab.parsers.raw_files import DirFiles, RawFiles
from fslab.results.format_history import FORMAT
from fslab.results.legacy_cells import add_cell_columns, with_cell_fields
from fslab.results.legacy_failures import with_failure
from fslab.results.runs_table import runs_table

# Below this much free space on the results disk a campaign stops (a run's raw output
# and record need a few MiB; a metrics table rewritten per run needs its size again).
RESULTS_MIN_FREE = 8 * 1024**2

# Errors of a results directory that cannot be written any more (a read-only remount, a
# permission taken away, a network share gone): the campaign stops there in one line.
UNWRITABLE = frozenset({errno.EROFS, errno.EACCES, errno.EPERM, errno.EIO, errno.ENOTCONN,
                        errno.ESTALE, errno.ENODEV, errno.ENOENT})

CELL_FIELDS = 5  # the first format whose rows carry target_base and job
FAILURE_KINDS = 6  # the first format whose failed runs carry their kind
RUN_RECORD = "run.json"
CAMPAIGN_FILE = "campaign.toml"  # the resolved campaign (core/campaign_settings.py)
# DIR/sittings/N: a further sitting of the campaign in DIR (fslab run --again, tune --again)
SITTINGS = "sittings"


def record_json(record: RunRecord) -> bytes:
    """A run record as run.json holds it (for an archive: store.write_run_archive)."""
    return orjson.dumps(record.to_json(), default=str)


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


def write_campaign(directory: Path, settings: CampaignSettings) -> None:
    """DIR/campaign.toml: the one writer of it (a run's, an aging run's, an import's, a
    tune's own: core.campaign_settings.CampaignSettings.to_toml)."""
    write_atomic(directory / CAMPAIGN_FILE, settings.to_toml())


class ResultsDir:
    """A results directory on disk."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.version = FORMAT.current  # of a directory opened: what format.json says
        self._archives: dict[str, zipfile.ZipFile] = {}  # opened by raw_output
        self._archive_names: dict[str, dict[str, list[str]]] = {}  # per run, by raw_files

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
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise UserError(f"cannot create the results directory {path}: "
                            f"{exc.strerror}") from None
        results = cls(path)
        with results.room():
            results.runs_dir.mkdir(exist_ok=True)
            write_json(path / FORMAT.marker, FORMAT.stamp())
        return results

    @classmethod
    def open(cls, path: Path) -> ResultsDir:
        """Open an existing results directory written by this or an older fslab."""
        if not (path / FORMAT.marker).exists():
            raise UserError(f"{path} is not an fslab results directory (no format.json)")
        results = cls(path)
        results.version, _ = FORMAT.read(path)
        return results

    def write_campaign(self, settings: CampaignSettings) -> None:
        write_campaign(self.path, settings)

    def campaign_path(self) -> Path:
        return self.path / CAMPAIGN_FILE

    def campaign_settings(self) -> CampaignSettings:
        """campaign.toml, typed (the defaults for an import's, which has none)."""
        return CampaignSettings.read(self.campaign_path())

    def write_environment(self, environment: Environment) -> None:
        write_json(self.path / "environment.json", environment.to_json())

    def environment(self) -> Environment:
        """environment.json, typed (empty where there is none)."""
        path = self.path / "environment.json"
        return Environment.from_json(json.loads(path.read_text()) if path.exists() else {})

    @contextmanager
    def room(self) -> Iterator[None]:
        """A block that writes here: a results directory that cannot take the write — a
        full disk (found before, below RESULTS_MIN_FREE, or while writing), a file system
        remounted read-only, a permission taken away, a share that went — stops the
        campaign with one line naming the cause (resources are released on the way out;
        finished runs stay; --resume continues once it can be written)."""
        free = shutil.disk_usage(self.path).free
        if free < RESULTS_MIN_FREE:
            raise UserError(self._full_message(f"{format_bytes(free)} free"))
        if not os.access(self.path, os.W_OK):  # read-only or not ours: before any write
            raise UserError(self._unwritable_message(os.strerror(errno.EROFS) if
                                                     _read_only(self.path) else
                                                     os.strerror(errno.EACCES)))
        try:
            yield
        except OSError as exc:
            if not self._about_us(exc):  # a target's or a tool's: the run's to record
                raise
            if exc.errno in (errno.ENOSPC, errno.EDQUOT):
                raise UserError(self._full_message(exc.strerror or "no space")) from None
            if exc.errno in UNWRITABLE:
                raise UserError(self._unwritable_message(os.strerror(exc.errno))) from None
            raise

    def _about_us(self, exc: OSError) -> bool:
        """Whether an error is this directory's: it names a file in it, or it names none
        (pyarrow's) while the directory cannot be written now."""
        if exc.filename is not None:
            return Path(str(exc.filename)).absolute().is_relative_to(self.path.absolute())
        return exc.errno in (errno.ENOSPC, errno.EDQUOT) or not os.access(self.path, os.W_OK)

    def _full_message(self, detail: str) -> str:
        return (f"the results directory {self.path} is out of space ({detail}); "
                f"finished runs are kept: free some space, then run the same command with "
                f"--resume")

    def _unwritable_message(self, cause: str) -> str:
        return (f"the results directory {self.path} cannot be written ({cause}); finished "
                "runs are kept: make it writable, then run the same command with --resume")

    def run_dir(self, run_id: str) -> Path:
        """Where a run's raw output and record live (an imported file's run id is its
        path, so "/" and other unsafe characters are %-escaped; fslab's own ids have none)."""
        return self.runs_dir / quote(run_id, safe="")

    def fresh_run_dir(self, run_id: str) -> Path:
        """An empty directory for a run; leftovers of an interrupted attempt are removed."""
        run_dir = self.run_dir(run_id)
        if run_dir.exists():
            shutil.rmtree(run_dir)
        run_dir.mkdir(parents=True)
        return run_dir

    def save_run(self, record: RunRecord) -> None:
        """Mark a run done by writing its record (status, reason, values) last."""
        write_json(self.run_dir(record.run_id) / RUN_RECORD, record.to_json())

    def write_run_archive(self, name: str, runs: list[tuple[str, dict[str, bytes]]]
                          ) -> None:
        """Runs packed in runs/<name>.zip: each run's files under <run_id>/, as a run
        directory holds them (its record, run.json, among them: `record_json`). Why not a
        directory per run: an import has one run per file, and creating an inode cost
        ~0.9 ms of CPU on the machines fslab was built on (a rename or hard link
        ~0.01 ms); three per imported file made an import of 10^4 files five times
        slower. Written whole, then renamed: an archive counts only once complete."""
        tmp = self.runs_dir / f".{name}.zip.tmp-{os.getpid()}"
        with tmp.open("wb") as handle:
            with zipfile.ZipFile(handle, "w", zipfile.ZIP_STORED) as archive:
                for run_id, files in runs:
                    folder = quote(run_id, safe="")
                    for file_name, data in files.items():
                        archive.writestr(f"{folder}/{file_name}", data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, self.runs_dir / f"{name}.zip")

    def raw_output(self, record: RunRecord, name: str) -> bytes:
        """One raw file a run kept (in its directory, or in the archive it came from)."""
        if not record.archive:
            return (self.run_dir(record.run_id) / name).read_bytes()
        return self._archive(record.archive).read(f"{quote(record.run_id, safe='')}/{name}")

    def _archive(self, name: str) -> zipfile.ZipFile:
        archive = self._archives.get(name)
        if archive is None:
            archive = self._archives[name] = zipfile.ZipFile(self.runs_dir / name)
        return archive

    def raw_files(self, record: RunRecord) -> RawFiles:
        """The raw files a run kept, for the parse stage (parsers/registry.py)."""
        if not record.archive:
            return DirFiles(self.run_dir(record.run_id))
        if record.archive not in self._archive_names:
            listing: dict[str, list[str]] = {}
            for name in self._archive(record.archive).namelist():
                run, _, file = name.partition("/")
                listing.setdefault(run, []).append(file)
            self._archive_names[record.archive] = listing
        names = self._archive_names[record.archive].get(quote(record.run_id, safe=""), [])
        return _ArchivedRun(self, record, sorted(names))

    def close(self) -> None:
        """Close the archives raw_output opened."""
        for archive in self._archives.values():
            archive.close()
        self._archives.clear()
        self._archive_names.clear()

    def run_records(self) -> Iterator[RunRecord]:
        """Every finished run's record, in run-id order; a damaged one is skipped and
        named in `damaged` (one bad run directory never costs the others)."""
        self.damaged: dict[str, str] = {}
        if not self.runs_dir.is_dir():
            return
        for run_dir in sorted(self.runs_dir.iterdir()):
            if run_dir.suffix == ".zip" and run_dir.is_file():
                yield from self._archived_records(run_dir)
                continue
            record_path = run_dir / RUN_RECORD
            if not record_path.exists():
                continue
            try:
                record = RunRecord.from_json(json.loads(record_path.read_text()))
            except (OSError, ValueError, UnicodeDecodeError) as exc:
                self.damaged[run_dir.name] = f"{RUN_RECORD} unreadable: {exc}"
                continue
            yield self._upgraded(record)

    def _archived_records(self, path: Path) -> Iterator[RunRecord]:
        """The records packed in one archive (a damaged one is named, not fatal)."""
        try:
            with zipfile.ZipFile(path) as archive:
                names = [n for n in archive.namelist() if n.endswith(f"/{RUN_RECORD}")]
                texts = [(name, archive.read(name)) for name in names]
        except (OSError, zipfile.BadZipFile) as exc:
            self.damaged[path.name] = f"unreadable archive: {exc}"
            return
        for name, text in texts:
            try:
                record = RunRecord.from_json(json.loads(text))
            except (ValueError, UnicodeDecodeError) as exc:
                self.damaged[f"{path.name}/{name}"] = f"{RUN_RECORD} unreadable: {exc}"
                continue
            record.archive = path.name
            yield self._upgraded(record)

    def _upgraded(self, record: RunRecord) -> RunRecord:
        """A record as the current format has it (older formats: the kind of a failure)."""
        if self.version < FAILURE_KINDS:
            return with_failure(record)
        return record

    def completed_run_ids(self) -> set[str]:
        return {record.run_id for record in self.run_records()}

    def metric_rows(self) -> list[dict[str, object]]:
        """Every metrics row of every finished run."""
        rows = [row for record in self.run_records() for row in record.metrics]
        if self.version < CELL_FIELDS:
            rows = [with_cell_fields(row) for row in rows]
        return rows

    def rebuild_metrics(self, rows: list[dict[str, object]] | None = None) -> int:
        """Rewrite metrics.parquet from `rows` (default: every run record); return the count.

        Written with pyarrow alone: the runner does this after every run and should not
        pay for importing pandas.
        """
        import pyarrow as pa

        if rows is None:
            rows = self.metric_rows()
        factors = factor_columns(dict.fromkeys(key for row in rows for key in row))
        return self._write_metrics(pa.Table.from_pylist(rows, schema=metrics_schema(factors)))

    def write_metrics_tables(self, tables: list[Any]) -> int:
        """Write metrics.parquet from Arrow tables of `metrics_schema()` (an import's
        workers each build one)."""
        import pyarrow as pa

        return self._write_metrics(pa.concat_tables(tables) if tables
                                   else metrics_schema().empty_table())

    def _write_metrics(self, table: Any) -> int:
        import pyarrow.parquet as pq

        tmp = self.path / f".metrics.parquet.tmp-{os.getpid()}"
        pq.write_table(table, tmp, store_schema=False)  # text read back as text
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
            first = next(iter(self.run_records()), None)
            if first is None:
                raise UserError(f"{self.metrics_path} is damaged ({type(exc).__name__}) "
                                "and there are no run records to rebuild it from") from None
            if first.imported:  # an import's rows are in metrics.parquet alone
                raise UserError(f"{self.metrics_path} is damaged ({type(exc).__name__}): "
                                f"`fslab reparse {self.path}` rebuilds it from the copies "
                                "of the imported files") from None
        self.rebuild_metrics()  # a run's record keeps its rows: the table comes back
        return self._read_metrics(categorical)

    def _read_metrics(self, categorical: bool) -> Any:
        import pyarrow.parquet as pq

        table = pq.read_table(self.metrics_path, read_dictionary=[
            f.name for f in metrics_schema() if f.type == "string"] if categorical else None)
        if self.version < CELL_FIELDS:
            table = add_cell_columns(table)
        missing = set(COLUMNS) - set(table.column_names)
        if missing:
            raise ValueError(f"columns missing: {', '.join(sorted(missing))}")
        return metrics_frame(table)  # dictionary columns read as such: categoricals

    def run_record(self, run_id: str) -> RunRecord | None:
        """One finished run's record (a campaign's run directory), or None."""
        path = self.run_dir(run_id) / RUN_RECORD
        try:
            return self._upgraded(RunRecord.from_json(json.loads(path.read_text())))
        except (OSError, ValueError):
            return None

    def load_runs(self) -> Any:
        """One row per finished run (results/runs_table.py)."""
        return runs_table(self.run_records(), self.path / "runs.csv")


def _read_only(path: Path) -> bool:
    return bool(os.statvfs(path).f_flag & os.ST_RDONLY)


class _ArchivedRun:
    """One imported run's files inside its import archive."""

    def __init__(self, results: ResultsDir, record: RunRecord, names: list[str]) -> None:
        self.results, self.record, self._names = results, record, names
        self._read: dict[str, bytes] = {}  # detectors and the parser read the same file

    def names(self) -> list[str]:
        return self._names

    def read(self, name: str) -> bytes:
        if name not in self._read:
            self._read[name] = self.results.raw_output(self.record, name)
        return self._read[name]

