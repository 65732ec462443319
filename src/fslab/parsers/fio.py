"""fio JSON (and json+) -> Measurements, done the way studies often fail to.

Rules (DESIGN.md):
- All jobs of one fio run are ONE observation: IOPS and bandwidth are summed over jobs,
  latency means are weighted by each job's completed I/Os.
- Percentiles of several jobs are computed from their merged json+ histogram bins, the
  same way fio merges them for group_reporting; without bins they are not invented.
- Values in ns and bytes/s; fio before 3.0 reported latency in µs (`clat`, `lat`) and
  bandwidth in KiB/s (`bw`): converted.
- Text around the JSON (`fio: ...` warnings, blank lines) is tolerated.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import numpy as np
import orjson

from fslab.metrics import Measurement

DIRECTIONS = ("read", "write", "trim")
PERCENTILES = {50.0: "clat_p50_ns", 90.0: "clat_p90_ns", 99.0: "clat_p99_ns",
               99.9: "clat_p99_9_ns", 99.99: "clat_p99_99_ns"}


class FioParseError(ValueError):
    """The text holds no fio JSON result."""


def extract_json(text: str | bytes) -> dict[str, Any]:
    """Return the fio JSON object in `text`, skipping non-JSON lines before and after it."""
    raw = text.encode() if isinstance(text, str) else text
    start, end = raw.find(b"{"), raw.rfind(b"}")
    if 0 <= start < end:  # the common case, parsed fast; odd texts fall through to a scan
        try:
            obj = orjson.loads(memoryview(raw)[start:end + 1])
        except orjson.JSONDecodeError:
            obj = None
        if isinstance(obj, dict) and ("jobs" in obj or "client_stats" in obj):
            return obj
    text = raw.decode(errors="replace")
    decoder = json.JSONDecoder()
    position = 0
    while True:
        start = text.find("{", position)
        if start < 0:
            raise FioParseError("no JSON object found in fio output")
        try:
            obj, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            position = start + 1
            continue
        if isinstance(obj, dict) and ("jobs" in obj or "client_stats" in obj):
            return obj
        position = start + 1


BIN_TEXT = b'"0123456789:, \t\r\n'  # every byte a json+ bins object may hold


def load_fio(raw: bytes | str) -> dict[str, Any]:
    """`extract_json`, with json+ latency bins read by numpy rather than as Python objects.

    A json+ file holds thousands of bins; as dicts of str → int they cost more to build
    and merge than the rest of the file. Each bins object is cut out of the text and
    parsed as numbers in one numpy call, leaving an index in its place; objects that
    are not plainly numeric are left to the JSON parser. Either way, `parse_fio` gives
    the same measurements (a test holds them equal).
    """
    raw = raw.encode() if isinstance(raw, str) else raw
    raw, arrays = _cut_bins(raw) if b'"bins"' in raw else (raw, [])
    data = extract_json(raw)
    if arrays:
        for job in data.get("jobs") or data.get("client_stats") or []:
            for stats in (job.get(d) for d in (*DIRECTIONS, "sync")):
                for block in stats.values() if isinstance(stats, dict) else ():
                    index = block.get("bins") if isinstance(block, dict) else None
                    if type(index) is int and 0 <= index < len(arrays):
                        block["bins"] = arrays[index]
    return data


def _cut_bins(raw: bytes) -> tuple[bytes, list[tuple[np.ndarray, np.ndarray]]]:
    """The text with each numeric `"bins": {...}` replaced by `"bins": <index>`, and the
    (latencies, counts) arrays in index order. Found with bytes.find: a regex over a
    36 KB file costs more than the numbers it would save."""
    pieces: list[bytes] = []
    arrays: list[tuple[np.ndarray, np.ndarray]] = []
    position = 0
    while (at := raw.find(b'"bins"', position)) >= 0:
        opening = raw.find(b"{", at)
        closing = raw.find(b"}", opening)
        inner = raw[opening + 1:closing]
        pairs = inner.count(b":")
        numbers = None
        if (opening > 0 and closing > 0 and raw[at + 6:opening].strip() == b":" and pairs
                and not inner.translate(None, BIN_TEXT)):
            numbers = np.fromstring(inner.translate(None, b'"').replace(b":", b","),
                                    dtype=np.int64, sep=",")
        if numbers is None or len(numbers) != 2 * pairs:
            pieces.append(raw[position:at + 6])  # not plain numbers: the JSON parser's
            position = at + 6
            continue
        arrays.append((numbers[0::2].astype(float), numbers[1::2].astype(float)))
        pieces += [raw[position:at], b'"bins": %d' % (len(arrays) - 1)]
        position = closing + 1
    pieces.append(raw[position:])
    return b"".join(pieces), arrays


def job_errors(data: dict[str, Any]) -> list[str]:
    """Return 'jobname: error N' for every job fio reports as failed."""
    jobs = data.get("jobs") or data.get("client_stats") or []
    return [f"{job.get('jobname', '?')}: error {job['error']}" for job in jobs if job.get("error")]


ALL_CLIENTS = "All clients"


def parse_fio(data: dict[str, Any]) -> list[Measurement]:
    """Aggregate every job of one fio result into one observation's measurements.

    Client/server output (`client_stats`) gives one row set per host (host = its name)
    and the aggregate over all of them (host = "All clients"), which is the observation.
    """
    if "jobs" in data:
        if not data["jobs"]:
            raise FioParseError("fio result holds no jobs")
        return aggregate_jobs(data["jobs"])
    jobs = [job for job in data.get("client_stats", []) if job.get("jobname") != ALL_CLIENTS]
    if not jobs:
        raise FioParseError("fio result holds no jobs")
    out: list[Measurement] = []
    by_host: dict[str, list[dict[str, Any]]] = {}
    for job in jobs:
        host = str(job.get("hostname", "?"))
        if job.get("port"):  # several servers may share an address (loopback ports)
            host = f"{host}:{job['port']}"
        by_host.setdefault(host, []).append(job)
    for host, host_jobs in by_host.items():
        out += aggregate_jobs(host_jobs, host)
    out += aggregate_jobs(jobs, ALL_CLIENTS)
    return out


def aggregate_jobs(jobs: list[dict[str, Any]], host: str = "") -> list[Measurement]:
    """Sum rates and weight latency means over `jobs`, per direction."""
    out: list[Measurement] = []
    active = []
    for direction in DIRECTIONS:
        stats = [job[direction] for job in jobs if _ios(job.get(direction)) > 0]
        if not stats:
            continue
        active.append(stats)
        out += _direction_measurements(direction, stats, host)
    if len(active) > 1:
        out.append(Measurement("total", "iops", sum(_iops(s) for g in active for s in g), host))
        out.append(Measurement("total", "bw_bytes", sum(_bw(s) for g in active for s in g), host))
    # fio's usr_cpu/sys_cpu are % of one CPU per job; summed, they are the run's CPU use.
    out.append(Measurement("total", "cpu_usr", sum(float(j.get("usr_cpu", 0)) for j in jobs), host))
    out.append(Measurement("total", "cpu_sys", sum(float(j.get("sys_cpu", 0)) for j in jobs), host))
    return out


def _direction_measurements(
    op: str, stats: list[dict[str, Any]], host: str
) -> list[Measurement]:
    out = [
        Measurement(op, "iops", sum(_iops(s) for s in stats), host),
        Measurement(op, "bw_bytes", sum(_bw(s) for s in stats), host),
        Measurement(op, "io_bytes", float(sum(_io_bytes(s) for s in stats)), host),
    ]
    for kind in ("clat", "lat", "slat"):
        mean = _weighted_mean([_latency(s, kind) for s in stats])
        if mean is not None:
            out.append(Measurement(op, f"{kind}_mean_ns", mean, host))
    clats = [_latency(s, "clat") for s in stats]
    maxima = [c["max"] for c in clats if c and c.get("N")]
    if maxima:
        out.append(Measurement(op, "clat_max_ns", float(max(maxima)), host))
    for metric, value in _percentiles(clats).items():
        out.append(Measurement(op, metric, value, host))
    return out


def _ios(stats: dict[str, Any] | None) -> int:
    if not stats:
        return 0
    return int(stats.get("total_ios") or 0) or int(stats.get("io_bytes") or 0)


def _iops(stats: dict[str, Any]) -> float:
    return float(stats.get("iops", 0.0))


def _bw(stats: dict[str, Any]) -> float:
    if "bw_bytes" in stats:
        return float(stats["bw_bytes"])
    return float(stats.get("bw", 0.0)) * 1024.0  # old fio: KiB/s


def _io_bytes(stats: dict[str, Any]) -> int:
    if "io_bytes" in stats:
        return int(stats["io_bytes"])
    return int(stats.get("io_kbytes", 0)) * 1024


def _latency(stats: dict[str, Any], kind: str) -> dict[str, Any] | None:
    """Return a latency block in ns, converting fio < 3.0's µs blocks."""
    if f"{kind}_ns" in stats:
        return stats[f"{kind}_ns"]
    old = stats.get(kind)
    if not isinstance(old, dict):
        return None
    scaled: dict[str, Any] = {k: v * 1000.0 for k, v in old.items() if k in ("min", "max", "mean")}
    scaled["N"] = old.get("N", stats.get("total_ios", 0))
    if isinstance(old.get("percentile"), dict):
        scaled["percentile"] = {k: v * 1000.0 for k, v in old["percentile"].items()}
    if isinstance(old.get("bins"), dict):
        scaled["bins"] = {str(round(float(k) * 1000)): v for k, v in old["bins"].items()}
    elif isinstance(old.get("bins"), tuple):
        scaled["bins"] = (old["bins"][0] * 1000.0, old["bins"][1])
    return scaled


