"""Latency blocks of fio JSON: units, means, spreads and percentiles over several jobs.

fio before 3.0 reported latency in µs: converted to ns here. Percentiles of several jobs
come from their merged json+ bins, fio's own way (stat.c calc_clat_percentiles); without
bins they are not invented.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from fslab.core.metrics import FIO_PERCENTILES, percentile_metric
from fslab.parsers.fio_json import Bins, DirectionStats, LatencyBlock, LatencyKind
from fslab.parsers.fio_load import FioParseError

PERCENTILES = {p: percentile_metric(p) for p in FIO_PERCENTILES}


def latency(stats: DirectionStats, kind: LatencyKind) -> LatencyBlock | None:
    """Return a latency block in ns, converting fio < 3.0's µs blocks."""
    ns = {"clat": stats.get("clat_ns"), "lat": stats.get("lat_ns"),
          "slat": stats.get("slat_ns")}[kind]
    if ns is not None:
        return ns
    old = {"clat": stats.get("clat"), "lat": stats.get("lat"), "slat": stats.get("slat")}[kind]
    if not isinstance(old, dict):
        return None
    scaled = LatencyBlock(N=old.get("N", stats.get("total_ios", 0)))
    for key in ("min", "max", "mean", "stddev"):
        if key in old:
            scaled[key] = old[key] * 1000.0
    if isinstance(percentile := old.get("percentile"), dict):
        scaled["percentile"] = {k: v * 1000.0 for k, v in percentile.items()}
    if isinstance(bins := old.get("bins"), dict):
        scaled["bins"] = {str(round(float(k) * 1000)): v for k, v in bins.items()}
    elif isinstance(bins, tuple):
        scaled["bins"] = (bins[0] * 1000.0, bins[1])
    return scaled


def weighted_mean(blocks: Iterable[LatencyBlock | None]) -> float | None:
    """Mean of means weighted by sample count N; None when nothing was sampled."""
    total = 0.0
    count = 0
    for block in blocks:
        if not block or not block.get("N"):
            continue
        total += float(block["mean"]) * int(block["N"])
        count += int(block["N"])
    return total / count if count else None


def pooled_stddev(blocks: list[LatencyBlock]) -> float | None:
    """The standard deviation over every I/O of several jobs, from each job's N, mean and
    stddev (the law of total variance; fio's population form, divisor N)."""
    if not all(isinstance(b.get("stddev"), int | float) for b in blocks):
        return None
    count = sum(int(b["N"]) for b in blocks)
    mean = sum(float(b["mean"]) * int(b["N"]) for b in blocks) / count
    total = sum(int(b["N"]) * (float(b["stddev"]) ** 2 + (float(b["mean"]) - mean) ** 2)
                for b in blocks)
    return float(np.sqrt(total / count))


def percentiles(blocks: list[LatencyBlock | None]) -> dict[str, float]:
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


def _bin_arrays(bins: Bins) -> tuple[np.ndarray, np.ndarray]:
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
