"""`dir:PATH`: benchmark an existing directory, no mkfs, for users who cannot format."""

from __future__ import annotations

import os
from pathlib import Path
from typing import ClassVar

from fslab.core.errors import UserError
from fslab.core.run_parts import TargetDescription
from fslab.host import system
from fslab.host.lab import Session
from fslab.host.releasers import WORKDIR_PREFIX
from fslab.targets.base import KEEPS_PLACE, BaseTarget, Mounted

FUSE_TYPES = ("fuse", "fuseblk")


class DirectoryTarget(BaseTarget):
    """An existing directory; fslab works in a private subdirectory and removes only that
    (at the campaign's end: no file system is made fresh, so a workload's files laid out
    in the first iteration serve the next, as in a fio loop)."""

    kind: ClassVar[str] = "dir"
    capabilities: ClassVar[frozenset[str]] = frozenset({KEEPS_PLACE})

    def check(self) -> None:
        super().check()
        path = Path(self.spec.path)
        if not path.is_dir():
            raise UserError(f"target {self.spec.name}: {path} is not an existing directory")
        if not os.access(path, os.W_OK | os.X_OK):
            raise UserError(f"target {self.spec.name}: {path} is not writable by this user")

    def describe(self) -> TargetDescription:
        fstype, source, options = system.containing_mount(Path(self.spec.path))
        fuse = fstype.startswith(FUSE_TYPES)
        return TargetDescription.from_json({
            "target": self.spec.name,
            "fs": fstype,
            "fs_impl": f"FUSE ({fstype})" if fuse else f"kernel {system.kernel_release()}",
            "backing": f"existing directory {self.spec.path} on {source}",
            "mount_options": options,
            "formatted": False,
        })

    def provision(self, session: Session) -> Mounted:
        workdir = Path(self.spec.path).absolute() / f"{WORKDIR_PREFIX}{session.dir.name}"
        mounted = Mounted(path=workdir, description=self.describe(), keep_files=True)
        mounted.resources.append(session.record("workdir", workdir))
        workdir.mkdir()
        return mounted

