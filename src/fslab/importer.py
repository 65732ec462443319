"""`fslab import`: a results directory from fio JSON, dd logs and bonnie++ CSV made elsewhere.

Where a file's file system, iteration and workload come from:
- a pattern over its path relative to the import root, e.g.
  "{fs}/fio_results/{iteration}/{workload}-result.json" ({target}, {op} and {host} also
  work; "*" matches within a path component, "**" across components);
- without one, sensible guesses: the first path component naming a known file system,
  the last number in the path as the iteration, fio's job name (or the file name) as
  the workload.
A file that cannot be read is reported by name with the reason; the rest is imported.
"""

from __future__ import annotations

import csv
import functools
import gc
import io
import json
import os
import re
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fslab.errors import UserError
from fslab.metrics import Measurement, add_rows, empty_columns
from fslab.parsers.fio_kinds import IMPORTED_PREFIX
from fslab.parsers.raw_files import MemoryFiles
from fslab.parsers.registry import RawOutputError, parse_run
from fslab.run_record import RunRecord
from fslab.store import ResultsDir, write_atomic
from fslab.targets import known_kinds

# File systems a path may name besides fslab's own target kinds (known_kinds(): names
# only, no plug-in is imported), that studies use.
OTHER_FS = frozenset({"f2fs", "vfat", "jfs", "reiserfs", "nilfs2", "bcachefs", "ocfs2",
                      "nfs", "ceph", "cephfs", "lustre", "gpfs", "beegfs", "hfs"})


def known_fs() -> frozenset[str]:
    """Every file-system name a path may carry."""
    return frozenset(known_kinds()) | OTHER_FS


FIELDS = ("fs", "target", "iteration", "workload", "op", "host")
CHUNK = 256  # files per worker task
File = tuple[str, str, str | None]  # import root, file, pattern


@dataclass
class ImportReport:
    """What was imported, and which files were not, with the reason."""

    imported: int = 0
    rows: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)


@functools.lru_cache(maxsize=64)
def compile_pattern(pattern: str) -> re.Pattern[str]:
    """'{fs}/x/{iteration}/{workload}-result.json' -> a regex with named groups."""
    parts = re.split(r"(\{[a-z]+\}|\*\*/?|\*)", pattern)
    regex = ""
    for part in parts:
        if part.startswith("{") and part.endswith("}"):
            name = part[1:-1]
            if name not in FIELDS:
                raise UserError(f"bad pattern {pattern!r}: unknown field {{{name}}} "
                                f"(use {', '.join('{' + f + '}' for f in FIELDS)})")
            regex += rf"(?P<{name}>[^/]+?)"
        elif part.startswith("**"):
            regex += r"(?:.*/)?" if part.endswith("/") else r".*"
        elif part == "*":
            regex += r"[^/]*"
        else:
            regex += re.escape(part)
    return re.compile(f"^{regex}$")


def guess_fields(relative: str) -> dict[str, str]:
    """File system, iteration and workload guessed from a path (see module doc)."""
    directory, _, name = relative.rpartition("/")
    fields = dict(_guess_directory(directory))
    numbers = ITERATION.findall(name.lower()) or _directory_numbers(directory)
    if numbers:
        fields["iteration"] = numbers[-1]
    fields["workload"] = _guess_workload(name)
    return fields


# A number that reads as an iteration: "3", "iter_3", "run-3", "rep3" (the last one wins).
ITERATION = re.compile(r"(?:^|[^a-z0-9])(?:i|it|iter|iteration|run|rep)?[-_]?(\d+)(?=$|[^0-9])")


@functools.lru_cache(maxsize=4096)
def _guess_directory(directory: str) -> tuple[tuple[str, str], ...]:
    """The first directory naming a known file system gives fs and target."""
    names = known_fs()
    for part in directory.split("/") if directory else ():
        tokens = re.split(r"[-_.]", part.lower())
        known = [t for t in tokens if t in names]
        if part.lower() in names or known:
            fs = part.lower() if part.lower() in names else known[0]
            return (("fs", fs), ("target", part))
    return ()


@functools.lru_cache(maxsize=4096)
def _directory_numbers(directory: str) -> list[str]:
    return ITERATION.findall(directory.lower())


@functools.lru_cache(maxsize=4096)
def _guess_workload(name: str) -> str:
    stem = re.sub(r"(\.fio)?\.(json\+?|jsonplus|log|txt|csv|out)$", "", name)
    stem = re.sub(r"[-_.]?(result|results|output|out)$", "", stem) or stem
    # "dd-3", "seqread_run2": the number is the iteration, not part of the workload.
    return re.sub(r"[-_.]?(?:i|it|iter|iteration|run|rep)?[-_]?\d+$", "", stem) or stem


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


def read_one(args: tuple[str, str, str | None]) -> tuple[str, dict[str, Any] | None, str]:
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
              relative: str) -> tuple[str, dict[str, Any] | None, str]:
    try:
        with open(file, "rb") as handle:
            raw = handle.read()
    except OSError as exc:
        return relative, None, exc.strerror or str(exc)
    try:  # the parse stage, as `fslab reparse` will run it on the copy
        parsed = parse_run(MemoryFiles({copy_name(relative): raw}))
    except RawOutputError as exc:
        return relative, None, str(exc)
    fields = path_fields(relative, pattern)
    if fields is None:
        return relative, None, _mismatch(pattern)
    if parsed.kind == "fio" and not pattern and parsed.metadata.get("jobname"):
        fields["workload"] = parsed.metadata["jobname"]
    return relative, {"kind": parsed.kind, "fields": fields,
                      "tool": parsed.metadata.get("tool", ""),
                      "measurements": parsed.measurements, "raw": raw}, ""


