"""A user's fio job file: read, checked, and run as written inside the target.

fio's own text is the job (no preset): fslab sets its directory, refuses a file that would
write outside the target, and reads from it what it must know ahead (its options, how
long it runs).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from fslab.core.errors import UserError

# A fio job's options as fslab holds them: each a value fio reads as text in its job file
# (a size as "4k" or 4096, a flag as 1 or true); None takes an option out (an override).
FioValue = str | int | float | bool | None
FioOptions = dict[str, FioValue]


def count_of(options: FioOptions, key: str, default: int = 1) -> int:
    """A count option (numjobs, nrfiles) as a number ('4' and 4 alike)."""
    value = options.get(key)
    return default if value is None else int(str(value))

_SECTION = re.compile(r"^\s*\[([^\]]+)\]\s*$")
_OPTION = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:=\s*(.*?))?\s*$")


def section_names(text: str) -> list[str]:
    """Every [section] of a job file, [global] too, in order."""
    return [m.group(1) for line in text.splitlines() if (m := _SECTION.match(line))]


def check_job_file(text: str, source: str) -> None:
    """Refuse job files that would write outside the target (absolute filename=, devices)."""
    for number, line in enumerate(text.splitlines(), 1):
        match = _OPTION.match(line)
        if not match or line.lstrip().startswith((";", "#")):
            continue
        key, value = match.group(1).lower(), (match.group(2) or "")
        if key in ("filename", "filename_format") and any(
            part.startswith("/") for part in value.split(":")
        ):
            raise UserError(
                f"{source}:{number}: {key}={value} points outside the target; fslab runs a "
                "job file inside the target directory, so use a relative name or none"
            )
        if key == "include":
            raise UserError(f"{source}:{number}: include is not supported; inline the file")


def fio_path(path: Path | str) -> str:
    """A path as fio's directory= and filename= read it: ':' separates several there, so
    a ':' of the path itself is written '\\:' (fio's HOWTO, directory and filename);
    spaces, '=', ',' and '/' need nothing."""
    return str(path).replace(":", "\\:")


def set_directory(text: str, directory: Path) -> str:
    """Return the job file with every directory= removed and the target's in [global]."""
    lines = [line for line in text.splitlines()
             if not re.match(r"^\s*directory\s*=", line)]
    setting = f"directory={fio_path(directory)}"
    for index, line in enumerate(lines):
        match = _SECTION.match(line)
        if match and match.group(1).strip() == "global":
            lines.insert(index + 1, setting)
            return "\n".join(lines) + "\n"
    return "\n".join(["[global]", setting, *lines]) + "\n"


def job_sections(text: str) -> list[tuple[str, FioOptions]]:
    """Every job section with the options fio gives it: the [global] sections above it,
    then its own (fio reads a [global] for the jobs after it)."""
    shared: FioOptions = {}
    found: list[tuple[str, FioOptions]] = []
    current: FioOptions | None = None
    for line in text.splitlines():
        if line.lstrip().startswith((";", "#")):
            continue
        if section := _SECTION.match(line):
            name = section.group(1).strip()
            current = shared if name == "global" else dict(shared)
            if name != "global":
                found.append((name, current))
            continue
        match = _OPTION.match(line)
        if match and current is not None:
            value = match.group(2)
            current[match.group(1).lower()] = value if value is not None else True
    return found


def flat_options(text: str) -> FioOptions:
    """Options of a job file, last one winning: enough for runtime and space estimates."""
    found: FioOptions = {}
    for line in text.splitlines():
        if line.lstrip().startswith((";", "#")) or _SECTION.match(line):
            continue
        match = _OPTION.match(line)
        if match:
            found[match.group(1).lower()] = match.group(2) if match.group(2) is not None else True
    return found


_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(us|ms|s|m|h|d)?\s*$", re.IGNORECASE)
_UNIT_SECONDS = {"us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def seconds(value: Any) -> float:
    """fio's time value (seconds by default; us, ms, s, m, h, d suffixes) in seconds."""
    match = _DURATION.match(str(value))
    if not match:
        return 0.0
    return float(match.group(1)) * _UNIT_SECONDS[(match.group(2) or "s").lower()]


def job_text_times(text: str) -> tuple[float, float] | None:
    """(runtime, ramp) of a job file's longest run: every job section's runtime and ramp
    (its own or the global one) added up, as if each were stonewalled; None if one has no
    runtime."""
    sections: list[tuple[str, dict[str, str]]] = []
    for raw in text.splitlines():
        line = raw.split(";", 1)[0].split("#", 1)[0].strip()
        if line.startswith("[") and line.endswith("]"):
            sections.append((line[1:-1].strip(), {}))
        elif "=" in line and sections:
            key, value = line.split("=", 1)
            sections[-1][1][key.strip().lower()] = value.strip()
    shared = next((opts for name, opts in sections if name == "global"), {})
    runtime = ramp = 0.0
    for name, options in sections:
        if name == "global":
            continue
        merged = {**shared, **options}
        if not merged.get("runtime"):
            return None
        runtime += seconds(merged["runtime"])
        ramp += seconds(merged.get("ramp_time", 0))
    return (runtime, ramp) if any(name != "global" for name, _ in sections) else None
