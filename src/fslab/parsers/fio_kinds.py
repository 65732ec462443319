"""fio's raw output as kinds of the parse stage: a run's own (`fio.json`, or one
`fio-slice-N.json` per interleaved slice) and a file imported from elsewhere (fio JSON,
json+ or text output, recognised by its content).

What is derived from fio's output alone is derived here, so `fslab reparse` rebuilds it
with the rows: which jobs formed each observation, each clone's own figures, fio's disk
statistics, and for a run in slices the spread between its slices. So are the checks a
run's output must pass (the workload only writes it): a job fio reports as failed, or a
load node that gave no result (HOSTS_FILE lists the ones the run drove), fails the run
with that reason.
"""

from __future__ import annotations

import json
import re
import statistics

from fslab.core.metrics import Measurement
from fslab.parsers.fio import (
    ALL_CLIENTS,
    clone_rows,
    host_name,
    job_errors,
    observation_map,
    parse_fio,
)
from fslab.parsers.fio_json import DiskUtil, FioResult
from fslab.parsers.fio_load import load_fio
from fslab.parsers.fio_logs import interval_rows, judge_sections
from fslab.parsers.raw_files import Parsed, RawFiles, RawKind, RawOutputError
from fslab.parsers.raw_names import FIO_OUTPUT, HOSTS_FILE

SLICE = re.compile(r"fio-slice-(\d+)\.json$")
IMPORTED_PREFIX = "imported-"  # an imported file's copy in its run directory


def slice_names(files: RawFiles) -> list[str]:
    """A run's slice outputs in the order they ran."""
    found = [(int(m.group(1)), name) for name in files.names() if (m := SLICE.match(name))]
    return [name for _, name in sorted(found)]


def _detect_run(files: RawFiles) -> bool:
    names = files.names()
    return FIO_OUTPUT in names or any(SLICE.match(name) for name in names)


def checked(data: FioResult, files: RawFiles, where: str = "fio") -> FioResult:
    """fio's result, or RawOutputError: a job it reports as failed, a host that gave none."""
    errors = job_errors(data)
    if errors:
        raise RawOutputError(f"{where}: {errors[0]}")
    if HOSTS_FILE in files.names():
        reported = {host_name(job) for job in data.get("client_stats") or []
                    if isinstance(job, dict) and job.get("jobname") != ALL_CLIENTS}
        # 'address:port', or the address alone where fio names no port
        lost = [h for h in json.loads(files.read(HOSTS_FILE)) if h not in reported
                and h.rsplit(":", 1)[0] not in reported]
        if lost:
            raise RawOutputError(f"host {', '.join(lost)} dropped out: no result from it")
    return data


def disk_util(data: FioResult) -> list[DiskUtil]:
    """fio's own disk_util entries, as fio names their fields (md arrays keep their
    aggr_* fields, which describe the members fio found)."""
    entries = data.get("disk_util")
    return [dict(entry) for entry in entries if isinstance(entry, dict)] if isinstance(
        entries, list) else []


def _parse_run(files: RawFiles) -> Parsed:
    slices = slice_names(files)
    if not slices:
        data = checked(load_fio(files.read(FIO_OUTPUT)), files)
        metadata: dict[str, object] = {"observations": observation_map(data),
                                       "clones": clone_rows(data)}
        if devices := disk_util(data):
            metadata["fio_disk_util"] = devices
        metadata.update(_steadiness(files, sliced=False))
        return Parsed("fio", parse_fio(data), metadata)
    out: list[Measurement] = []
    first: FioResult = {}
    for index, name in enumerate(slices):
        data = checked(load_fio(files.read(name)), files, f"fio (slice {index})")
        first = first or data
        out += [m._replace(sample=index) for m in parse_fio(data)]
    values = [m.value for m in out if m.metric == "iops" and m.op != "total"]
    return Parsed("fio", out, {"observations": observation_map(first),
                               "slices": {"slice_cv": slice_cv(values, len(slices))},
                               **_steadiness(files, sliced=True)})


def _steadiness(files: RawFiles, sliced: bool) -> dict[str, object]:
    """{'steady': {steady, reason}} from fio's per-interval logs ({} without them: a run
    from before fslab kept them)."""
    rows = interval_rows(files, by_section=True)
    if not rows:
        return {}
    return {"steady": judge_sections(rows, sliced).to_json()}


def slice_cv(values: list[float], rounds: int) -> float | None:
    """Coefficient of variation between one op's slices (the machine's short-term noise),
    averaged over the ops; `values` holds each slice's ops in turn."""
    if len(values) < 2 or len(values) % rounds:
        return None
    per_slice = len(values) // rounds
    series = [values[i::per_slice] for i in range(per_slice)]
    cvs = [statistics.stdev(s) / statistics.fmean(s) for s in series
           if len(s) > 1 and statistics.fmean(s) > 0]
    return round(statistics.fmean(cvs), 4) if cvs else None


FIO = RawKind("fio", "", _detect_run, _parse_run)


def imported_name(files: RawFiles) -> str | None:
    """The one imported file of a run (None: the run is fslab's own)."""
    names = [name for name in files.names() if name.startswith(IMPORTED_PREFIX)]
    return names[0] if len(names) == 1 else None


def looks_like_fio(raw: bytes) -> bool:
    return _json_like(raw) or b"(groupid=" in raw


def _json_like(raw: bytes) -> bool:
    return b"{" in raw and (b"fio version" in raw or b"client_stats" in raw
                            or b'"jobs"' in raw)


def _detect_imported(files: RawFiles) -> bool:
    name = imported_name(files)
    return name is not None and looks_like_fio(files.read(name))


def _parse_imported(files: RawFiles) -> Parsed:
    name = imported_name(files)
    assert name is not None
    data = load_fio(files.read(name))
    measurements = parse_fio(data)
    jobs = data.get("jobs") or data.get("client_stats") or [{}]
    jobname = re.sub(r"\.\d+$", "", str(jobs[0].get("jobname", "")))  # "randread.3"
    one = {m.section for m in measurements} == {""}
    return Parsed("fio", measurements, {"jobname": jobname if one else "",
                                        "tool": str(data.get("fio version", "fio"))})


IMPORTED_FIO = RawKind("imported_fio", "fio JSON or text output", _detect_imported,
                       _parse_imported)
