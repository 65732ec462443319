"""Parse sizes and durations the way fio does, and print values with correct unit labels.

Internally every value is in SI base units (bytes, bytes/s, ns, 1/s); these helpers only
turn them into text a person reads, choosing a scale that fits (µs is not ms; MiB/s is
not MB/s).
"""

from __future__ import annotations

import math
import re

from fslab.core.errors import UserError

# Binary multipliers, as fio interprets k/m/g/t with its default kb_base=1024.
_SIZE_UNITS = {
    "": 1,
    "b": 1,
    "k": 1024,
    "kb": 1024,
    "kib": 1024,
    "m": 1024**2,
    "mb": 1024**2,
    "mib": 1024**2,
    "g": 1024**3,
    "gb": 1024**3,
    "gib": 1024**3,
    "t": 1024**4,
    "tb": 1024**4,
    "tib": 1024**4,
}
_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$")
_DURATION_UNITS = {"": 1, "s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600}


def parse_size(text: str | int) -> int:
    """Return a size like '512M', '2G', '4k' or 4096 in bytes (binary multiples, as fio)."""
    if isinstance(text, bool):
        raise UserError(f"bad size {text!r}: expected a number with an optional unit like 512M")
    if isinstance(text, int):
        if text <= 0:
            raise UserError(f"bad size {text}: must be positive")
        return text
    match = _SIZE_RE.match(str(text))
    unit = match.group(2).lower() if match else None
    if not match or unit not in _SIZE_UNITS:
        raise UserError(
            f"bad size {text!r}: expected a number with an optional unit K, M, G or T "
            "(binary, as fio), e.g. 512M or 2G"
        )
    value = int(float(match.group(1)) * _SIZE_UNITS[unit])
    if value <= 0:
        raise UserError(f"bad size {text!r}: must be positive")
    return value


def parse_duration(text: str | int) -> int:
    """Return a duration like '30', '30s' or '2m' in whole seconds."""
    if isinstance(text, int) and not isinstance(text, bool):
        seconds = text
    else:
        match = re.match(r"^\s*(\d+)\s*([a-z]*)\s*$", str(text).lower())
        if not match or match.group(2) not in _DURATION_UNITS:
            raise UserError(f"bad duration {text!r}: expected seconds, e.g. 5, 30s or 2m")
        seconds = int(match.group(1)) * _DURATION_UNITS[match.group(2)]
    if seconds <= 0:
        raise UserError(f"bad duration {text!r}: must be at least 1 second")
    return seconds


_NS_UNITS = {"ns": 1.0, "us": 1e3, "µs": 1e3, "ms": 1e6, "s": 1e9}
_RATE_UNITS = {"b/s": 1.0, "kb/s": 1e3, "mb/s": 1e6, "gb/s": 1e9, "kib/s": 1024.0,
               "mib/s": 1024.0**2, "gib/s": 1024.0**3}


def parse_duration_ns(text: str) -> float:
    """'2ms', '500us', '1.5s', '800ns' -> nanoseconds (the unit latency is stored in)."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(ns|us|µs|ms|s)\s*", str(text).lower())
    if not match:
        raise UserError(f"bad latency {text!r}: a number with ns, us, ms or s, e.g. 2ms")
    return float(match.group(1)) * _NS_UNITS[match.group(2)]


def parse_rate(text: str) -> float:
    """'500MiB/s', '1.2GB/s' -> bytes/s (MiB is 2^20, MB 10^6)."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([a-z]+/s)\s*", str(text).lower())
    if not match or match.group(2) not in _RATE_UNITS:
        raise UserError(f"bad rate {text!r}: a number with B/s, MB/s, MiB/s, GB/s or GiB/s")
    return float(match.group(1)) * _RATE_UNITS[match.group(2)]


# Two results within this of each other are "the same" (analysis/pairs/pair.py),
# unless a campaign or command says otherwise (--margin): the one default of every command.
DEFAULT_MARGIN = 0.10


def parse_margin(text: str | float) -> float:
    """'10%', '10', 0.1 -> 0.1 (a fraction); one clear error otherwise."""
    raw = str(text).strip()
    try:
        value = float(raw.rstrip("%"))
    except ValueError:
        raise UserError(f"bad margin {text!r}: use a percentage, e.g. 10%") from None
    fraction = value / 100 if raw.endswith("%") or value >= 1 else value
    if not 0 < fraction < 1:
        raise UserError(f"bad margin {text!r}: between 0 % and 100 %, e.g. 10%")
    return fraction


