"""`fslab import`: a results directory from fio JSON, dd logs and bonnie++ CSV made elsewhere.

Each file is a run: worker processes parse batches of files (the parse stage,
parsers/registry.py, as `fslab reparse` runs it) into columnar batches of metrics rows,
then keep a copy of each file beside its run record (runs/import-NNNNN.zip, so `fslab
reparse` can parse them again) while this process analyses the rows in memory
(api.import_results). What a file's path says (file system, iteration, workload …) is
import_paths.py. A file that cannot be read is reported by name with the reason; the
rest is imported.
"""

from __future__ import annotations

import csv
import gc
import io
import json
import os
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from fslab.analysis.pipeline import Inputs, load_steps
from fslab.core.campaign_settings import CampaignSettings
from fslab.core.environment_record import Environment
from fslab.core.errors import UserError
from fslab.core.metrics import (
    Measurement,
    add_rows,
    empty_columns,
    metrics_frame,
    metrics_schema,
    metrics_table,
)
from fslab.core.record import RunRecord
from fslab.ingest.paths import (
    compile_pattern,
    iteration_of,
    mismatch,
    path_fields,
    relative_path,
)
from fslab.parsers.fio_kinds import IMPORTED_PREFIX
from fslab.parsers.raw_files import MemoryFiles, RawOutputError
from fslab.parsers.registry import parse_run
from fslab.results.store import RUN_RECORD, ResultsDir, record_json, write_atomic

CHUNK = 256  # files per worker task (and per archive)
File = tuple[str, str, str | None]  # import root, file, pattern
ENVIRONMENT = Environment(imported=True,
                          note="results collected elsewhere: environment unknown to fslab")


@dataclass
class ImportReport:
    """What was imported, and which files were not, with the reason."""

    imported: int = 0
    rows: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)


def discover(paths: list[Path]) -> Iterator[tuple[str, str]]:
    """(root, file) for every regular file under the given paths."""
    for path in paths:
        if path.is_file():
            yield str(path.parent), str(path)
        elif path.is_dir():
            for directory, _, names in os.walk(path):
                for name in sorted(names):
                    yield str(path), os.path.join(directory, name)
        else:
            raise UserError(f"{path}: no such file or directory")


class ReadFile(NamedTuple):
    """What one file gave: its kind (fio, dd, bonnie), what its path says, the tool's
    name, its rows, and the size and modification time of what was parsed."""

    kind: str
    fields: dict[str, str]
    tool: str
    measurements: list[Measurement]
    version: tuple[int, int]


def read_one(args: tuple[str, str, str | None]) -> tuple[str, ReadFile | None, str]:
    """Parse one file: (relative path, record or None, reason when None).

    One bad file never costs the others: whatever goes wrong reading it (a parser bug
    included) becomes that file's reason."""
    root, file, pattern = args
    relative = relative_path(root, file)
    try:
        return _read_one(root, file, pattern, relative)
    except UserError as exc:
        return relative, None, str(exc)
    except Exception as exc:  # isolation is the point: name the file and go on
        return relative, None, f"unreadable ({type(exc).__name__}: {exc})"


def _read_one(root: str, file: str, pattern: str | None,
              relative: str) -> tuple[str, ReadFile | None, str]:
    try:
        with open(file, "rb") as handle:
            raw = handle.read()
            version = _version(handle)
    except OSError as exc:
        return relative, None, exc.strerror or str(exc)
    try:  # the parse stage, as `fslab reparse` will run it on the copy
        parsed = parse_run(MemoryFiles({copy_name(relative): raw}))
    except RawOutputError as exc:
        return relative, None, str(exc)
    fields = path_fields(relative, pattern)
    if fields is None:
        return relative, None, mismatch(pattern)
    if parsed.kind == "fio" and not pattern and parsed.metadata.get("jobname"):
        fields["workload"] = parsed.metadata["jobname"]
    return relative, ReadFile(parsed.kind, fields, str(parsed.metadata.get("tool", "")),
                              parsed.measurements, version), ""


def _version(handle: Any) -> tuple[int, int]:
    """(size, modification time in ns) of an open file: the same bytes while it holds."""
    info = os.fstat(handle.fileno())
    return info.st_size, info.st_mtime_ns


