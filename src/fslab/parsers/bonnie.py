"""bonnie++ CSV lines (format 1.98, bonnie++ 1.98-2.00) -> Measurements.

Field layout as read by bonnie++'s own bon_csv2txt: identity (0-8), sequential output
per-char / block / rewrite, sequential input per-char / block and random seeks, each a
rate and a %CPU (9-20), file-test parameters (21-25), sequential and random create /
read / delete, each a rate and a %CPU (26-37), then the latencies of the 12 tests
(38-49). "+++++" means the test ran too fast to measure: stored as missing (NaN) with
that note, never as zero.
"""

from __future__ import annotations

import math
import re

from fslab.core.errors import UserError
from fslab.core.metrics import Measurement

CSV_VERSION = "1.98"
TOO_FAST_NOTE = "too fast to measure (bonnie++ +++++)"
# (op, metric of the rate, index of the rate; its %CPU follows it)
IO_TESTS = [
    ("seq_output_char", "bw_bytes", 9),
    ("seq_output_block", "bw_bytes", 11),
    ("seq_output_rewrite", "bw_bytes", 13),
    ("seq_input_char", "bw_bytes", 15),
    ("seq_input_block", "bw_bytes", 17),
    ("random_seeks", "ops_per_s", 19),
]
FILE_TESTS = [
    ("seq_create", 26), ("seq_read", 28), ("seq_delete", 30),
    ("random_create", 32), ("random_read", 34), ("random_delete", 36),
]
LATENCY_START = 38
_LATENCY = re.compile(r"^(\d+(?:\.\d+)?)(ns|us|ms|s)$")
_NS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}


class BonnieParseError(UserError, ValueError):
    """No bonnie++ CSV line in the text."""


def find_csv_line(text: str) -> list[str]:
    """The fields of the first bonnie++ CSV result line in `text`."""
    for line in text.splitlines():
        fields = line.strip().split(",")
        if fields[0] == CSV_VERSION and len(fields) >= LATENCY_START:
            return fields
    raise BonnieParseError("no bonnie++ CSV result line (format 1.98) found")


def parse_bonnie(text: str) -> list[Measurement]:
    """Every rate, %CPU and latency of one bonnie++ result line."""
    try:
        return _parse(find_csv_line(text))
    except ValueError as exc:
        if isinstance(exc, BonnieParseError):
            raise
        raise BonnieParseError(f"bonnie++ CSV line with a field that is not a number: "
                               f"{exc}") from None


def _parse(fields: list[str]) -> list[Measurement]:
    out: list[Measurement] = []
    tests = [(op, metric, index) for op, metric, index in IO_TESTS]
    tests += [(op, "ops_per_s", index) for op, index in FILE_TESTS]
    for position, (op, metric, index) in enumerate(tests):
        rate = fields[index] if index < len(fields) else ""
        cpu = fields[index + 1] if index + 1 < len(fields) else ""
        if rate == "" and cpu == "":
            continue  # the test was skipped (e.g. -f), not measured
        scale = 1024.0 if metric == "bw_bytes" else 1.0  # bonnie++ reports K/sec
        out.append(_value(op, metric, rate, scale))
        out.append(_value(op, "cpu_pct", cpu, 1.0))
        latency_index = LATENCY_START + position
        if latency_index < len(fields) and fields[latency_index]:
            out.append(Measurement(op, "lat_max_ns", _latency_ns(fields[latency_index])))
    return out


def _value(op: str, metric: str, text: str, scale: float) -> Measurement:
    if text.strip("+") == "" and text:
        return Measurement(op, metric, math.nan, note=TOO_FAST_NOTE)
    return Measurement(op, metric, float(text) * scale)


def _latency_ns(text: str) -> float:
    match = _LATENCY.match(text.strip())
    if not match:
        return math.nan
    return float(match.group(1)) * _NS[match.group(2)]
