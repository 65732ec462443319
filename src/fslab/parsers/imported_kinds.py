"""The raw outputs of fslab's other workloads as kinds of the parse stage: bonnie++'s
CSV, the records the files, small-file, scan and aged-file workloads write (with the
files workload's dd log when it ran dd), the null simulator's value, and dd logs and
bonnie++ CSV imported from elsewhere.

Each record is JSON the workload wrote with its timings; the rows are computed here, so
`fslab reparse` recomputes them.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from typing import Any

from fslab.core.metrics import Measurement, cpu_measurements
from fslab.parsers.bonnie import BonnieParseError, parse_bonnie
from fslab.parsers.dd import parse_dd
from fslab.parsers.fio_kinds import imported_name
from fslab.parsers.raw_files import Parsed, RawFiles, RawKind, read_json, read_text
from fslab.parsers.raw_names import (
    AGEDFILES_RECORD,
    BONNIE_CPU,
    BONNIE_OUTPUT,
    DD_LOG,
    FILES_RECORD,
    NULL_RECORD,
    SCAN_RECORD,
    SMALLFILES_RECORD,
)


def _named(name: str) -> Callable[[RawFiles], bool]:
    """A detector: the run kept a file of this name."""
    return lambda files: name in files.names()


def _cpu(record: dict[str, Any]) -> list[Measurement]:
    return cpu_measurements(record["cpu_usr"], record["cpu_sys"])


def _parse_bonnie(files: RawFiles) -> Parsed:
    """bonnie++'s CSV line; without one (it prints its usage and exits 0 when -r is not
    below -s), the run fails with bonnie++'s own first words."""
    from fslab.parsers.raw_files import RawOutputError

    text = read_text(files, BONNIE_OUTPUT)
    try:
        measurements = parse_bonnie(text)
    except BonnieParseError:
        said = text + (read_text(files, "stderr.txt") if "stderr.txt" in files.names() else "")
        first = next((line.strip() for line in said.splitlines() if line.strip()), "no output")
        raise RawOutputError(f"bonnie++ printed no result: {first}") from None
    if BONNIE_CPU in files.names():  # bonnie++'s own rusage, as % of one core
        measurements += _cpu(read_json(files, BONNIE_CPU))
    return Parsed("bonnie", measurements)


def _parse_files(files: RawFiles) -> Parsed:
    record = read_json(files, FILES_RECORD)
    if record.get("tool") == "dd":
        out = dd_log_samples(read_text(files, DD_LOG))
    else:
        out = []
        for sample in record["samples"]:
            for op, seconds in (("write", sample["write_s"]), ("read", sample["read_s"])):
                out.append(Measurement(op, "seconds", seconds, sample=sample["sample"]))
                out.append(Measurement(op, "bw_bytes", record["size"] / seconds,
                                       sample=sample["sample"]))
    return Parsed("files", out + _cpu(record), {"study_interval": study_interval(out)})


def dd_log_samples(text: str) -> list[Measurement]:
    """The files workload's dd.log ("# write" / "# read" blocks of dd's stderr) -> write
    and read samples, numbered per op."""
    out: list[Measurement] = []
    counts = {"write": 0, "read": 0}
    for block in text.split("# ")[1:]:
        op, _, body = block.partition("\n")
        for measurement in parse_dd(body, op):
            out.append(measurement._replace(sample=counts[op]))
        counts[op] += 1
    return out


STUDY_Z = 1.96  # the USB-stick study's critical value ("Critical Value")


