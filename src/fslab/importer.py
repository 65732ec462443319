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

import json
import os
import re
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fslab.errors import UserError
from fslab.metrics import Measurement
from fslab.parsers.bonnie import BonnieParseError, parse_bonnie
from fslab.parsers.dd import parse_dd
from fslab.parsers.fio import FioParseError, extract_json, parse_fio
from fslab.store import ResultsDir, write_atomic
from fslab.targets import FS_KINDS

KNOWN_FS = set(FS_KINDS) | {"ext4", "xfs", "btrfs", "zfs", "f2fs", "ntfs", "exfat", "fat32",
                            "vfat", "jfs", "reiserfs", "nilfs2", "bcachefs", "ocfs2", "nfs",
                            "ceph", "cephfs", "lustre", "gpfs", "beegfs", "tmpfs", "hfs"}
FIELDS = ("fs", "target", "iteration", "workload", "op", "host")
CHUNK = 256  # files per worker task


@dataclass
class ImportReport:
    """What was imported, and which files were not, with the reason."""

    imported: int = 0
    rows: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)


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
    parts = relative.split("/")
    fields: dict[str, str] = {}
    for part in parts[:-1]:
        tokens = re.split(r"[-_.]", part.lower())
        known = [t for t in tokens if t in KNOWN_FS]
        if part.lower() in KNOWN_FS or known:
            fields["fs"] = part.lower() if part.lower() in KNOWN_FS else known[0]
            fields["target"] = part
            break
    numbers = re.findall(r"(?:^|[^a-z0-9])(?:i|it|iter|iteration|run|rep)?[-_]?(\d+)(?=$|[^0-9])",
                         "/".join(parts).lower())
    if numbers:
        fields["iteration"] = numbers[-1]
    stem = re.sub(r"(\.fio)?\.(json\+?|jsonplus|log|txt|csv|out)$", "", parts[-1])
    stem = re.sub(r"[-_.]?(result|results|output|out)$", "", stem) or stem
    # "dd-3", "seqread_run2": the number is the iteration, not part of the workload.
    fields["workload"] = re.sub(r"[-_.]?(?:i|it|iter|iteration|run|rep)?[-_]?\d+$", "",
                                stem) or stem
    return fields


def discover(paths: list[Path]) -> Iterator[tuple[Path, Path]]:
    """(root, file) for every regular file under the given paths."""
    for path in paths:
        if path.is_file():
            yield path.parent, path
        elif path.is_dir():
            for directory, _, names in os.walk(path):
                for name in sorted(names):
                    yield path, Path(directory) / name
        else:
            raise UserError(f"{path}: no such file or directory")


def read_one(args: tuple[str, str, str | None]) -> tuple[str, dict[str, Any] | None, str]:
    """Parse one file: (relative path, record or None, reason when None)."""
    root, file, pattern = args
    relative = os.path.relpath(file, root).replace(os.sep, "/")
    try:
        text = Path(file).read_text(errors="replace")
    except OSError as exc:
        return relative, None, exc.strerror or str(exc)
    kind, measurements, extra = _parse_any(text)
    if kind is None:
        return relative, None, extra.get("reason", "not fio JSON, a dd log or bonnie++ CSV")
    if pattern:
        match = compile_pattern(pattern).match(relative)
        if not match:
            return relative, None, f"path does not match the pattern {pattern!r}"
        fields = {k: v for k, v in match.groupdict().items() if v is not None}
    else:
        fields = guess_fields(relative)
    if kind == "fio" and not pattern and extra.get("jobname"):
        fields["workload"] = extra["jobname"]
    record = {"relative": relative, "kind": kind, "fields": fields, "tool": extra.get("tool", ""),
              "measurements": [(m.op, m.metric, m.value, m.host, m.sample, m.note)
                               for m in measurements]}
    return relative, record, ""


