"""What an aging run did, as the engine and its recipes record it (the op log)."""

from __future__ import annotations

from array import array
from collections import Counter
from dataclasses import dataclass, field


@dataclass
class AgingLog:
    """What an aging run did: per-op times and latencies, failures, utilisation."""

    t: array = field(default_factory=lambda: array("d"))  # seconds since start
    op: array = field(default_factory=lambda: array("B"))  # index into OPS
    latency_ns: array = field(default_factory=lambda: array("q"))
    failures: Counter[tuple[str, str]] = field(default_factory=Counter)
    redirected: Counter[tuple[str, str]] = field(default_factory=Counter)  # planned→done
    utilization: list[tuple[float, int, float]] = field(default_factory=list)  # t, ops, used
    deleted_for_space: int = 0
    topped_up: tuple[int, int] = (0, 0)  # files and bytes created to end at the utilisation
    fstrims: int = 0
    ops_done: int = 0
    bytes_written: int = 0
    digest: str = ""
    seconds: float = 0.0
    stopped_by: str = ""
