"""The parts of a run's record that are records of their own (core/record.py): what the
target was (TargetDescription), what the machine did meanwhile (Witness) and what the
workload said of its run (WorkloadMetadata). Each is typed where fslab reads it and keeps
the rest as it came; each has its JSON form as run.json holds it (`to_json`/`from_json`),
so every run.json fslab has written reads, and one read and written again loses nothing.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any, NamedTuple


def _number(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) \
        else math.nan


class Busy(NamedTuple):
    """Another process, by name, and the share of one CPU it used."""

    name: str
    cpu_pct: float

    def text(self) -> str:
        return f"{self.name} {self.cpu_pct:.0f} %"

    @classmethod
    def from_json(cls, value: Any) -> Busy:
        """From run.json: {name, cpu_pct}; a record before the record was a text, 'name
        41 %' (the one place such a text is taken apart)."""
        if isinstance(value, dict):
            return cls(str(value.get("name", "")), _number(value.get("cpu_pct")))
        name, _, pct = str(value).rpartition(" ")[0].rpartition(" ")
        return cls(name, _number(float(pct)) if pct.replace(".", "", 1).isdigit() else math.nan)


@dataclass
class Witness:
    """What else the machine did during one run, and whether that disturbed it
    (host/witness.py watches and judges)."""

    seconds: float = 0.0
    others_cpu_pct: float = 0.0  # % of one core used by other processes
    busiest: list[Busy] = field(default_factory=list)
    steal_pct: float = 0.0
    psi_cpu_pct: float = math.nan
    psi_io_pct: float = math.nan
    psi_memory_pct: float = math.nan
    other_io_bytes_s: float = math.nan
    disk: str = ""
    disturbed: bool = False
    reasons: list[str] = field(default_factory=list)
    # a run measured again (--rerun-disturbed, --rerun-unsteady): its first witness, and
    # why its first values mixed two states (unsteady), where they did
    rerun_of: Witness | None = None
    unsteady: str = ""

    @property
    def seen(self) -> bool:
        """Whether anything was watched (an import's runs carry no witness)."""
        return self.seconds > 0 or self.disturbed or bool(self.reasons)

    def to_json(self) -> dict[str, object]:
        """As run.json holds it ({} where nothing was watched: an import's runs)."""
        data: dict[str, object] = {}
        if not self.seen:
            return data
        for spec in fields(self):
            value = getattr(self, spec.name)
            if spec.name == "busiest":
                value = [{"name": b.name, "cpu_pct": b.cpu_pct} for b in value]
            elif spec.name == "rerun_of":
                if value is None:
                    continue
                value = value.to_json()
            elif spec.name == "unsteady" and not value:
                continue
            data[spec.name] = None if isinstance(value, float) and value != value else value
        return data

    @classmethod
    def from_json(cls, data: Any) -> Witness:
        """From run.json ({} and None: nothing was watched)."""
        if not isinstance(data, dict) or not data:
            return cls()
        known = {spec.name: spec for spec in fields(cls)}
        values: dict[str, Any] = {}
        for name, value in data.items():
            if name not in known:
                continue
            if name == "busiest":
                values[name] = [Busy.from_json(v) for v in value or []]
            elif name == "rerun_of":
                values[name] = cls.from_json(value) if value else None
            elif name in ("disk", "unsteady"):
                values[name] = str(value or "")
            elif name == "disturbed":
                values[name] = bool(value)
            elif name == "reasons":
                values[name] = [str(v) for v in value or []]
            else:
                values[name] = _number(value)
        return cls(**values)


# What every description may say, typed; the rest is the kind's own (`details`).
TARGET_TEXT = ("target", "fs", "fs_impl", "device", "pool", "state", "image", "quirk",
               "mount_options")


