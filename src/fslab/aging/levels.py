"""An aging level (workloads/aging_levels.py) as the aging config of one file system: its
settings validated as an aging config's, the relative ones scaled to the capacity, and
every parameter listed with its source (aging.json's `parameters`)."""

from __future__ import annotations

import dataclasses
from typing import Any

from fslab.aging.config import AgingConfig
from fslab.core.aging_record import Parameters
from fslab.core.errors import UserError
from fslab.workloads.aging_levels import PROBES, RELATIVE, AgeLevel, planned_ops
from fslab.workloads.provenance import Param, campaign, fslab

GiB = 1024**3
# Operations a recipe with no operation count is expected to take, for spacing its probes.
RECIPE_OP_BYTES = 8 * 1024  # versioned: about one small file's bytes per operation


def level_config(level: AgeLevel, capacity: int, seed: int) -> AgingConfig:
    """The level's aging config for a file system of `capacity` bytes, with `seed`."""
    values = level.values()
    relative = {key: values.pop(key) for key in list(values) if key in RELATIVE}
    from pydantic import TypeAdapter, ValidationError

    data = {"ops": None, "recipe": "interleaved", **values, "seed": seed}
    try:
        config = TypeAdapter(AgingConfig).validate_python(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        key = ".".join(str(part) for part in error["loc"])
        raise UserError(f"age level {level.name}: {key}: {error['msg']}") from None
    gib = capacity / GiB
    if relative.get("ops_per_gib"):
        config.ops = planned_ops(level, capacity)
    if relative.get("files_per_gib"):
        config.max_files = max(100, round(float(relative["files_per_gib"]) * gib))
    probes = int(relative.get("probes") or 0)
    if probes:
        config.probe_every = max(1, expected_ops(config, capacity) // probes)
        if relative.get("fstrim_at_probes"):
            config.fstrim_every = config.probe_every
    if not (config.ops or config.duration_s or config.bytes_limit or config.written
            or config.layout_target is not None or config.plateau
            or config.recipe == "interleaved"):
        raise UserError(f"age level {level.name}: give it a stop (ops, ops_per_gib, "
                        "duration_s, written, ...): a mix or versioned aging runs until one")
    try:
        config.validate()
    except UserError as exc:
        raise UserError(f"age level {level.name}: {exc}") from None
    return config


def with_fstrim(config: AgingConfig, fstrim: bool | None) -> AgingConfig:
    """The config trimmed at its probes (`True`), never (`False`), or as it is (None):
    the campaign's `fstrim` factor over the level's own setting."""
    if fstrim is None:
        return config
    every = (config.probe_every or max(1, (config.ops or 10_000) // PROBES)) if fstrim \
        else None
    return dataclasses.replace(config, fstrim_every=every, fstrim_seconds=None)


def expected_ops(config: AgingConfig, capacity: int) -> int:
    """About how many operations the aging takes: its count, or a recipe's estimate
    (interleaved: one per piece of the tree and one per file; versioned: by bytes)."""
    if config.ops:
        return config.ops
    if config.recipe == "interleaved":
        return int(config.fill * capacity / max(1, config.piece)) + config.tree_files
    if config.written:
        return int(config.written * capacity / RECIPE_OP_BYTES)
    return 10_000


def parameters(level: AgeLevel, config: AgingConfig,
               fstrim: bool | None = None) -> Parameters:
    """Every parameter of the aging with its value and source: the level's own (as the
    study or fslab or the campaign set them, the relative ones with what they came to
    here), then every other setting of the config, fslab's default; the campaign's
    `fstrim` factor over them when given."""
    out: Parameters = {}
    resolved = {"ops_per_gib": ("ops", config.ops), "files_per_gib": ("max_files",
                                                                      config.max_files),
                "probes": ("probe_every", config.probe_every),
                "fstrim_at_probes": ("fstrim_every", config.fstrim_every)}
    for key, param in level.settings.items():
        out[key] = param.to_json()
        if key in resolved:
            name, value = resolved[key]
            out[key]["here"] = f"{name} = {value}"
    taken = {resolved[key][0] for key in level.settings if key in resolved}
    default = Param(None, fslab("fslab's default for an aging config"))
    for field in dataclasses.fields(AgingConfig):
        if field.name in out or field.name in taken:
            continue
        value = getattr(config, field.name)
        out[field.name] = {**default.to_json(), "value": _jsonable(value)}
    out["seed"] = {"value": config.seed, **fslab("the campaign's seed, the level and the "
                                                 "iteration's (fslab age: --seed)").to_json()}
    if fstrim is not None:
        out["fstrim_at_probes"] = {
            "value": fstrim, **campaign("the campaign's fstrim factor, over the level's "
                                        "own").to_json(),
            "here": f"fstrim_every = {config.fstrim_every}"}
        out.pop("fstrim_every", None)
    return out


def _jsonable(value: Any) -> Any:
    return str(value) if value is not None and not isinstance(
        value, int | float | str | bool | dict | list) else value
