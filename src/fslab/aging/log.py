"""What an aging run did, as the engine and its recipes record it (the op log), and the
record it sums to (`summary`: aging.json's figures)."""

from __future__ import annotations

from array import array
from collections import Counter
from dataclasses import dataclass, field

from fslab.aging.config import OPS, AgingConfig
from fslab.core.aging_record import AgingRecord, ToppedUp


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


def summary(log: AgingLog, config: AgingConfig) -> AgingRecord:
    """The record of what a run did (its target, files and last probe are added by
    aging/age.age_mounted; the op log itself goes to Parquet)."""
    counts = Counter(OPS[c] for c in log.op)
    succeeded = len(log.op)
    return AgingRecord(
        config=config.to_json(), seed=config.seed, ops_done=log.ops_done,
        ops_attempted=log.ops_done, ops_succeeded=succeeded,
        ops_failed=sum(log.failures.values()), seconds=log.seconds,
        # a rate counts operations that did something
        ops_per_s=succeeded / log.seconds if log.seconds else 0.0,
        redirected={f"{a} -> {b}": n for (a, b), n in sorted(log.redirected.items())},
        op_sequence_sha256=log.digest, stopped_by=log.stopped_by,
        bytes_written=log.bytes_written, succeeded=dict(counts),
        failures={f"{op} {code}": n for (op, code), n in sorted(log.failures.items())},
        deleted_for_space=log.deleted_for_space, fstrims=log.fstrims,
        topped_up=ToppedUp(files=log.topped_up[0], bytes=log.topped_up[1]),
        # the utilisation it reached (the most any check saw) and left
        used_max=max((u for _, _, u in log.utilization), default=None),
        used_end=log.utilization[-1][2] if log.utilization else None,
        out_of_space=sum(n for (_, code), n in log.failures.items()
                         if code in ("ENOSPC", "EDQUOT")))
