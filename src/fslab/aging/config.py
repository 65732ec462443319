"""Aging configuration: the operation mix, file choice, sizes, stop and maintenance rules."""

from __future__ import annotations

import csv
from dataclasses import asdict, dataclass, field
from pathlib import Path

from fslab.core.errors import UserError
from fslab.core.toml_file import read_toml
from fslab.workloads.agedfiles import LOGNORMAL_MU, LOGNORMAL_SIGMA
from fslab.workloads.aging_levels import RECIPES

OPS = ("create", "write", "append", "truncate", "delete", "read", "random_read",
       "random_write", "rename")
# A mix that grows the file set while churning it, after fs-drift's defaults.
DEFAULT_MIX = {"create": 12, "write": 8, "append": 14, "truncate": 4, "delete": 8,
               "read": 18, "random_read": 16, "random_write": 14, "rename": 6}


@dataclass
class AgingConfig:
    """Everything that defines an aging run; with the seed it fixes the op sequence."""

    seed: int = 1
    ops: int | None = 10_000
    duration_s: float | None = None
    bytes_limit: int | None = None
    stop_file: Path | None = None
    pause_file: Path | None = None
    mix: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_MIX))
    fsync_probability: float = 0.0
    fdatasync_probability: float = 0.0
    max_files: int = 10_000
    file_choice: str = "uniform"  # uniform | gaussian | sequential (file i at op i)
    center: float = 0.5  # gaussian centre, as a share of max_files
    stddev: float = 0.1  # gaussian spread, as a share of max_files
    velocity: float = 0.0  # files the centre moves per operation (a drifting working set)
    sizes: str = "lognormal"  # lognormal | fixed | uniform
    mu: float = LOGNORMAL_MU
    sigma: float = LOGNORMAL_SIGMA
    pareto_alpha: float | None = None  # heavier tail: sizes above the median follow Pareto
    size: int = 4096  # fixed size, or uniform minimum
    size_max: int = 16 * 1024**2  # cap (and uniform maximum)
    io_size: int = 4096  # random read / write size
    levels: int = 2
    dirs_per_level: int = 10
    utilization: float | None = None  # keep used space at or below this share
    low_water: float | None = None  # delete down to this share (default utilization - 5 %)
    # end at the utilisation: after the stop, new files fill the file system up to it, so
    # every file system ends an aging of one level equally full
    finish_full: bool = False
    check_every: int = 64  # operations between utilisation checks
    fstrim_every: int | None = None  # operations between fstrim runs
    fstrim_seconds: float | None = None  # seconds between fstrim runs
    probe_every: int | None = None  # operations between fragmentation probes
    # What to run: the fs-drift-like op mix, or a recipe (aging/recipes.py).
    recipe: str = "mix"  # mix | interleaved | versioned
    # Stop when a target is reached, besides ops / duration / bytes:
    written: float | None = None  # bytes written as a multiple of the capacity
    layout_target: float | None = None  # the layout score fell to this (at a probe)
    plateau: float | None = None  # layout score and free extents changed < this share...
    plateau_probes: int = 3  # ... over this many probes in a row
    # Recipes' tree: files, the piece a file grows by per round (interleaved), the share
    # of the capacity the tree fills.
    tree_files: int = 4000
    piece: int = 4096
    fill: float = 0.5
    version_change: float = 0.1  # versioned: share of files rewritten per version
    version_add: float = 0.03  # ... added
    version_delete: float = 0.02  # ... deleted

    def validate(self) -> None:
        unknown = sorted(set(self.mix) - set(OPS))
        if unknown:
            raise UserError(f"unknown aging operation {', '.join(unknown)} "
                            f"(known: {', '.join(OPS)})")
        if not any(w > 0 for w in self.mix.values()):
            raise UserError("the operation mix needs at least one positive weight")
        if any(w < 0 for w in self.mix.values()):
            raise UserError("operation weights must not be negative")
        if self.file_choice not in ("uniform", "gaussian", "sequential"):
            raise UserError("file choice must be uniform, gaussian or sequential")
        if self.sizes not in ("lognormal", "fixed", "uniform"):
            raise UserError("sizes must be lognormal, fixed or uniform")
        if self.utilization is not None and not 0.05 <= self.utilization <= 0.999:
            raise UserError("utilization must be between 0.05 and 0.999, e.g. 0.8")
        if self.recipe not in RECIPES:
            raise UserError(f"unknown aging recipe {self.recipe!r} (known: "
                            f"{', '.join(RECIPES)})")
        if not (self.ops or self.duration_s or self.bytes_limit or self.stop_file
                or self.written or self.layout_target is not None or self.plateau
                or self.recipe == "interleaved"):
            raise UserError("give a stop condition: ops, duration, bytes, written, a "
                            "layout target, a plateau or a stop file")
        if self.written is not None and self.written <= 0:
            raise UserError("written must be a positive multiple of the capacity, e.g. 20x")
        if not 0.01 <= self.fill <= 0.95:
            raise UserError("fill must be between 0.01 and 0.95 of the capacity")
        if self.tree_files < 1 or self.piece < 512:
            raise UserError("tree_files must be positive and piece at least 512 bytes")
        if self.max_files < 1 or self.levels < 0 or self.dirs_per_level < 1:
            raise UserError("max_files, levels and dirs_per_level must be positive")

    @property
    def low_mark(self) -> float | None:
        if self.utilization is None:
            return None
        return self.low_water if self.low_water is not None else self.utilization - 0.05

    def to_json(self) -> dict[str, object]:
        """Every setting as JSON (paths as text): aging.json's `config`, campaign.toml's
        `aging` table."""
        return {k: str(v) if isinstance(v, Path) else v for k, v in asdict(self).items()}


def load_config(path: Path) -> AgingConfig:
    """An AgingConfig from TOML (its keys are AgingConfig's fields; `mix` a table)."""
    import dataclasses

    data = read_toml(path, "aging config")
    data = data.get("aging", data)
    known = {f.name for f in dataclasses.fields(AgingConfig)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise UserError(f"{path}: unknown aging key {', '.join(unknown)}")
    from pydantic import TypeAdapter, ValidationError

    try:  # types checked strictly enough that validate() compares numbers with numbers
        return TypeAdapter(AgingConfig).validate_python(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"])
        raise UserError(f"{path}: {where}: {error['msg']}") from None


def mix_from_csv(path: Path) -> dict[str, float]:
    """An operation mix from a CSV of op,share lines (a header line is allowed)."""
    mix: dict[str, float] = {}
    try:
        with path.open() as handle:
            for row in csv.reader(handle):
                if not row or row[0].strip().lower() in ("op", "operation"):
                    continue
                mix[row[0].strip()] = float(row[1])
    except (OSError, ValueError, IndexError) as exc:
        raise UserError(f"cannot read the operation mix {path}: {exc}") from exc
    return mix
