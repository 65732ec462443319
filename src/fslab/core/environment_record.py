"""A results directory's environment (environment.json): the machine and the tools a
campaign ran with (host/environment.py captures them), each target as it was provisioned,
and the raw device's ceilings (run/ceiling.py). Typed where fslab reads it, the rest kept
as it came; `to_json`/`from_json` are its file, and every environment.json fslab has
written reads (an import's says only that it is one).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields
from typing import Any

from fslab.core.run_parts import TargetDescription

# What the raw device delivered, {workload: {op: {metric: value}}}; per device.
Ceiling = dict[str, dict[str, dict[str, float]]]
Ceilings = dict[str, Ceiling]
# The ceilings measured in each iteration's rounds: {workload: {op: {metric: {iteration:
# value}}}} (the iteration as text: a JSON key).
ByIteration = dict[str, dict[str, dict[str, dict[str, float]]]]

# What fslab reads of the machine, as text; every other fact of it is kept as it came
# (`facts`: the kernel's version string, the python, the lab's directory and its file
# system, the virtualization, the dirty page ratios …), each a key of environment.json.
FACTS = ("captured_at", "host", "boot_id", "kernel", "cpu_model", "fslab", "disk_model", "note")


@dataclass(frozen=True)
class SittingSpread:
    """A host's between-sitting spread of ratios (log scale: τ̃, the SD of a sitting's own
    effect on a ratio's log), shrunk toward a prior (analysis/sittings/repeat.py
    makes it), and each workload's own where the host's history has it, shrunk toward the
    host's. Its JSON form is environment.json's "sitting" → "spread"."""

    tau: float  # τ̃: what the repeat interval uses
    tau_df: float  # its degrees of freedom: the prior's and the history's
    sittings: int  # earlier sittings it rests on (0: the prior alone)
    raw_tau: float = math.nan  # τ̂ from the history alone (NaN: none)
    df: float = 0.0  # the history's effective degrees of freedom
    workloads: dict[str, SittingSpread] = field(default_factory=dict)  # by workload

    def to_json(self) -> dict[str, object]:
        data: dict[str, object] = {
            "tau": self.tau, "tau_df": self.tau_df, "sittings": self.sittings,
            "raw_tau": None if math.isnan(self.raw_tau) else self.raw_tau, "df": self.df}
        if self.workloads:
            data["workloads"] = {name: spread.to_json()
                                 for name, spread in self.workloads.items()}
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SittingSpread:
        raw = data.get("raw_tau")
        workloads = data.get("workloads")
        return cls(float(data["tau"]), float(data["tau_df"]), int(data["sittings"]),
                   math.nan if raw is None else float(raw), float(data.get("df") or 0.0),
                   {str(name): cls.from_json(value) for name, value in workloads.items()}
                   if isinstance(workloads, dict) else {})


@dataclass
class SittingFacts:
    """What makes a results directory one sitting (environment.json "sitting"): the
    machine, its boot, the start, the kernel, the tools and the lab's disk; with
    --catalogue, the host's between-sitting spread as the campaign started (`spread`)."""

    host: str = ""
    boot_id: str = ""
    started: str = ""
    kernel: str = ""
    tools: dict[str, str] = field(default_factory=dict)
    lab_disk: str = ""
    spread: SittingSpread | None = None

    def to_json(self) -> dict[str, object]:
        data: dict[str, object] = {"host": self.host, "boot_id": self.boot_id,
                                   "started": self.started, "kernel": self.kernel,
                                   "tools": self.tools, "lab_disk": self.lab_disk}
        return {**data, "spread": self.spread.to_json()} if self.spread is not None else data

    @classmethod
    def from_json(cls, data: dict[str, object]) -> SittingFacts:
        spread = data.get("spread")
        tools = data.get("tools")
        return cls(str(data.get("host") or ""), str(data.get("boot_id") or ""),
                   str(data.get("started") or ""), str(data.get("kernel") or ""),
                   {str(k): str(v) for k, v in tools.items()} if isinstance(tools, dict)
                   else {}, str(data.get("lab_disk") or ""),
                   SittingSpread.from_json(spread) if isinstance(spread, dict) else None)


