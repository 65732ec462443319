"""An aging's record (aging.json): what the engine did, on what, and what it left.

Built by the aging engine (aging/engine.summary, completed by aging/age.age_mounted),
returned by `fslab.api.age`, summarised in memory by a campaign's aged places
(aging/per_place.py) and read back from files by the parse stage (parsers/aging_kind.py):
one record at every step, aging.json its serialisation (`to_json` / `from_json`), its keys
in the order fslab has always written them.

Its parts that are another tool's figures as JSON keep the JSON's shape, typed
(`FreeSpaceSeen`, `UsedSpaceSeen`, `Probe`, `SizeBucket`, `Released`): they go into
aging.json, fragmentation.json, image.json and run.json as they are. `from_json` reads
every aging.json fslab has written (older ones lack keys: they get the defaults) and
keeps keys it does not know in `extra`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Required, TypedDict

from fslab.core.run_parts import TargetDescription

# Every setting of an aging with its value and source (workloads/provenance.Param's JSON,
# and `here`: what a setting relative to the capacity came to): aging.json `parameters`.
Parameters = dict[str, dict[str, object]]


class FreeSpaceSeen(TypedDict):
    """A free-space probe's figures (probes/freespace.FreeSpace, as JSON)."""

    tool: str
    free_bytes: int
    free_extents: int
    largest_bytes: int
    histogram: list[list[int]]  # [from_bytes, to_bytes, extents, free bytes in them]
    not_measurable: str  # why not ('' when measured)


class UsedSpaceSeen(TypedDict, total=False):
    """A used-space probe's figures (probes/usedspace.used_space_probe): the files'
    extents and layout, or why they cannot be read (`reason`)."""

    measurable: Required[bool]
    reason: str
    files: int
    layout_score: float
    optimal_share: float
    extents_per_file: list[int]
    extent_sizes: list[int]


class Probe(TypedDict):
    """One fragmentation probe of an aging (fragmentation.json holds them in order)."""

    ops: int  # operations done by then
    t: float  # the time it was taken (seconds since the epoch)
    free: FreeSpaceSeen
    used: UsedSpaceSeen


class SizeBucket(TypedDict):
    """The aged files' sizes in one power-of-two bucket."""

    from_bytes: int
    to_bytes: int
    files: int
    bytes: int


class Released(TypedDict, total=False):
    """What room made for the runs released (aging/room.make_room; {} when nothing had
    to go): files, bytes, the fill after."""

    files: int
    bytes: int
    used_after: float | None


class ToppedUp(TypedDict):
    """Files and bytes created after the stop to end at the utilisation (aging/finish)."""

    files: int
    bytes: int


@dataclass(frozen=True)
class KeptImage:
    """The aged state kept (targets/images.keep), or why none was (`reason`)."""

    kind: str  # sparse, zstd, metadata, or none
    path: str = ""  # its file's name in the aging's directory
    fs: str = ""
    contents: str = ""  # full, or what a metadata image leaves out
    fs_bytes: int = 0  # the file system's size
    bytes_allocated: int = 0  # what the kept file takes on disk
    reason: str = ""  # why no image was kept

    def to_json(self) -> dict[str, object]:
        if self.reason:
            return {"kind": self.kind, "reason": self.reason}
        return {"kind": self.kind, "path": self.path, "fs": self.fs,
                "contents": self.contents, "fs_bytes": self.fs_bytes,
                "bytes_allocated": self.bytes_allocated}

    @classmethod
    def from_json(cls, data: object) -> KeptImage:
        if not isinstance(data, dict):
            return cls("none")
        known = {spec.name for spec in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


@dataclass(frozen=True)
class AgingRecord:
    """One aging: its target and settings, what it did (counts, failures, how it stopped,
    the fill it reached), the files and the last probe it left, and, when asked, its
    parameters' sources, the room made after it and the image kept."""

    target: TargetDescription = field(default_factory=TargetDescription)
    config: dict[str, object] = field(default_factory=dict)  # aging/config.AgingConfig's
    seed: int = 0
    ops_done: int = 0
    ops_attempted: int = 0
    ops_succeeded: int = 0
    ops_failed: int = 0
    seconds: float = 0.0
    ops_per_s: float = 0.0  # successful operations per second
    redirected: dict[str, int] = field(default_factory=dict)  # "planned -> done": count
    op_sequence_sha256: str = ""
    stopped_by: str = ""
    bytes_written: int = 0
    succeeded: dict[str, int] = field(default_factory=dict)  # per operation
    failures: dict[str, int] = field(default_factory=dict)  # "op ERRNO": count
    deleted_for_space: int = 0
    fstrims: int = 0
    topped_up: ToppedUp = field(default_factory=lambda: ToppedUp(files=0, bytes=0))
    used_max: float | None = None  # the most any utilisation check saw
    used_end: float | None = None  # the fill it left
    out_of_space: int = 0  # writes refused for space (ENOSPC, EDQUOT)
    root_capacity: int | None = None  # what root could write on the fresh file system
    file_sizes: list[SizeBucket] = field(default_factory=list)
    last_fragmentation: Probe | None = None
    parameters: Parameters | None = None
    released: Released | None = None
    image: KeptImage | None = None
    extra: dict[str, object] = field(default_factory=dict)  # keys of another fslab's

    @property
    def utilization(self) -> float | None:
        """The utilisation it was held at (its config's), if any."""
        found = self.config.get("utilization")
        return float(found) if isinstance(found, int | float) else None

    def to_json(self) -> dict[str, object]:
        """As aging.json holds it: every field in order, `parameters`, `released` and
        `image` only when set, then the keys it was read with and does not know."""
        data: dict[str, object] = {}
        for spec in FIELDS:
            value = getattr(self, spec.name)
            if spec.name in OPTIONAL and value is None:
                continue
            data[spec.name] = value.to_json() if spec.name in PARTS else value
        return {**data, **self.extra}

    @classmethod
    def from_json(cls, data: object) -> AgingRecord:
        """A record from aging.json; KeyError or ValueError when it is not one."""
        if not isinstance(data, dict):
            raise ValueError("not an aging record")
        missing = [key for key in REQUIRED if key not in data]
        if missing:
            raise KeyError(f"aging record without {', '.join(missing)}")
        values: dict[str, Any] = {k: v for k, v in data.items()
                                  if k in KNOWN and v is not None}
        values["target"] = TargetDescription.from_json(data.get("target"))
        if "image" in values:
            values["image"] = KeptImage.from_json(values["image"])
        values["seconds"] = float(data["seconds"])
        return cls(**values, extra={k: v for k, v in data.items() if k not in KNOWN})


FIELDS = [spec for spec in fields(AgingRecord) if spec.name != "extra"]
KNOWN = frozenset(spec.name for spec in FIELDS)
PARTS = ("target", "image")  # records of their own
OPTIONAL = ("parameters", "released", "image", "last_fragmentation")
REQUIRED = ("seconds", "ops_attempted", "ops_succeeded", "stopped_by")
