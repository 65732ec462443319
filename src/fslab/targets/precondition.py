"""A solid-state disk's state before the first measurement: a target's `precondition`.

An SSD's write speed depends on what was written to it before: fresh out of the box (or
just trimmed) it has free erased blocks and writes fast; once every block has held data
its garbage collection runs beside the writes and it settles lower (SNIA's Solid State
Storage Performance Test Specification, PTS 2.0.2, 2020: purge the device, write twice its
user capacity sequentially in 128 KiB blocks as workload-independent preconditioning, then
run the workload itself until it is steady). So a target says which state it starts in:

- "none" (the default): fslab does nothing to the device. mkfs of ext4, xfs and btrfs
  discards the whole device by default, so a loop image starts all holes (the host
  allocates its blocks as they are first written) and a real SSD starts trimmed.
- "fill": write the device (a real one, or the loop image) sequentially twice with 1 MiB
  direct writes, then mkfs without its discard: every block has held data, the state the
  SNIA conventions measure in; then the workload's own runs bring its steady state
  (fslab's slices and iterations; `--rerun-unsteady` for a run that was not).
- "trim": discard the whole device (blkdiscard) before mkfs, whatever mkfs does.

A loop image is made fresh for every file system, so it is preconditioned each time (its
cost bounded by the image size: two writes of it); a real device, once per campaign (its
session), before its first measurement.
"""

from __future__ import annotations

import time
from pathlib import Path

from fslab.core.errors import ToolError, UserError
from fslab.host import system
from fslab.host.children import run_child
from fslab.host.lab import Session

OPTION = "precondition"
HOW = ("none", "fill", "trim")
DEFAULT = "none"
FILL_PASSES = 2  # SNIA PTS: twice the user capacity, sequential
FILL_BLOCK = "1M"
FILL_SLOWEST_BYTES_S = 20 * 1024**2  # the watchdog's bound: a disk slower than this is hung


def wanted(options: dict[str, object], target: str) -> str:
    """The target's precondition ("none", "fill" or "trim"), checked."""
    how = str(options.get(OPTION, DEFAULT))
    if how not in HOW:
        raise UserError(f"target {target}: precondition = {how!r}: use one of "
                        f"{', '.join(HOW)}")
    return how


def mkfs_keeps(how: str, nodiscard: tuple[str, ...]) -> tuple[str, ...]:
    """The mkfs options that keep a fill (mkfs's own discard would undo it)."""
    return nodiscard if how == "fill" else ()


def apply(session: Session, device: str, how: str, image: Path | None) -> dict[str, object]:
    """Bring `device` to the state `how` says (a loop image: every time; a real device:
    once per session), and what was done, for the target's description."""
    if how == "none":
        return {"how": "none", "why": "nothing done to the device (mkfs's own discard "
                                      "leaves it trimmed, a loop image sparse)"}
    marker = session.dir / f"preconditioned-{Path(device).name}"
    if image is None and marker.exists():
        return {"how": how, "done": marker.read_text().strip(),
                "why": "a real device is preconditioned once per campaign"}
    size = int(system.run(["blockdev", "--getsize64", device]).stdout.strip())
    start = time.perf_counter()
    if how == "trim":
        system.run(["blkdiscard", device], timeout=3600)
        done = f"the whole device discarded (blkdiscard, {size} bytes)"
    else:
        _fill(device, size)
        done = (f"{FILL_PASSES} sequential passes of {FILL_BLOCK} direct writes over all "
                f"{size} bytes")
    seconds = round(time.perf_counter() - start, 3)
    if image is None:
        marker.write_text(done)
    return {"how": how, "done": done, "seconds": seconds, "bytes": size,
            "why": "a loop image each time it is made" if image is not None
            else "a real device, before its first measurement"}


def _fill(device: str, size: int) -> None:
    """Write the device sequentially FILL_PASSES times (fio, O_DIRECT, 1 MiB blocks)."""
    deadline = FILL_PASSES * size / FILL_SLOWEST_BYTES_S + 60
    cmd = ["fio", "--name=precondition", f"--filename={device}", "--rw=write",
           f"--bs={FILL_BLOCK}", "--direct=1", "--ioengine=libaio", "--iodepth=16",
           f"--loops={FILL_PASSES}", "--size=100%", "--output-format=terse",
           "--output=/dev/null"]
    done = run_child(cmd, deadline, bound='precondition = "fill": two writes of the device',
                     measured=False)
    if done.returncode != 0:
        raise ToolError(cmd, done.returncode, done.watchdog or done.stderr)