@dataclass
class Environment:
    """What environment.json says (module doc)."""

    captured_at: str = ""
    host: str = ""
    boot_id: str = ""
    kernel: str = ""
    cpu_model: str = ""
    cpu_count: int | None = None
    memory_bytes: int = 0  # 0: not known (an import)
    fslab: str = ""
    tools: dict[str, str] = field(default_factory=dict)  # tool -> its version
    disk_model: str = ""
    targets: dict[str, TargetDescription] = field(default_factory=dict)
    ceilings: Ceilings = field(default_factory=dict)
    ceilings_by_iteration: ByIteration = field(default_factory=dict)
    ceilings_reused: list[str] = field(default_factory=list)
    sitting: SittingFacts | None = None  # what makes this directory one sitting (issue 51)
    imported: bool = False  # results collected elsewhere: the machine is not known
    note: str = ""
    facts: dict[str, Any] = field(default_factory=dict)  # the machine's other facts
    more: dict[str, Any] = field(default_factory=dict)  # keys of another fslab, kept

    def fact(self, name: str) -> object:
        """One of its values by the key environment.json gives it (compare's list)."""
        return getattr(self, name) if name in KNOWN else self.facts.get(name,
                                                                         self.more.get(name))

    def to_json(self) -> dict[str, object]:
        """As environment.json holds it: what is known (a captured machine's every fact)."""
        data: dict[str, object] = {}
        blank = Environment()
        for spec in fields(self):
            value = getattr(self, spec.name)
            if spec.name in ("facts", "more") or (value == getattr(blank, spec.name) and not (
                    self.captured_at and spec.name in MACHINE)):
                continue
            if spec.name == "targets":
                value = {name: d.to_json() for name, d in value.items()}
            elif spec.name == "sitting":
                value = value.to_json()
            data[spec.name] = value
        return {**data, **self.facts, **self.more}

    @classmethod
    def from_json(cls, data: Any) -> Environment:
        if not isinstance(data, dict):
            return cls()
        values: dict[str, Any] = {k: str(data[k]) for k in FACTS if data.get(k) is not None}
        if isinstance(data.get("cpu_count"), int):
            values["cpu_count"] = data["cpu_count"]
        if isinstance(data.get("memory_bytes"), int):
            values["memory_bytes"] = data["memory_bytes"]
        values["tools"] = {str(k): str(v) for k, v in (data.get("tools") or {}).items()}
        values["imported"] = bool(data.get("imported"))
        values["targets"] = {str(name): TargetDescription.from_json(d)
                             for name, d in (data.get("targets") or {}).items()}
        values["ceilings"] = data.get("ceilings") or {}
        values["ceilings_by_iteration"] = data.get("ceilings_by_iteration") or {}
        values["ceilings_reused"] = [str(w) for w in data.get("ceilings_reused") or []]
        if isinstance(data.get("sitting"), dict):
            values["sitting"] = SittingFacts.from_json(data["sitting"])
        return cls(**values, facts={k: v for k, v in data.items() if k in MACHINE_FACTS},
                   more={k: v for k, v in data.items()
                         if k not in KNOWN and k not in MACHINE_FACTS})


KNOWN = frozenset(spec.name for spec in fields(Environment)) - {"facts", "more"}
# What every captured machine states (host/environment.capture), whatever its value.
MACHINE = frozenset({*FACTS, "cpu_count", "memory_bytes", "tools"}) - {"note"}
# The machine's facts fslab keeps and does not read (host/environment.capture).
MACHINE_FACTS = frozenset({"kernel_version", "machine", "python", "root", "lab_dir", "lab_fs",
                           "virtualization", "dirty_ratio", "dirty_background_ratio"})