def study_interval(measurements: list[Measurement]) -> dict[str, object]:
    """The study's own 95 % interval of each op's speed over the samples of this run:
    mean ± 1.96 s/√n in MB/s (10^6 bytes/s, dd's unit), s the samples' standard deviation.

    Kept beside fslab's analysis, not in it: the samples of one run share one file system
    and one stretch of time, so they are not independent repetitions; fslab's intervals
    and verdicts rest on the iterations (each a fresh file system) instead.
    """
    out: dict[str, object] = {}
    for op in ("write", "read"):
        speeds = [m.value / 1e6 for m in measurements if m.op == op and m.metric == "bw_bytes"]
        if len(speeds) < 2:
            continue
        mean, sd = statistics.fmean(speeds), statistics.stdev(speeds)
        margin = STUDY_Z * sd / math.sqrt(len(speeds))
        out[op] = {"n": len(speeds), "mean_mb_s": mean, "sd_mb_s": sd,
                   "margin_mb_s": margin, "low_mb_s": mean - margin,
                   "high_mb_s": mean + margin}
    if out:
        out["why"] = ("the study's interval (critical value 1.96, E = z s / sqrt(n) over one "
                      "run's samples); not fslab's: its samples are not independent runs")
    return out


def _parse_smallfiles(files: RawFiles) -> Parsed:
    record = read_json(files, SMALLFILES_RECORD)
    out = []
    for phase, values in record["phases"].items():
        out.append(Measurement(phase, "ops_per_s", record["count"] / values["seconds"]))
        out.append(Measurement(phase, "sync_seconds", values["sync_seconds"]))
    return Parsed("smallfiles", out + _cpu(record))


def _parse_scan(files: RawFiles) -> Parsed:
    record = read_json(files, SCAN_RECORD)
    seconds = max(float(record["seconds"]), 1e-9)
    score = record.get("layout_score")
    out = [Measurement("read", "bw_bytes", record["bytes"] / seconds),
           Measurement("read", "ops_per_s", record["files"] / seconds),
           Measurement("read", "seconds", seconds),
           Measurement("read", "io_bytes", float(record["bytes"])),
           Measurement("read", "layout_score", float("nan") if score is None else float(score),
                       note=record.get("layout_reason") or "")]
    return Parsed("scan", out + _cpu(record))


def _parse_agedfiles(files: RawFiles) -> Parsed:
    record = read_json(files, AGEDFILES_RECORD)
    op = "read" if record["action"] == "readall" else "write"
    seconds = max(record["seconds"], 1e-9)
    return Parsed("agedfiles", [Measurement(op, "bw_bytes", record["bytes"] / seconds),
                                Measurement(op, "ops_per_s", record["files"] / seconds),
                                Measurement(op, "seconds", record["seconds"]),
                                *_cpu(record)])


def _parse_null(files: RawFiles) -> Parsed:
    record = read_json(files, NULL_RECORD)
    latency = [Measurement("read", name, record[name]) for name in
               ("clat_mean_ns", "clat_p50_ns", "clat_p99_ns") if name in record]
    return Parsed("null", [Measurement("read", "iops", record["iops"]), *latency])


def _imported_text(files: RawFiles) -> str:
    name = imported_name(files)
    return "" if name is None else read_text(files, name)


def _detect_imported_dd(files: RawFiles) -> bool:
    text = _imported_text(files)
    return " copied, " in text and bool(parse_dd(text))


def _detect_imported_bonnie(files: RawFiles) -> bool:
    text = _imported_text(files)
    return text.lstrip().startswith("1.9") or "\n1.9" in text


BONNIE = RawKind("bonnie", "", _named(BONNIE_OUTPUT), _parse_bonnie)
FILES = RawKind("files", "", _named(FILES_RECORD), _parse_files)
SMALLFILES = RawKind("smallfiles", "", _named(SMALLFILES_RECORD), _parse_smallfiles)
SCAN = RawKind("scan", "", _named(SCAN_RECORD), _parse_scan)
AGEDFILES = RawKind("agedfiles", "", _named(AGEDFILES_RECORD), _parse_agedfiles)
NULL = RawKind("null", "", _named(NULL_RECORD), _parse_null)
IMPORTED_DD = RawKind("imported_dd", "a dd log", _detect_imported_dd, lambda files: Parsed(
    "dd", parse_dd(_imported_text(files)), {"tool": "dd"}))
IMPORTED_BONNIE = RawKind("imported_bonnie", "bonnie++ CSV", _detect_imported_bonnie,
                          lambda files: Parsed("bonnie", parse_bonnie(_imported_text(files)),
                                               {"tool": "bonnie++"}))
