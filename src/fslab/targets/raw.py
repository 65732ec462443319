"""raw: fio straight on the loop device, no file system: the ceiling for every fs result.

The image is filled once with data at provision: reads from a sparse image's holes (or
from fallocated, unwritten extents) never touch the disk and would make a false ceiling.
"""

from __future__ import annotations

from typing import Any, ClassVar

from fslab.core.run_parts import TargetDescription
from fslab.host import system
from fslab.host.lab import Session
from fslab.targets.base import NEEDS_ROOT, BaseTarget, Mounted
from fslab.targets.common import attach_loop, loop_settings, make_image
from fslab.targets.device_options import (
    DEVICE_OPTIONS,
    apply_throttle,
    loop_direct_io,
    parse_throttle,
    throttle_support,
)


class RawTarget(BaseTarget):
    """A loop device over a filled image; workloads address the device itself."""

    kind: ClassVar[str] = "raw"
    capabilities: ClassVar[frozenset[str]] = frozenset({NEEDS_ROOT})
    tools: ClassVar[tuple[str, ...]] = ("losetup", "fio")
    allowed_options: ClassVar[frozenset[str]] = DEVICE_OPTIONS

    def __init__(self, spec: Any, **kwargs: Any) -> None:
        super().__init__(spec, **kwargs)
        self.throttle = parse_throttle(spec.options.get("throttle"), spec.name)

    def kernel_support(self) -> str:
        return throttle_support() if self.throttle else ""

    def describe(self) -> TargetDescription:
        return TargetDescription(
            target=self.spec.name, fs="raw",
            fs_impl=f"no file system: loop device, kernel {system.kernel_release()}",
            image_size=self.spec.size, device_size=self.spec.size,
            details={"backing": "loop image in the lab directory, filled before use",
                     "loop_direct_io": loop_direct_io(self.spec.options),
                     "throttle": self.throttle or None})

    def provision(self, session: Session) -> Mounted:
        mounted = Mounted(path=None, description=self.describe())
        try:
            image = make_image(session, mounted, self.spec.name, self.spec.size)
            self._fill(image)
            mounted.device = attach_loop(session, mounted, image,
                                         loop_direct_io(self.spec.options))
            if self.throttle:
                apply_throttle(session, mounted, self.spec.name, mounted.device, self.throttle)
        except BaseException:
            self.teardown(session, mounted)
            raise
        mounted.description = mounted.description.with_(device=mounted.device,
                                                        loop=loop_settings(mounted.device))
        return mounted

    def _fill(self, image: Any) -> None:
        """Write the whole image once so that reads hit allocated blocks: direct writes of
        4 MiB, 8 in flight (twice as fast here as buffered 1 MiB writes and a final fsync;
        the data is on the disk either way)."""
        fast = self.spec.size % (4 * 1024**2) == 0
        how = (["--bs=4M", "--ioengine=libaio", "--iodepth=8", "--direct=1"] if fast
               else ["--bs=1M", "--ioengine=sync", "--end_fsync=1"])
        system.run(["fio", "--name=fslab-fill", f"--filename={image}", "--rw=write",
                    f"--size={self.spec.size}", *how, "--output-format=terse"], timeout=1800)
