"""`fslab age`'s flags as an aging config and a target (the CLI only parses them)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fslab.aging.config import AgingConfig, load_config, mix_from_csv
from fslab.aging.levels import level_config, parameters
from fslab.core.aging_record import Parameters
from fslab.core.errors import UserError
from fslab.core.units import parse_duration, parse_size
from fslab.plan.loading import resolve
from fslab.plan.schema import CampaignFile, Overrides
from fslab.plan.target_entries import entry_from_flag
from fslab.targets import TargetSpec
from fslab.targets.profiles import PROFILES
from fslab.workloads.aging_levels import LEVELS, AgeLevel
from fslab.workloads.provenance import Param, campaign, study


@dataclass(frozen=True)
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
    as_published: bool = False  # the aging thesis's own settings (workloads/aging_levels.py)


@dataclass
class AgingRequest:
    """What `fslab age` runs: the target, the aging config, every parameter with its
    source (with --as-published), the image to keep and what cannot be reproduced here."""

    spec: TargetSpec
    config: AgingConfig
    image: str
    parameters: Parameters | None = None
    cannot: tuple[str, ...] = ()


def aging_request(flags: AgingFlags, spec: TargetSpec, image: str | None) -> AgingRequest:
    """The flags as a request: fslab's settings, or with --as-published the thesis's at the
    utilisation asked for (80 % unless --utilization says 99 % or another share), each
    flag given over them (the campaign's, in the sources) and its metadata image."""
    if not flags.as_published:
        return AgingRequest(spec, aging_settings(flags), image or "sparse")
    if flags.config or flags.mix or flags.recipe:
        raise UserError("--as-published ages with the thesis's own settings: give no "
                        "--config, --mix or --recipe (flags such as --ops or --utilization "
                        "change one setting each)")

    wanted = flags.utilization
    level = LEVELS["thesis-99" if wanted is not None and wanted >= 0.9 else "thesis-80"]
    given = {key: getattr(flags, key) for key in (
        "ops", "utilization", "fstrim_every", "fstrim_seconds", "probe_every", "stop_file",
        "pause_file", "layout_target", "plateau") if getattr(flags, key) is not None}
    if "utilization" in given and abs(given["utilization"] - level.values()["utilization"]) \
            < 1e-9:
        given.pop("utilization")
    settings = dict(level.settings)
    if "utilization" in given:
        settings["low_water"] = Param(round(given["utilization"] - 0.03, 3),
                                      campaign("--utilization less 3 % (the thesis's rule "
                                               "as fslab reads it)"))
    if "ops" in given:
        settings.pop("ops_per_gib", None)
    settings.update({key: Param(value, campaign(f"--{key.replace('_', '-')} given"))
                     for key, value in given.items()})
    chosen = AgeLevel(level.name, level.description, settings, level.study, level.cannot)
    config = level_config(chosen, spec.size, flags.seed)
    listed = parameters(chosen, config)
    kept = image or "metadata"
    listed["image"] = (Param(kept, campaign("--image given")) if image else Param(
        kept, study_source("section 5.2: 'only metadata of created file system is used' "
                           "(e2image -Q, xfs_metadump)"))).to_json()

    made = (*(PROFILES[spec.fs].default_mkfs_options if spec.fs in PROFILES else ()),
            *spec.mkfs_options)
    listed["mkfs_options"] = Param(" ".join(made) or "-", study_source(
        "section 4.2: ext4 'created with additional option, disabling lazy init' (fslab's "
        "ext4 always is: -E lazy_itable_init=0,lazy_journal_init=0); xfs as standard"
    )).to_json()
    return AgingRequest(spec, config, kept, listed, level.cannot)


def study_source(where: str) -> Any:
    return study("aging-thesis", where)


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
    entry = entry_from_flag(fs)
    if not fs.startswith("dir:"):
        entry = entry.model_copy(update={
            "mkfs_options": mkfs_options or [], "mount_options": mount_options or "",
            "direct_io": direct_io, "device": device or ""})
    (spec,) = resolve(CampaignFile(target=[entry]), Overrides(image_size=size),
                      Path.cwd()).targets
    return spec
