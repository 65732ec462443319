"""A campaign's targets: the [[target]] table, the --fs flag, and what they resolve to
(a TargetSpec each, checked: known kind, a usable name, an image that exists)."""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from fslab.core.errors import UserError
from fslab.core.units import parse_size
from fslab.plan.levels import ZFS_PREFIX, level_text
from fslab.targets import TargetSpec, registry_entry
from fslab.targets.images import check_usable
from fslab.targets.zfs_pool import POOL_FIELDS

DEFAULT_FS = ("ext4", "xfs", "btrfs")
ZFS_KINDS = ("zfs", "zfs-mirror")
ZFS_CACHES = ("primarycache", "secondarycache")  # dataset properties with a field of their own


class TargetEntry(BaseModel):
    """One [[target]] table."""

    model_config = ConfigDict(extra="forbid")
    name: str | None = None
    fs: str
    image_size: str | int | None = None
    # A list of levels (mount_options = ["noatime", "relatime"], mkfs_options as a list of
    # lists, scale and zfs options as lists) sweeps this target alone (plan/sweep.py).
    mkfs_options: list[str] | str | list[list[str]] = []
    mount_options: str | list[str] = ""
    path: str = ""
    device: str = ""
    image: str | None = None  # start from this aged image (fslab age's image.img)
    fresh_copy_of: str | None = None  # a fresh file system holding that image's files
    # (an image file, or the name of a target of this campaign that has `age`)
    age: dict[str, object] | None = None  # age this target once, then start from that image
    direct_io: bool | None = None  # loop device direct I/O
    fstrim: bool | None = None  # fstrim before each run (the aging study's protocol)
    # an SSD's state before the first measurement: "none", "fill" or "trim"
    # (targets/precondition.py)
    precondition: str | None = None
    throttle: dict[str, object] | None = None  # slow-device emulation (cgroup v1 blkio)
    scale: float | list[float] | None = None  # the simulator (fs = "null"): true ratio
    # The simulator's known option effects: {"noatime": 1.25, "-I 128": 0.85,
    # "iodepth=16": 1.4, "noatime+commit=60": 0.95} multiply its values when the option,
    # level or all of "a+b" are present (workloads/null.py).
    effects: dict[str, float] | None = None
    latency_effects: dict[str, float] | None = None  # the same keys, multiplying latency
    cv_effects: dict[str, float] | None = None  # the same keys, multiplying the CV
    options: dict[str, object] = {}  # kind-specific: zfs ashift and dataset properties, ...
    # A zfs pool as the ZFS server study built it (targets/zfs_pool.py): its layout over
    # `devices` images, a log and a cache device, the ARC's maximum, and the two cache
    # properties; each a list of levels sweeps this target alone.
    layout: str | list[str] | None = None
    devices: int | list[int] | None = None
    log_size: str | int | list[str | int] | None = None
    cache_size: str | int | list[str | int] | None = None
    arc_max: str | int | list[str | int] | None = None
    primarycache: str | list[str] | None = None
    secondarycache: str | list[str] | None = None


def resolve_targets(
    entries: list[TargetEntry], fs_flag: list[str] | None, image_size: int
) -> tuple[list[TargetSpec], dict[str, dict[str, list[str]]]]:
    """The targets as declared (TargetSpec each) and, per target, the lists of levels its
    own table gives (a sweep of that target alone: plan/sweep.py)."""
    by_name = {(entry.name or entry.fs): entry for entry in entries}
    if fs_flag:
        chosen = [by_name.get(name) or entry_from_flag(name) for name in fs_flag]
    elif entries:
        chosen = entries
    else:
        chosen = [TargetEntry(fs=fs) for fs in DEFAULT_FS]
    aging = {entry.name or entry.fs for entry in chosen if entry.age is not None}
    local: dict[str, dict[str, list[str]]] = {}
    plain = []
    for entry in chosen:
        entry, lists = own_levels(entry)
        plain.append(entry)
        if lists:
            local[entry.name or entry.fs] = lists
    specs = [target_spec(entry, image_size, aging) for entry in plain]
    names = [spec.name for spec in specs]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise UserError(f"target names must be unique; repeated: {', '.join(duplicates)}")
    return specs, local