@dataclass
class Chunk:
    """What one worker made of a batch of files: their metrics as an Arrow table (cheap
    to send between processes, unlike ~10^5 small tuples), the files it kept (path,
    record, and size and modification time of what was parsed: the copy must be the
    same bytes) and the files it skipped (with why)."""

    number: int
    table: Any
    # file, (size, mtime) of what was parsed, run id, its record as run.json holds it
    kept: list[tuple[str, tuple[int, int], str, bytes]]
    skipped: list[tuple[str, str]]


def read_chunk(args: tuple[str, int, list[File]]) -> Chunk:
    """Parse a batch of files into one table of metrics rows and a run record each."""
    campaign, number, files = args
    columns = empty_columns()
    kept: list[tuple[str, tuple[int, int], str, bytes]] = []
    skipped: list[tuple[str, str]] = []
    for (_, file, _), (relative, found, reason) in zip(files, map(read_one, files),
                                                         strict=True):
        if found is None:
            skipped.append((relative, reason))
            continue
        record = run_record(campaign, relative, found.fields, found.kind, found.tool)
        add_file_rows(columns, record, found.measurements)
        kept.append((file, found.version, record.run_id, record_json(record)))
    return Chunk(number, metrics_table(columns, categorical=True), kept, skipped)


def archive_chunk(args: tuple[str, int, list[tuple[str, tuple[int, int], str, bytes]]]
                  ) -> None:
    """Keep a copy of each file of a parsed batch beside its run record, under <run_id>/
    in runs/import-NNNNN.zip (store.write_run_archive). The rows are in metrics.parquet
    only (the copy is their source: `fslab reparse` rebuilds them)."""
    out, number, kept = args
    runs = []
    for file, version, run_id, record in kept:
        with open(file, "rb") as handle:
            raw = handle.read()
            if _version(handle) != version or len(raw) != version[0]:
                raise UserError(f"{file} changed while it was imported: import it again")
        runs.append((run_id, {copy_name(run_id): raw, RUN_RECORD: record}))
    ResultsDir(Path(out)).write_run_archive(f"import-{number:05d}", runs)


def copy_name(relative: str) -> str:
    """The name of an imported file's copy in its run directory (never run.json)."""
    return IMPORTED_PREFIX + relative.rpartition("/")[2]


def run_record(campaign: str, relative: str, fields: dict[str, str], kind: str,
               tool: str) -> RunRecord:
    """The run record of one imported file (its path is its run id)."""
    fs = fields.get("fs", "unknown")
    return RunRecord(
        run_id=relative, campaign=campaign, target=fields.get("target") or fs, fs=fs,
        fs_impl=f"imported ({tool})" if tool else "imported",
        workload=fields.get("workload", kind),
        iteration=iteration_of(fields.get("iteration", "")),
        source=relative, kind=kind, tool=tool, fields=dict(fields))


def add_file_rows(columns: dict[str, list[Any]], record: RunRecord,
                  measurements: list[Measurement]) -> None:
    """Append the metrics rows of one imported file (a dd log's op may come from its
    path)."""
    if record.kind == "dd" and "op" in record.fields:
        measurements = [m._replace(op=record.fields["op"]) for m in measurements]
    add_rows(columns, record.identity(), measurements, record.fields.get("host", ""))


class Import:
    """An import whose files are parsed and whose copies are being archived by the
    workers: its rows can be analysed meanwhile; `finish` waits for the copies and
    writes the directory's tables (metrics.parquet last but one, the report last)."""

    def __init__(self, results: ResultsDir, campaign: CampaignSettings, parts: list[Chunk],
                 archived: list[Future[None]]) -> None:
        self.results, self.campaign, self.parts, self.archived = (results, campaign, parts,
                                                                  archived)
        self.report = ImportReport(imported=sum(len(p.kept) for p in parts),
                                   skipped=[s for p in parts for s in p.skipped])
        self._table: Any = None

    @property
    def table(self) -> Any:
        """Every imported row, as one Arrow table."""
        if self._table is None:
            import pyarrow as pa

            tables = [part.table for part in self.parts]
            self._table = pa.concat_tables(tables) if tables else \
                metrics_schema().empty_table()
        return self._table

    def inputs(self) -> Inputs:
        """The rows as the analysis reads a results directory (analysis/pipeline.py)."""
        return Inputs(metrics_frame(self.table, categorical=True), [], ENVIRONMENT,
                      self.campaign)

    def finish(self) -> ImportReport:
        """Wait for the copies, then write the campaign, environment, metrics and report."""
        for future in self.archived:
            future.result()  # a file that changed meanwhile is one clear error
        results, report = self.results, self.report
        results.write_campaign(self.campaign)
        results.write_environment(ENVIRONMENT)
        report.rows = results.write_metrics_tables([self.table])
        write_atomic(results.path / "import_errors.csv",
                     _csv([{"file": name, "reason": reason} for name, reason in report.skipped])
                     if report.skipped else "file,reason\n")
        write_atomic(results.path / "import-report.json", json.dumps(
            {"imported": report.imported, "skipped": report.skipped}, indent=1))
        return report


