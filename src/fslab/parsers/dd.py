"""dd's stderr -> one sample per "copied" line, in bytes/s and seconds.

dd prints e.g. "104857600 bytes (105 MB, 100 MiB) copied, 0.0503 s, 2.1 GB/s" (or, before
coreutils 8.24, "104857600 bytes (105 MB) copied, 0.5 s, 210 MB/s"). Its rate is rounded
to two or three digits and may be in kB/s, MB/s, GB/s (decimal) or KiB/s, MiB/s, GiB/s:
fslab computes bytes/s from the exact byte count and seconds, and reads the printed rate
only when one of them is missing.
"""

from __future__ import annotations

import re

from fslab.core.metrics import Measurement

_LINE = re.compile(
    r"^(?P<bytes>\d+) bytes(?: \([^)]*\))? copied, (?P<seconds>[\d.,eE+-]+) s, "
    r"(?P<rate>[\d.,]+) (?P<unit>[kKMGTP]?i?B)/s\s*$")
_UNITS = {
    "B": 1, "kB": 1e3, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12, "PB": 1e15,
    "KiB": 1024, "kiB": 1024, "MiB": 1024**2, "GiB": 1024**3, "TiB": 1024**4, "PiB": 1024**5,
}


def rate_in_bytes(rate: str, unit: str) -> float:
    """dd's printed rate in bytes/s ('2.1', 'GB' -> 2.1e9; decimal commas accepted)."""
    return float(rate.replace(",", ".")) * _UNITS[unit]


def parse_dd(text: str, op: str = "copy") -> list[Measurement]:
    """Every "copied" line of a dd log as one sample (sample = its order in the log)."""
    out: list[Measurement] = []
    matches = (m for line in text.splitlines() if (m := _LINE.match(line.strip())))
    for match in matches:
        sample = len(out) // 2
        size = int(match.group("bytes"))
        try:
            seconds = float(match.group("seconds").replace(",", "."))
            printed = rate_in_bytes(match.group("rate"), match.group("unit"))
        except ValueError:  # "1.2.3 s": not a line dd printed
            continue
        rate = size / seconds if seconds > 0 else printed
        out.append(Measurement(op, "bw_bytes", rate, sample=sample))
        out.append(Measurement(op, "seconds", seconds, sample=sample))
    return out