def format_bound(value: float) -> str:
    """An interval bound with enough digits that one excluding 1 never reads as 1."""
    if value != value or math.isinf(value):
        return "n/a"
    for digits in range(3, 9):
        text = f"{value:.{digits}g}"
        if float(text) != 1.0 or value == 1.0:
            return text
    return f"{value:.9g}"


def format_duration(seconds: float, rough: bool = False) -> str:
    """'1 h 05 min', '3 min 20 s', '45 s'; `rough` (a time to come, an estimate): '45 s',
    '4 min', '1.5 h'."""
    if rough:
        return (f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.0f} min"
                if seconds < 5400 else f"{seconds / 3600:.1f} h")
    hours, rest = divmod(round(seconds), 3600)
    minutes, secs = divmod(rest, 60)
    return (f"{hours} h {minutes:02d} min" if hours else
            f"{minutes} min {secs:02d} s" if minutes else f"{secs} s")


def format_bytes(value: float) -> str:
    """Format a byte count with binary units: '512 MiB'."""
    return _scaled(value, 1024, ["B", "KiB", "MiB", "GiB", "TiB"])


def format_rate(value: float) -> str:
    """Format bytes/s with binary units: '123 MiB/s'."""
    return _scaled(value, 1024, ["B/s", "KiB/s", "MiB/s", "GiB/s", "TiB/s"])


def format_ns(value: float) -> str:
    """Format nanoseconds as ns, µs, ms or s, whichever keeps the number readable."""
    return _scaled(value, 1000, ["ns", "µs", "ms", "s"])


def format_count_rate(value: float) -> str:
    """Format an operation rate (IOPS, files/s) with k/M suffixes."""
    return _scaled(value, 1000, ["", "k", "M", "G"])


def format_value(value: float, unit: str) -> str:
    """Format a value stored in `unit` (one of the metrics table's units) for display."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if unit == "bytes/s":
        return format_rate(value)
    if unit == "bytes":
        return format_bytes(value)
    if unit == "ns":
        return format_ns(value)
    if unit == "s":
        return format_ns(value * 1e9)
    if unit == "1/s":
        return format_count_rate(value)
    if unit == "%":
        return f"{value:.1f} %"
    return f"{value:.3g} {unit}".strip()


def display_scale(values: list[float], unit: str) -> tuple[float, str]:
    """Choose one divisor and label that suits all `values` (for a table column or axis)."""
    finite = [abs(v) for v in values if v is not None and math.isfinite(v) and v != 0]
    ref = min(finite) if finite else 1.0
    steps: list[tuple[float, str]]
    if unit == "bytes/s":
        steps = [(1, "B/s"), (1024, "KiB/s"), (1024**2, "MiB/s"), (1024**3, "GiB/s")]
    elif unit == "ns":
        steps = [(1, "ns"), (1e3, "µs"), (1e6, "ms"), (1e9, "s")]
    elif unit == "bytes":
        steps = [(1, "B"), (1024, "KiB"), (1024**2, "MiB"), (1024**3, "GiB")]
    elif unit == "1/s":
        return 1.0, "/s"
    else:
        return 1.0, unit
    chosen = steps[0]
    for factor, label in steps:
        if ref >= factor:
            chosen = (factor, label)
    return float(chosen[0]), chosen[1]


def _scaled(value: float, base: int, labels: list[str]) -> str:
    scaled = float(value)
    index = 0
    while abs(scaled) >= base and index < len(labels) - 1:
        scaled /= base
        index += 1
    text = f"{scaled:.3g}" if abs(scaled) < 1000 else f"{scaled:.0f}"
    label = labels[index]
    return f"{text} {label}".strip() if label else text


def turned(ratio: float, low: float, high: float) -> tuple[float, float, float]:
    """b/a from a/b with its interval: (1/ratio, 1/high, 1/low). An unbounded end stays
    unbounded (1/0 = ∞, 1/∞ = 0) and an unknown one unknown (NaN): the one place a
    ratio interval is turned around."""
    def inverse(value: float) -> float:
        if value != value:
            return math.nan
        if value == 0:
            return math.inf
        return 0.0 if math.isinf(value) else 1 / value

    return inverse(ratio), inverse(high), inverse(low)
