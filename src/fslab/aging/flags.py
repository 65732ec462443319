"""`fslab age`'s flags as an aging config and a target (the CLI only parses them)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from fslab.aging.config import AgingConfig, load_config, mix_from_csv
from fslab.core.errors import UserError
from fslab.core.units import parse_duration, parse_size
from fslab.targets import TargetSpec


@dataclass
class AgingFlags:
    """What `fslab age` was given (None: not given)."""

    seed: int = 1
    config: Path | None = None
    mix: Path | None = None
    recipe: str | None = None
    ops: int | None = None
    duration: str | None = None
    bytes_limit: str | None = None
    written: str | None = None
    layout_target: float | None = None
    plateau: float | None = None
    utilization: float | None = None
    stop_file: Path | None = None
    pause_file: Path | None = None
    fstrim_every: int | None = None
    fstrim_seconds: float | None = None
    probe_every: int | None = None


def aging_settings(flags: AgingFlags) -> AgingConfig:
    """The aging config: a --config file's, with the flags over it. Without a config, a
    mix or --ops, the default recipe (interleaved) ages measurably in minutes."""
    settings = load_config(flags.config) if flags.config else AgingConfig(ops=None)
    settings.seed = flags.seed
    if flags.ops is not None:
        settings.ops = flags.ops
    if flags.duration:
        settings.duration_s = float(parse_duration(flags.duration))
    if flags.bytes_limit:
        settings.bytes_limit = parse_size(flags.bytes_limit)
    if flags.recipe is not None:
        settings.recipe = flags.recipe
    elif not (flags.config or flags.mix or flags.ops):
        settings.recipe = "interleaved"
    if flags.written is not None:
        try:
            settings.written = float(flags.written.lower().rstrip("x"))
        except ValueError:
            raise UserError(f"--written takes a multiple of the capacity, e.g. 20x, not "
                            f"{flags.written!r}") from None
    for name in ("layout_target", "plateau", "utilization", "stop_file", "pause_file",
                 "fstrim_every", "fstrim_seconds", "probe_every"):
        value = getattr(flags, name)
        if value is not None:
            setattr(settings, name, value)
    if flags.mix:
        settings.mix = mix_from_csv(flags.mix)
    if not (settings.ops or settings.duration_s or settings.bytes_limit or settings.stop_file
            or settings.written or settings.layout_target is not None or settings.plateau
            or settings.recipe == "interleaved"):
        settings.ops = 10_000
    return settings


def aging_target(fs: str, size: str, mkfs_options: str | None = None,
                 mount_options: str | None = None, direct_io: bool | None = None,
                 device: str | None = None) -> TargetSpec:
    """The target to age, from the options a [[target]] would take."""
    from fslab.plan.loading import resolve
    from fslab.plan.schema import CampaignFile, Overrides
    from fslab.plan.target_entries import entry_from_flag

    entry = entry_from_flag(fs)
    if not fs.startswith("dir:"):
        entry = entry.model_copy(update={
            "mkfs_options": mkfs_options or [], "mount_options": mount_options or "",
            "direct_io": direct_io, "device": device or ""})
    (spec,) = resolve(CampaignFile(target=[entry]), Overrides(image_size=size),
                      Path.cwd()).targets
    return spec
