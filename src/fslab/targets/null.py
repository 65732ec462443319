"""The null target: a plain directory in the lab, for testing the harness itself."""

from __future__ import annotations

from typing import Any, ClassVar

from fslab.lab import Session
from fslab.targets.base import BaseTarget, Mounted


class NullTarget(BaseTarget):
    """Provisions instantly and formats nothing (cf. fio's null ioengine)."""

    kind: ClassVar[str] = "null"
    capabilities: ClassVar[frozenset[str]] = frozenset()

    def describe(self) -> dict[str, Any]:
        return {"target": self.spec.name, "fs": "null", "fs_impl": "null (test harness)"}

    def provision(self, session: Session) -> Mounted:
        path = session.path_for("mnt", self.spec.name)
        mounted = Mounted(path=path, description=self.describe())
        mounted.resources.append(session.record("dir", path))
        path.mkdir(parents=True)
        return mounted
