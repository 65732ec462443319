"""Aging directories from before an aging run was a results directory, upgraded in place.

Aging format 1–2 (aging.json, oplog.parquet, utilization.csv, fragmentation.json and the
image at the top of the directory) is read as results format 4 holds it: the files are
linked into runs/aging/ beside a run record, parsed by the parse stage, and the
directory gains format.json, campaign.toml and environment.json. Nothing is removed or
rewritten, so the image and image.json stay where campaigns point at them. A directory
stamped with a newer aging format is refused in one line (fslab.core.dirformat).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from fslab.aging.age import (
    aging_run_record,
    campaign_settings,
    run_dir,
    save_aging_run,
)
from fslab.aging.config import AgingConfig
from fslab.core.dirformat import DirFormat
from fslab.core.environment_record import Environment
from fslab.core.errors import UserError
from fslab.core.run_parts import TargetDescription
from fslab.parsers.aging_kind import AGING_RECORD, OP_LOG, PROBES, UTILIZATION
from fslab.results.format_history import FORMAT
from fslab.results.store import ResultsDir, write_json
from fslab.targets import TargetSpec

AGING = DirFormat("aging", "aging.json", unstamped=1, history={
    1: "aging.json, oplog.parquet, utilization.csv, fragmentation.json, image + image.json",
    2: "latency.csv and aging.json latency_us (per-operation medians and means with "
       "intervals); image.json: fs_bytes, made_on, as_target; zstd and metadata images",
})


def is_old_aging_dir(path: Path) -> bool:
    """An aging directory written before aging runs were results directories."""
    path = Path(path)
    return (path / AGING.marker).is_file() and not (path / FORMAT.marker).exists()


def upgrade(path: Path) -> ResultsDir:
    """Make an old aging directory a results directory (see the module doc)."""
    path = Path(path)
    _, record = AGING.read(path)  # a newer aging format: one line, nothing touched
    raw = run_dir(path)
    raw.mkdir(parents=True, exist_ok=True)
    for name in (OP_LOG, UTILIZATION, PROBES, AGING_RECORD):
        if not (path / name).exists():
            raise UserError(f"{path} is an aging directory without {name}: it cannot be read")
        _link(path / name, raw / name)
    described = TargetDescription.from_json(record.get("target") or {})
    fs = described.fs or "unknown"
    config = AgingConfig(**{k: v for k, v in (record.get("config") or {}).items()
                            if k in AgingConfig.__dataclass_fields__})
    spec = TargetSpec(name=fs, fs=fs, size=described.image_size or 0)
    results = ResultsDir(path)
    results.write_campaign(campaign_settings(
        path.name, spec, config, str((record.get("image") or {}).get("kind", "none"))))
    results.write_environment(Environment(
        targets={fs: described}, note=f"upgraded from aging format {record.get('format', 1)}"))
    started = float(record.get("started", 0.0) or 0.0)
    save_aging_run(results, aging_run_record(path.name, spec, described, config, started))
    write_json(path / FORMAT.marker, FORMAT.stamp())  # last: the upgrade counts once whole
    return ResultsDir.open(path)


def _link(source: Path, destination: Path) -> None:
    if destination.exists():
        return
    try:
        os.link(source, destination)
    except OSError:
        shutil.copy2(source, destination)