def own_levels(entry: TargetEntry) -> tuple[TargetEntry, dict[str, list[str]]]:
    """(the entry with its lists of levels taken out, {factor: levels}) — a [[target]]
    table that sweeps its own options."""
    name = entry.name or entry.fs
    lists: dict[str, list[str]] = {}
    update: dict[str, object] = {}
    if isinstance(entry.mount_options, list):
        lists["mount_options"] = [level_text(v) for v in entry.mount_options]
        update["mount_options"] = ""
    mkfs = entry.mkfs_options
    if isinstance(mkfs, list) and any(isinstance(v, list) for v in mkfs):
        lists["mkfs_options"] = [level_text(v) for v in mkfs]
        update["mkfs_options"] = []
    if isinstance(entry.scale, list):
        if entry.fs != "null":
            raise UserError(f"target {name}: scale = ... is for the simulator (fs = \"null\")")
        lists["scale"] = [level_text(v) for v in entry.scale]
        update["scale"] = None
    for key in POOL_FIELDS:
        value = getattr(entry, key)
        if isinstance(value, list):
            lists[key] = [level_text(v) for v in value]
            update[key] = None
    for key in ZFS_CACHES:
        value = getattr(entry, key)
        if isinstance(value, list):
            lists[f"{ZFS_PREFIX}{key}"] = [level_text(v) for v in value]
            update[key] = None
    options = dict(entry.options)
    for key, value in entry.options.items():
        if isinstance(value, list):
            if entry.fs not in ZFS_KINDS:
                raise UserError(f"target {name}: options.{key} cannot be swept (lists of "
                                "levels: mount_options, mkfs_options, scale, zfs properties)")
            lists[f"{ZFS_PREFIX}{key}"] = [level_text(v) for v in value]
            options.pop(key)
    if len(options) != len(entry.options):
        update["options"] = options
    return (entry.model_copy(update=update) if update else entry), lists


def entry_from_flag(text: str) -> TargetEntry:
    """'ext4' -> an ext4 target; 'dir:/data' -> a directory target."""
    if text.startswith("dir:"):
        path = text[4:]
        if not path:
            raise UserError("dir: needs a path, e.g. dir:/mnt/data")
        return TargetEntry(name="dir-" + slug(Path(path).name or "root"), fs="dir", path=path)
    return TargetEntry(fs=text)


def target_spec(entry: TargetEntry, default_image_size: int,
                 aging: frozenset[str] | set[str] = frozenset()) -> TargetSpec:
    registry_entry(entry.fs)  # an unknown kind is one clear line, from the registry
    if entry.fs == "dir" and not entry.path:
        raise UserError(f"target {entry.name or 'dir'}: a dir target needs path = \"...\"")
    name = entry.name or entry.fs
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.+-]*", name):
        raise UserError(f"bad target name {name!r}: use letters, digits, '.', '_', '+', '-'")
    mkfs = entry.mkfs_options
    options = tuple(mkfs.split()) if isinstance(mkfs, str) else tuple(map(str, mkfs))
    size = parse_size(entry.image_size) if entry.image_size is not None else default_image_size
    extra = dict(entry.options)
    if entry.age is not None:
        if entry.image is not None:
            raise UserError(f"target {name}: give age = {{...}} or image = ..., not both")
        extra["age"] = dict(entry.age)
    for key in ("image", "fresh_copy_of"):
        value = getattr(entry, key)
        if key == "fresh_copy_of" and value in aging:
            extra[key] = f"target:{value}"  # that target's image, once it is aged
            continue
        if value is not None:
            path = Path(value).expanduser().resolve()
            if not path.is_file():
                raise UserError(f"target {name}: {key} {value} is not a file")
            extra[key] = str(path)

            size = max(size, check_usable(path, entry.fs, f"target {name}") or 0)
    if entry.direct_io is not None:
        extra["direct_io"] = entry.direct_io
    if entry.fstrim:
        extra["fstrim"] = True
    if entry.precondition is not None:
        extra["precondition"] = entry.precondition
    if entry.throttle is not None:
        extra["throttle"] = entry.throttle
    extra.update(zfs_fields(entry, name))
    if entry.scale is not None:
        if entry.fs != "null" or isinstance(entry.scale, list) or entry.scale <= 0:
            raise UserError(f"target {name}: scale = ... is for the simulator (fs = \"null\") "
                            "and must be above 0")
        extra["scale"] = float(entry.scale)
    for key, table in (("effects", entry.effects), ("latency_effects", entry.latency_effects),
                       ("cv_effects", entry.cv_effects)):
        if table is None:
            continue
        if entry.fs != "null" or any(not value > 0 for value in table.values()):
            raise UserError(f"target {name}: {key} = {{...}} is for the simulator (fs = "
                            "\"null\"), each a factor above 0")
        extra[key] = {str(k): float(v) for k, v in table.items()}
    return TargetSpec(name=name, fs=entry.fs, size=size, mkfs_options=options,
                      mount_options=str(entry.mount_options), path=entry.path,
                      device=entry.device, options=extra)


def zfs_fields(entry: TargetEntry, name: str) -> dict[str, object]:
    """A zfs target's pool fields and cache properties as its options (the levels' text;
    targets/zfs_pool.py checks them): refused in one line on another kind, or when
    `options` gives one of them too."""
    given = {key: getattr(entry, key) for key in (*POOL_FIELDS, *ZFS_CACHES)
             if getattr(entry, key) is not None}
    if not given:
        return {}
    if entry.fs not in ZFS_KINDS:
        raise UserError(f"target {name}: {', '.join(given)} {'is' if len(given) == 1 else 'are'}"
                        f" for zfs targets (fs = \"zfs\"), not {entry.fs}")
    twice = sorted(set(given) & set(entry.options))
    if twice:
        raise UserError(f"target {name}: {twice[0]} is given twice (as a field and in "
                        "options)")
    return {key: level_text(value) for key, value in given.items()}


def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.+-]+", "-", text).strip("-") or "x"
