"""The null target: a plain directory in the lab, for testing the harness itself; with
`scale`, mount and mkfs options, a level of `age` and an `effects` table (and a
`latency_effects` one, the same keys multiplying latency, and a `cv_effects` one
multiplying the spread of a configuration's values), a simulated device for the
simulator (workloads/null.py) whose options have known effects."""

from __future__ import annotations

import json
from typing import ClassVar

from fslab.core.run_parts import TargetDescription
from fslab.host.lab import Session
from fslab.targets.base import AGE_LEVEL, BaseTarget, Mounted
from fslab.targets.common import path_of

SIMULATOR_FILE = "simulator.json"  # the simulated target, for the null workload to read


class NullTarget(BaseTarget):
    """Provisions instantly and formats nothing (cf. fio's null ioengine)."""

    kind: ClassVar[str] = "null"
    capabilities: ClassVar[frozenset[str]] = frozenset()
    allowed_options: ClassVar[frozenset[str]] = frozenset({"scale", "effects",
                                                                  "latency_effects",
                                                                  "cv_effects"})

    def describe(self) -> TargetDescription:
        return TargetDescription.from_json({
            "target": self.spec.name, "fs": "null", "fs_impl": "null (simulator)",
            "scale": self.scale, "mount_options": self.spec.mount_options,
            "mkfs_options": list(self.spec.mkfs_options),
            **({AGE_LEVEL: self.age_level} if self.age_level else {})})

    @property
    def age_level(self) -> str:
        """The level of `age` this target stands for ('': none): a level of its effects."""
        return str(self.spec.options.get(AGE_LEVEL, ""))

    @property
    def scale(self) -> float:
        """The simulator's true ratio of this target's values to the workload's base."""
        return float(self.spec.options.get("scale", 1.0))

    def provision(self, session: Session) -> Mounted:
        path = session.new_path("mnt", path_of(self.spec.base))
        mounted = Mounted(path=path, description=self.describe())
        mounted.resources.append(session.record("dir", path))
        path.mkdir(parents=True)
        (path / SIMULATOR_FILE).write_text(json.dumps({
            "name": self.spec.name, "scale": self.scale,
            "mount_options": self.spec.mount_options,
            "mkfs_options": list(self.spec.mkfs_options),
            "effects": dict(self.spec.options.get("effects") or {}),
            "latency_effects": dict(self.spec.options.get("latency_effects") or {}),
            "cv_effects": dict(self.spec.options.get("cv_effects") or {}),
            AGE_LEVEL: self.age_level}))
        return mounted