def _parse_any(text: str) -> tuple[str | None, list[Measurement], dict[str, Any]]:
    stripped = text.lstrip()
    if "{" in text and ("fio version" in text or "client_stats" in text or '"jobs"' in text):
        try:
            data = extract_json(text)
            jobs = data.get("jobs") or data.get("client_stats") or [{}]
            name = re.sub(r"\.\d+$", "", str(jobs[0].get("jobname", "")))
            return "fio", parse_fio(data), {"jobname": name,
                                            "tool": str(data.get("fio version", "fio"))}
        except (FioParseError, ValueError, KeyError, TypeError) as exc:
            return None, [], {"reason": f"fio JSON unreadable: {exc}"}
    if " copied, " in text:
        measurements = parse_dd(text)
        if measurements:
            return "dd", measurements, {"tool": "dd"}
    if stripped.startswith("1.9") or "\n1.9" in text:
        try:
            return "bonnie", parse_bonnie(text), {"tool": "bonnie++"}
        except BonnieParseError as exc:
            return None, [], {"reason": str(exc)}
    return None, [], {"reason": "not fio JSON, a dd log or bonnie++ CSV"}


def import_results(paths: list[Path], out: Path, pattern: str | None = None,
                   workers: int | None = None) -> ImportReport:
    """Build a results directory at `out` from files collected elsewhere."""
    if pattern:
        compile_pattern(pattern)  # a bad pattern is one clear error, before any work
    files = [(str(root), str(file), pattern) for root, file in discover(paths)]
    if not files:
        raise UserError("nothing to import: no files under " + ", ".join(map(str, paths)))
    results = ResultsDir.create(out)
    workers = workers or min(4, os.cpu_count() or 1)
    if workers > 1 and len(files) > CHUNK:
        with ProcessPoolExecutor(workers) as pool:
            parsed = list(pool.map(read_one, files, chunksize=CHUNK))
    else:
        parsed = [read_one(args) for args in files]
    report = ImportReport()
    rows: list[dict[str, Any]] = []
    runs: list[dict[str, Any]] = []
    campaign = out.name
    for relative, record, reason in parsed:
        if record is None:
            report.skipped.append((relative, reason))
            continue
        report.imported += 1
        rows += _rows(campaign, record)
        fields = record["fields"]
        runs.append({"run_id": relative, "iteration": _iteration(fields),
                     "target": fields.get("target") or fields.get("fs", "unknown"),
                     "fs": fields.get("fs", "unknown"), "workload": fields.get("workload", ""),
                     "status": "ok", "reason": "", "source": relative, "kind": record["kind"]})
    report.rows = len(rows)
    results.write_campaign({"name": campaign, "imported_from": [str(p) for p in paths],
                            "pattern": pattern or "(guessed)"})
    results.write_environment({"imported": True, "note": "results collected elsewhere: "
                               "environment unknown to fslab"})
    results.rebuild_metrics(rows)
    import pandas as pd

    write_atomic(results.path / "runs.csv", pd.DataFrame(runs).to_csv(index=False))
    write_atomic(results.path / "import-report.json", json.dumps(
        {"imported": report.imported, "skipped": report.skipped}, indent=1))
    return report


def _iteration(fields: dict[str, str]) -> int:
    digits = re.findall(r"\d+", fields.get("iteration", ""))
    return int(digits[-1]) if digits else 1


def _rows(campaign: str, record: dict[str, Any]) -> list[dict[str, Any]]:
    from fslab.metrics import METRIC_UNITS

    fields = record["fields"]
    fs = fields.get("fs", "unknown")
    identity = {
        "campaign": campaign, "run_id": record["relative"],
        "target": fields.get("target") or fs, "fs": fs,
        "fs_impl": f"imported ({record['tool']})" if record["tool"] else "imported",
        "workload": fields.get("workload", record["kind"]), "iteration": _iteration(fields),
    }
    rows = []
    for op, metric, value, host, sample, note in record["measurements"]:
        unit, better = METRIC_UNITS[metric]
        rows.append({**identity, "host": host or fields.get("host", ""),
                     "op": fields.get("op", op) if record["kind"] == "dd" else op,
                     "metric": metric, "value": value, "unit": unit, "better": better,
                     "sample": sample, "note": note})
    return rows