@dataclass(frozen=True)
class TargetDescription:
    """What a target was: its name, file system and implementation, where it lived (its
    device or devices, its pool, its image size), the aged image it started from, and its
    kind's own facts (`details`: the mkfs command, mount options asked and added, loop
    direct I/O, a throttle, when it was provisioned …)."""

    target: str = ""
    fs: str = ""
    fs_impl: str = ""
    device: str = ""  # the block device it was made on ('' for none)
    devices: tuple[str, ...] = ()  # every member of a multi-device target
    pool: str = ""  # a zfs pool
    image_size: int | None = None  # bytes of its image; None on a real device
    device_size: int = 0
    state: str = ""  # "aged" or "fresh" where it started from an image
    image: str = ""
    quirk: str = ""  # what a file system does unlike the others (targets/profiles.py)
    mount_options: str = ""  # as mounted
    details: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, object]:
        """As run.json and environment.json hold it: the fields that are set, then the
        details."""
        data: dict[str, object] = {}
        for spec in fields(self):
            value = getattr(self, spec.name)
            if spec.name != "details" and value not in ("", (), 0, None):
                data[spec.name] = list(value) if isinstance(value, tuple) else value
        return {**data, **self.details}

    @classmethod
    def from_json(cls, data: Any) -> TargetDescription:
        """From a dict of any fslab's (a target's own describe() builds one so too)."""
        if not isinstance(data, dict):
            return cls()
        values: dict[str, Any] = {k: str(data[k]) for k in TARGET_TEXT
                                  if data.get(k) is not None and k in data}
        if isinstance(data.get("devices"), list):
            values["devices"] = tuple(str(d) for d in data["devices"])
        for key in ("image_size", "device_size"):
            if isinstance(data.get(key), int) and not isinstance(data[key], bool):
                values[key] = data[key]
        typed = {spec.name for spec in fields(cls)} - {"details"}
        return cls(**values, details={k: v for k, v in data.items()
                                      if k not in typed or k not in values})

    def with_(self, **changes: Any) -> TargetDescription:
        """The description with these keys set (fields or details alike)."""
        return TargetDescription.from_json({**self.to_json(), **changes})


# Where a run measured in one piece, not in interleaved slices, says why ({"why": ...})
MEASURED_WHOLE = "measured_whole"


@dataclass(frozen=True)
class WorkloadMetadata:
    """What a workload said of its run (its `RunOutput.metadata`) with what the runner
    and the parse stage added: typed where fslab reads it, the rest kept as it came
    (`more`: fio's command, the layout pass, the slices' numbers, the disks' counters …)."""

    primary_metric: str = ""  # the metric its questions answer
    # a job file's: each section's primary metric ({section: metric})
    section_primaries: dict[str, str] = field(default_factory=dict)
    steady: bool | None = None  # None: not judged (parsers/fio_logs.py)
    steady_reason: str = ""  # why it was judged so, or not judged
    outcome: str = ""  # a workload's own word on how it ended
    more: dict[str, Any] = field(default_factory=dict)

    @property
    def unsteady_because(self) -> str:
        """Why its throughput was not steady ('' where it was, or was not judged)."""
        return self.steady_reason if self.steady is False else ""

    @property
    def sliced(self) -> bool:
        """Whether it was measured in slices interleaved with the other targets."""
        return bool(self.more.get("slices"))

    @property
    def whole_because(self) -> str:
        """Why it was measured in one piece, not in interleaved slices ('' when sliced,
        or recorded before fslab said)."""
        return str(self.section(MEASURED_WHOLE).get("why") or "")

    def section(self, key: str) -> dict[str, Any]:
        """One of the parts kept as it came ({} when the run has none): 'io',
        'disk_stats', 'job_options', 'layout_pass' …"""
        found = self.more.get(key)
        return found if isinstance(found, dict) else {}

    def to_json(self) -> dict[str, object]:
        data = dict(self.more)
        if self.section_primaries:
            data["primary_metric"] = dict(self.section_primaries)
        elif self.primary_metric:
            data["primary_metric"] = self.primary_metric
        if self.steady is not None or self.steady_reason:
            data["steady"] = {"steady": self.steady, "reason": self.steady_reason}
        if self.outcome:
            data["outcome"] = self.outcome
        return data

    @classmethod
    def from_json(cls, data: Any) -> WorkloadMetadata:
        if not isinstance(data, dict):
            return cls()
        more = {k: v for k, v in data.items()
                if k not in ("primary_metric", "steady", "outcome")}
        primary = data.get("primary_metric")
        found = data.get("steady")
        steady: dict[str, Any] = found if isinstance(found, dict) else {}
        judged = steady.get("steady")
        return cls(primary_metric=str(primary) if primary and not isinstance(primary, dict)
                   else "",
                   section_primaries={str(k): str(v) for k, v in primary.items()}
                   if isinstance(primary, dict) else {},
                   steady=judged if isinstance(judged, bool) else None,
                   steady_reason=str(steady.get("reason") or ""),
                   outcome=str(data.get("outcome") or ""), more=more)

    def merged(self, derived: Mapping[str, object]) -> WorkloadMetadata:
        """With what the parse stage derived (a part it shares with the runner's own,
        like `slices`, merged one level down)."""
        data = self.to_json()
        for key, value in derived.items():
            have = data.get(key)
            data[key] = {**have, **value} if isinstance(value, dict) and \
                isinstance(have, dict) else value
        return WorkloadMetadata.from_json(data)

    def with_(self, **changes: Any) -> WorkloadMetadata:
        return replace(self, **changes)