def relative_path(root: str, file: str) -> str:
    """`file` relative to its import root, with "/" separators (patterns use them)."""
    prefix = root.rstrip(os.sep) + os.sep
    relative = file[len(prefix):] if file.startswith(prefix) else os.path.relpath(file, root)
    return relative.replace(os.sep, "/")


def path_fields(relative: str, pattern: str | None) -> dict[str, str] | None:
    """Fields of a path by the pattern (None when it does not match), or guessed."""
    if not pattern:
        return guess_fields(relative)
    match = compile_pattern(pattern).match(relative)
    return {k: v for k, v in match.groupdict().items() if v is not None} if match else None


def _mismatch(pattern: str | None) -> str:
    return f"path does not match the pattern {pattern!r}"


def import_results(paths: list[Path], out: Path, pattern: str | None = None,
                   workers: int | None = None,
                   meanwhile: Callable[[], object] | None = None) -> ImportReport:
    """Build a results directory at `out` from files collected elsewhere.

    `meanwhile` runs in this process while the workers parse (e.g. importing what the
    analysis that follows needs, instead of after).
    """
    if pattern:
        compile_pattern(pattern)  # a bad pattern is one clear error, before any work
    files = [(root, file, pattern) for root, file in discover(paths)]
    if not files:
        raise UserError("nothing to import: no files under " + ", ".join(map(str, paths)))
    _refuse_same_path_twice(files)
    results = ResultsDir.create(out)
    campaign = out.name
    workers = workers or min(4, os.cpu_count() or 1)
    parts: list[Chunk] = []
    chunks = [(str(out), campaign, number, files[start:start + CHUNK])
              for number, start in enumerate(range(0, len(files), CHUNK))]
    if workers > 1 and len(chunks) > 1:
        import pyarrow  # noqa: F401 - loaded once here, not once per forked worker
        with ProcessPoolExecutor(workers) as pool:
            pending = pool.map(read_chunk, chunks)  # every chunk is submitted here
            if meanwhile is not None:
                meanwhile()
            parts += pending
    else:
        parts += map(read_chunk, chunks)
        if meanwhile is not None:
            meanwhile()
    report = ImportReport()
    for part in parts:
        report.imported += part.imported
        report.skipped += part.skipped
    results.write_campaign({"name": campaign, "imported_from": [str(p) for p in paths],
                            "pattern": pattern or "(guessed)"})
    results.write_environment({"imported": True, "note": "results collected elsewhere: "
                               "environment unknown to fslab"})
    report.rows = results.write_metrics_tables([part.table for part in parts])
    write_atomic(results.path / "import-report.json", json.dumps(
        {"imported": report.imported, "skipped": report.skipped}, indent=1))
    write_atomic(results.path / "import_errors.csv",
                 _csv([{"file": name, "reason": reason} for name, reason in report.skipped])
                 if report.skipped else "file,reason\n")
    return report


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


@dataclass
class Chunk:
    """What one worker made of a batch of files: their metrics as an Arrow table (cheap
    to send between processes, unlike ~10^5 small tuples), how many it kept, and the
    files it skipped (with why)."""

    table: Any
    imported: int
    skipped: list[tuple[str, str]]


def read_chunk(args: tuple[str, str, int, list[File]]) -> Chunk:
    """Parse a batch of files into one table of metrics rows, keeping each file as a run
    of the results directory: a copy of it and its run.json under <run_id>/ in one
    archive per batch (store.write_run_archive). The rows go to metrics.parquet only (the
    copy is their source: `fslab reparse` rebuilds them)."""
    from fslab.store import ResultsDir, metrics_table

    out, campaign, number, files = args
    columns = empty_columns()
    kept: list[tuple[RunRecord, dict[str, bytes]]] = []
    skipped: list[tuple[str, str]] = []
    for relative, found, reason in map(read_one, files):
        if found is None:
            skipped.append((relative, reason))
            continue
        record = run_record(campaign, relative, found["fields"], found["kind"], found["tool"])
        add_file_rows(columns, record, found["measurements"])
        kept.append((record, {copy_name(relative): found["raw"]}))
    if kept:
        ResultsDir(Path(out)).write_run_archive(f"import-{number:05d}", kept)
    return Chunk(metrics_table(columns), len(kept), skipped)


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
        iteration=_iteration(fields.get("iteration", "")),
        source=relative, kind=kind, tool=tool, fields=dict(fields))


def add_file_rows(columns: dict[str, list[Any]], record: RunRecord,
                  measurements: list[Measurement]) -> None:
    """Append the metrics rows of one imported file (a dd log's op may come from its
    path)."""
    if record.kind == "dd" and "op" in record.fields:
        measurements = [m._replace(op=record.fields["op"]) for m in measurements]
    add_rows(columns, record.identity(), measurements, record.fields.get("host", ""))


def _csv(rows: list[dict[str, Any]]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=list(rows[0]) if rows else ["run_id"])
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


@functools.lru_cache(maxsize=4096)
def _iteration(text: str) -> int:
    digits = re.findall(r"\d+", text)
    return int(digits[-1]) if digits else 1


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
    """What the analysis imports (pandas, scipy.special and scipy.optimize: ~1.5 s), to
    load while the files are parsed (import_results' `meanwhile`) rather than after."""
    import pandas  # noqa: F401
    import pyarrow.parquet  # noqa: F401
    import scipy.optimize
    import scipy.special  # noqa: F401

    import fslab.analysis.comparisons
    import fslab.analysis.ranking
    import fslab.analysis.summary  # noqa: F401
