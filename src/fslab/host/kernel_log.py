"""What the kernel said about a device while a command ran.

A refused mount says only "wrong fs type, bad option, bad superblock … dmesg(1) may have
more information"; the reason ("EXT4-fs (loop1): can't mount with both data=journal and
delalloc") is in the kernel's log. /dev/kmsg, opened and moved to its end before the
command, gives exactly the records written since, without reading (or clearing) the
whole ring buffer; where it cannot be opened (no root, a container), nothing is added.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable, Iterator

KMSG = "/dev/kmsg"
MOST = 5  # lines kept: a refused mount writes one or two
READ_MOST = 10_000  # records read after a failed mount


@contextlib.contextmanager
def kernel_lines() -> Iterator[Callable[[str], list[str]]]:
    """Yield `said(device)`: the kernel's records since the block began that name the
    device ('loop1' from '/dev/loop1'), as text."""
    try:
        fd = os.open(KMSG, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        yield lambda device: []
        return
    try:
        try:
            os.lseek(fd, 0, os.SEEK_END)
        except OSError:  # a kernel before 3.5: no reading from now on
            yield lambda device: []
            return

        def said(device: str) -> list[str]:
            name = re.escape(os.path.basename(device))
            naming = re.compile(rf"(\({name}\)|\b{name}\b)")
            return [text for text in _records(fd) if naming.search(text)][:MOST]

        yield said
    finally:
        os.close(fd)


def _records(fd: int) -> Iterator[str]:
    """The records written since the last read ('6,1234,5678,-;TEXT' each), at most
    READ_MOST of them (a busy kernel log does not hold a mount up)."""
    for _ in range(READ_MOST):
        try:
            record = os.read(fd, 8192)
        except BlockingIOError:
            return
        except BrokenPipeError:  # records were overwritten meanwhile: read on
            continue
        except OSError:
            return
        if not record:
            return
        _, _, text = record.decode(errors="replace").partition(";")
        yield text.splitlines()[0].strip() if text else ""


def briefly(reason: str) -> str:
    """A failed tool's reason in its fewest words: the kernel's line where it gave one
    ("the kernel: can't mount with both data=journal and delalloc", without the
    "EXT4-fs (loop3): " that names a device gone by now), else the reason as it is. Of
    several, the first error: what follows it is its consequence (btrfs: "cannot disable
    free-space-tree", then a warning, then "open_ctree failed")."""
    _, *said = reason.split("kernel: ")
    if not said:
        return reason
    lines = [line.strip() for line in said]
    errors = [line for line in lines if re.match(r"[^:]*\berror\b", line, re.IGNORECASE)]
    chosen = errors[0] if errors else lines[-1]
    return "the kernel: " + re.sub(r"^[^:(]*\((?:device )?\w+\): ", "", chosen)
