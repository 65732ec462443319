"""fio's normal (text) output -> the job structure of its JSON, for `parse_fio`.

Many old studies kept only what fio printed. Each job block ("name: (groupid=G, jobs=N):
err= E ...") becomes a job object like fio's JSON one: per direction IOPS and bandwidth
as printed (with their units), the I/O count from "issued rwts", latency blocks
(slat/clat/lat) converted from their printed unit to ns, clat percentiles, and the cpu
line. The grouping and aggregation rule is then the JSON's, written once in `fio.py`.
Printed figures are rounded by fio (IOPS=11.4k): an import from text is as precise as
the text. fio 2.x's "read : io=..., bw=..., iops=..., runt=..." lines are read too.
"""

from __future__ import annotations

import re
from typing import cast

from fslab.parsers.fio_json import (
    DIRECTIONS,
    Direction,
    DirectionStats,
    FioJob,
    FioResult,
    LatencyBlock,
    LatencyKind,
)

JOB = re.compile(r"^(?P<name>\S.*?): \(groupid=(?P<group>\d+), jobs=(?P<jobs>\d+)\): "
                 r"err=\s*(?P<err>-?\d+)")
# fio 3: "  read: IOPS=11.4k, BW=44.4MiB/s (46.5MB/s)(44.4MiB/1001msec)"
DIRECTION3 = re.compile(r"^\s+(?P<dir>read|write|trim)\s*: IOPS=(?P<iops>[\d.]+[kMGT]?), "
                        r"BW=(?P<bw>[\d.]+)(?P<bw_unit>[kKMGTP]?i?B)/s.*?"
                        r"\((?P<io>[\d.]+)(?P<io_unit>[kKMGTP]?i?B)/(?P<runtime>\d+)msec\)")
# fio 2: "  read : io=1024.0MB, bw=52428KB/s, iops=13107, runt= 20000msec"
DIRECTION2 = re.compile(r"^\s+(?P<dir>read|write|trim)\s*: io=(?P<io>[\d.]+)(?P<io_unit>[KMGTP]?B),"
                        r" bw=(?P<bw>[\d.]+)(?P<bw_unit>[KMGTP]?B)/s, iops=(?P<iops>[\d.]+[kMG]?),"
                        r" runt=\s*(?P<runtime>\d+)msec")
LATENCY = re.compile(r"^\s+(?P<kind>slat|clat|lat)\s*\((?P<unit>nsec|usec|msec|sec)\): "
                     r"min=\s*(?P<min>[\d.]+[kMG]?), max=\s*(?P<max>[\d.]+[kMG]?), "
                     r"avg=\s*(?P<avg>[\d.]+[kMG]?), stdev=\s*(?P<stdev>[\d.]+[kMG]?)")
PERCENTILE_HEAD = re.compile(r"^\s+clat percentiles \((?P<unit>nsec|usec|msec|sec)\):")
PERCENTILE = re.compile(r"(?P<p>[\d.]+)th=\[\s*(?P<v>[\d.]+[kMG]?)\]")
CPU = re.compile(r"^\s+cpu\s*: usr=(?P<usr>[\d.]+)%, sys=(?P<sys>[\d.]+)%")
ISSUED = re.compile(r"^\s+issued\s*(?:rwts|rwt|r/w/d|r/w)?:\s*total=(?P<totals>[\d,]+)")
VERSION = re.compile(r"^(fio-\d[\w.\-]*)\s*$", re.MULTILINE)

NS = {"nsec": 1.0, "usec": 1e3, "msec": 1e6, "sec": 1e9}
# fio 3 prints IEC (KiB, MiB) and SI (kB, MB); fio 2's "KB" meant KiB.
BYTES = {"B": 1, "KiB": 1024, "MiB": 1024**2, "GiB": 1024**3, "TiB": 1024**4,
         "PiB": 1024**5, "kB": 1000, "MB": 1000**2, "GB": 1000**3, "TB": 1000**4,
         "PB": 1000**5}
BYTES_FIO2 = {"B": 1, "KB": 1024, "MB": 1024**2, "GB": 1024**3, "TB": 1024**4, "PB": 1024**5}
SUFFIX = {"": 1.0, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}