def _weighted_mean(blocks: Iterable[dict[str, Any] | None]) -> float | None:
    """Mean of means weighted by sample count N; None when nothing was sampled."""
    total = 0.0
    count = 0
    for block in blocks:
        if not block or not block.get("N"):
            continue
        total += float(block["mean"]) * int(block["N"])
        count += int(block["N"])
    return total / count if count else None


def _percentiles(blocks: list[dict[str, Any] | None]) -> dict[str, float]:
    """Percentiles of the merged distribution: from json+ bins, or a lone job's own list."""
    sampled = [b for b in blocks if b and b.get("N")]
    if not sampled:
        return {}
    if all(_has_bins(block.get("bins")) for block in sampled):
        pairs = [_bin_arrays(block["bins"]) for block in sampled]
        values = np.concatenate([v for v, _ in pairs])
        counts = np.concatenate([c for _, c in pairs])
        order = np.argsort(values, kind="stable")  # equal bins of several jobs sit together
        return _percentiles_sorted(values[order], counts[order])
    if len(sampled) == 1 and isinstance(sampled[0].get("percentile"), dict):
        listed = {float(k): float(v) for k, v in sampled[0]["percentile"].items()}
        return {name: listed[p] for p, name in PERCENTILES.items() if p in listed}
    return {}


