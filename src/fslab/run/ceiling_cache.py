"""Ceilings as data of the lab: LAB/ceilings.json, reused while the device and job are
the same.

A ceiling measured before a campaign (jobs not measured in rounds: ceiling.py) is a
property of the disk under the lab and the job, not of the campaign, so a second
campaign on the same lab and device reuses it instead of running the job twice more. A
disk's speed changes over days (a VM's host, a filling SSD), so an entry is reused for
REUSE_HOURS at most and then measured again; `--no-ceiling` skips ceilings altogether.

    {device: {job key: {"workload": name, "measured": unix time,
                        "ceiling": {op: {metric: value}}}}}

The job key is a hash of the job as the raw device runs it (direct I/O, its options and
sections, the raw image's size), so a changed block size, depth or size measures anew.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any

from fslab.results.store import write_atomic

CACHE_FILE = "ceilings.json"
REUSE_HOURS = 24.0


def job_key(workload: Any, image_bytes: int) -> str:
    """A stable hash of what the raw device runs for this job."""
    job = {"options": workload.options, "global": workload.global_options,
           "sections": workload.extra_sections, "image_bytes": image_bytes}
    text = json.dumps(job, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _read(lab_root: Path) -> dict[str, Any]:
    try:
        found = json.loads((lab_root / CACHE_FILE).read_text())
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def reusable(lab_root: Path, device: str, key: str,
             now: float | None = None) -> dict[str, dict[str, float]] | None:
    """The cached {op: {metric: value}} of this job on this device, if young enough."""
    entry = _read(lab_root).get(device, {}).get(key)
    if not isinstance(entry, dict) or not isinstance(entry.get("ceiling"), dict):
        return None
    age_hours = ((now or time.time()) - float(entry.get("measured", 0))) / 3600
    return entry["ceiling"] if 0 <= age_hours <= REUSE_HOURS else None


def remember(lab_root: Path, device: str,
             entries: dict[str, tuple[str, dict[str, dict[str, float]]]],
             now: float | None = None) -> None:
    """Add {key: (workload, ceiling)} measured just now to the lab's ceilings.json."""
    if not entries:
        return
    cache = _read(lab_root)
    have = cache.setdefault(device, {})
    for key, (workload, ceiling) in entries.items():
        have[key] = {"workload": workload, "measured": now or time.time(), "ceiling": ceiling}
    lab_root.mkdir(parents=True, exist_ok=True)
    write_atomic(lab_root / CACHE_FILE, json.dumps(cache, indent=1, sort_keys=True))
