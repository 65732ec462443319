"""tmpfs: a memory-speed baseline. Not storage: its figures bound what caching can give."""

from __future__ import annotations

from typing import ClassVar

from fslab.core.run_parts import TargetDescription
from fslab.host import system
from fslab.host.lab import Session
from fslab.targets.base import NEEDS_ROOT, BaseTarget, Mounted
from fslab.targets.common import make_mountpoint, mount


class TmpfsTarget(BaseTarget):
    """A tmpfs mount of the campaign's image size."""

    kind: ClassVar[str] = "tmpfs"
    capabilities: ClassVar[frozenset[str]] = frozenset({NEEDS_ROOT})
    tools: ClassVar[tuple[str, ...]] = ("mount", "umount")

    def describe(self) -> TargetDescription:
        return TargetDescription(
            target=self.spec.name, fs="tmpfs",
            fs_impl=f"kernel {system.kernel_release()} (memory)", image_size=self.spec.size,
            details={"backing": "RAM (a speed baseline, not storage)",
                     "mount_options_requested": self.spec.mount_options or "defaults"})

    def provision(self, session: Session) -> Mounted:
        mounted = Mounted(path=None, description=self.describe())
        options = ",".join(filter(None, [f"size={self.spec.size}", self.spec.mount_options]))
        try:
            mounted.path = make_mountpoint(session, mounted, self.spec.name)
            mount(session, mounted, ["mount", "-t", "tmpfs", "-o", options, "fslab-tmpfs",
                                     str(mounted.path)], mounted.path)
        except BaseException:
            self.teardown(session, mounted)
            raise
        mounted.description = mounted.description.with_(
            mount_options=system.mount_options(mounted.path))
        return mounted