@contextmanager
def importing(paths: list[Path], out: Path, pattern: str | None = None,
              workers: int | None = None,
              meanwhile: Callable[[], object] | None = None) -> Iterator[Import]:
    """Parse every file under `paths` into a new results directory at `out`, and archive
    their copies while the caller works with the Import (then calls its `finish`).

    `meanwhile` runs in this process while the workers parse (e.g. importing what the
    analysis that follows needs, instead of after)."""
    if pattern:
        compile_pattern(pattern)  # a bad pattern is one clear error, before any work
    files = [(root, file, pattern) for root, file in discover(paths)]
    if not files:
        raise UserError("nothing to import: no files under " + ", ".join(map(str, paths)))
    _refuse_same_path_twice(files)
    results = ResultsDir.create(out)
    campaign = CampaignSettings.from_table({"name": out.name,
                                            "imported_from": [str(p) for p in paths],
                                            "pattern": pattern or "(guessed)"})
    chunks = [(out.name, number, files[start:start + CHUNK])
              for number, start in enumerate(range(0, len(files), CHUNK))]
    workers = workers or min(4, os.cpu_count() or 1)
    with _pool(workers if len(chunks) > 1 else 1) as pool:
        pending = pool.map(read_chunk, chunks)  # every chunk is submitted here
        if meanwhile is not None:
            meanwhile()
        parts = list(pending)
        archived = [pool.submit(archive_chunk, (str(out), part.number, part.kept))
                    for part in parts if part.kept]
        yield Import(results, campaign, parts, archived)


@contextmanager
def _pool(workers: int) -> Iterator[Executor]:
    """Worker processes, or this one alone (one worker: no process to start)."""
    if workers <= 1:
        yield _Here()
        return
    import pyarrow  # noqa: F401 - loaded once here, not once per forked worker
    with ProcessPoolExecutor(workers) as pool:
        yield pool


class _Here(Executor):
    """An executor that runs each call in this process, at once."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except Exception as exc:
            future.set_exception(exc)
        return future


def import_results(paths: list[Path], out: Path, pattern: str | None = None,
                   workers: int | None = None,
                   meanwhile: Callable[[], object] | None = None) -> ImportReport:
    """Build a results directory at `out` from files collected elsewhere (no analysis:
    api.import_results analyses while the copies are archived)."""
    with importing(paths, out, pattern, workers, meanwhile) as job:
        return job.finish()


def _refuse_same_path_twice(files: list[File]) -> None:
    """A file's path under its import root is its run id: two roots holding the same
    path would make two files one run."""
    seen: dict[str, str] = {}
    for root, file, _ in files:
        relative = relative_path(root, file)
        if relative in seen and seen[relative] != file:
            raise UserError(f"{seen[relative]} and {file} are both {relative!r} under their "
                            "import roots: import their common parent directory instead")
        seen[relative] = file


def _csv(rows: list[dict[str, object]]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(rows[0]) if rows else ["run_id"])
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


@contextmanager
def no_cycle_collection() -> Iterator[None]:
    """Python's cycle collector off for a few seconds of building ~10^5 objects (library
    imports, one row per file) that are not garbage: it ran dozens of full passes over
    them, ~5 % of an import's CPU time. Reference counting still frees everything else."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def load_analysis_libraries() -> None:
    """What the analysis imports (pandas, scipy.special, its own modules: ~0.5 s), to load
    while the files are parsed (import_results' `meanwhile`) rather than after."""
    import pandas  # noqa: F401
    import pyarrow.parquet  # noqa: F401
    import scipy.special  # noqa: F401

    load_steps()