def _has_bins(bins: object) -> bool:
    return bool(bins) if isinstance(bins, dict) else (isinstance(bins, tuple)
                                                       and len(bins[0]) > 0)


def _bin_arrays(bins: dict[str, int] | tuple[np.ndarray, np.ndarray]
                ) -> tuple[np.ndarray, np.ndarray]:
    """(latencies, counts) of one job's bins, from `load_fio`'s arrays or a dict."""
    if isinstance(bins, tuple):
        return bins
    return _bin_values(list(bins)), np.fromiter(bins.values(), dtype=float, count=len(bins))


def _bin_values(keys: list[str]) -> np.ndarray:
    """json+ bin keys (integer ns as strings) as numbers; numpy's C parser is ~6x faster
    than int() per key, and a json+ file has thousands of them."""
    joined = ",".join(keys)
    if joined.replace(",", "").isdigit():
        return np.fromstring(joined, dtype=np.int64, sep=",").astype(float)
    try:
        return np.array([float(k) for k in keys])
    except ValueError as exc:
        raise FioParseError(f"json+ bins: {exc}") from None


def percentiles_from_bins(bins: dict[float, int] | dict[float, float]) -> dict[str, float]:
    """fio's own rule (stat.c calc_clat_percentiles): the first bin whose cumulative count
    reaches p % of all samples gives the p-th percentile."""
    values = np.array(sorted(bins), dtype=float)
    return _percentiles_sorted(values, np.array([bins[v] for v in sorted(bins)], dtype=float))


PERCENTILE_SHARES = np.array(sorted(PERCENTILES)) / 100.0


def _percentiles_sorted(values: np.ndarray, counts: np.ndarray) -> dict[str, float]:
    cumulative = np.cumsum(counts)
    index = np.searchsorted(cumulative, PERCENTILE_SHARES * cumulative[-1], side="left")
    picked = values[np.minimum(index, len(values) - 1)].tolist()
    return dict(zip((PERCENTILES[p] for p in sorted(PERCENTILES)), picked, strict=True))