def parse_fio_text(text: str) -> FioResult:
    """fio's normal output as {"fio version", "jobs": [...]} in the JSON's shape."""
    jobs: list[FioJob] = []
    job: FioJob | None = None
    direction: DirectionStats | None = None
    percentile_unit = ""
    for line in text.splitlines():
        if match := JOB.match(line):
            job = FioJob(jobname=match["name"], groupid=int(match["group"]),
                         jobs=int(match["jobs"]), error=int(match["err"]))
            jobs.append(job)
            direction, percentile_unit = None, ""
            continue
        if job is None:
            continue
        if line.startswith(("Run status group", "Disk stats")) or not line.strip():
            job, direction, percentile_unit = None, None, ""
            continue
        if (match := DIRECTION3.match(line)) or (match := DIRECTION2.match(line)):
            units = BYTES if match.re is DIRECTION3 else BYTES_FIO2
            direction = job[cast(Direction, match["dir"])] = DirectionStats(
                iops=_number(match["iops"]),
                bw_bytes=float(match["bw"]) * _unit(units, match["bw_unit"]),
                io_bytes=int(float(match["io"]) * _unit(units, match["io_unit"])),
                runtime=int(match["runtime"]))
            # JSON's job_runtime: a group_reporting entry sums its jobs' runtimes
            job["job_runtime"] = max(int(job.get("job_runtime", 0)),
                                     int(match["runtime"]) * job["jobs"])
            percentile_unit = ""
        elif (match := LATENCY.match(line)) and direction is not None:
            scale = NS[match["unit"]]
            block = LatencyBlock(min=_number(match["min"]) * scale,
                                 max=_number(match["max"]) * scale,
                                 mean=_number(match["avg"]) * scale)
            # kept under the text's own name (the JSON's is stddev): no spread is derived
            # from text output, as before
            block["stdev"] = _number(match["stdev"]) * scale  # type: ignore[typeddict-unknown-key]
            _set_block(direction, cast(LatencyKind, match["kind"]), block)
        elif (match := PERCENTILE_HEAD.match(line)) and direction is not None:
            percentile_unit = match["unit"]
        elif percentile_unit and line.lstrip().startswith("|") and direction is not None:
            clat = direction.setdefault("clat_ns", {})
            listed = clat.setdefault("percentile", {})
            for found in PERCENTILE.finditer(line):
                listed[f"{float(found['p']):.6f}"] = _number(found["v"]) * NS[percentile_unit]
        elif match := CPU.match(line):
            job["usr_cpu"], job["sys_cpu"] = float(match["usr"]), float(match["sys"])
            percentile_unit = ""
        elif match := ISSUED.match(line):
            totals = [int(t) for t in match["totals"].split(",")]
            for name, total in zip(DIRECTIONS, totals, strict=False):
                if (stats := job.get(name)) is not None:
                    stats["total_ios"] = total
                    for found_block in (stats.get("slat_ns"), stats.get("clat_ns"),
                                        stats.get("lat_ns")):
                        if found_block is not None:
                            found_block["N"] = total
        else:
            percentile_unit = "" if not line.lstrip().startswith("|") else percentile_unit
    version = VERSION.search(text)
    return {"fio version": version.group(1) if version else "fio (text output)",
            "jobs": jobs, "format": "normal"}


def _set_block(direction: DirectionStats, kind: LatencyKind, block: LatencyBlock) -> None:
    """A direction's latency block of `kind` (slat_ns, clat_ns or lat_ns)."""
    if kind == "slat":
        direction["slat_ns"] = block
    elif kind == "clat":
        direction["clat_ns"] = block
    else:
        direction["lat_ns"] = block


def _number(text: str) -> float:
    """'11.4k' -> 11400.0 (fio's num2str suffixes are powers of 1000)."""
    suffix = text[-1] if text[-1] in SUFFIX and not text[-1].isdigit() else ""
    return float(text[: len(text) - len(suffix)]) * SUFFIX[suffix]


def _unit(table: dict[str, int], unit: str) -> int:
    if unit not in table:
        raise ValueError(f"unknown unit {unit!r} in fio text output")
    return table[unit]
