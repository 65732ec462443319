"""Loop devices: an image attached to a free one, or one line saying why there is none.

Containers and CI runners often see a fixed handful of /dev/loop* nodes, some held by
other processes; `losetup --find` then fails, or races with another process that takes
the node it found. fslab does not look before it attaches: it asks the kernel to bind the
image to a node, and a node the kernel finds bound (EBUSY: another process took it) is
passed over for the next. So a node taken between finding and attaching is never
mistaken for fslab's, and only an image fslab recorded is ever detached (the ledger's
`loop` entry names the image, host/releasers.py detaches by it).

$FSLAB_LOOP_DEVICES limits the nodes fslab may use ("/dev/loop6,/dev/loop7", or a pattern,
"/dev/loop[4-7]"): a shared machine's pool for it. Without it, `losetup --find`, which
makes a new node through /dev/loop-control where the machine allows.
"""

from __future__ import annotations

import glob
import os
import re
import time
from pathlib import Path

from fslab.core.errors import Shortage, ToolError
from fslab.host import system

LOOP_DEVICES = "FSLAB_LOOP_DEVICES"
FIND_TRIES = 5  # `losetup --find` raced by other processes: tried again, after a pause
FIND_PAUSE_S = 0.2
SHOWN = 4  # held nodes named in the line; the rest counted
_BUSY = "device or resource busy"
_NONE_FREE = "could not find any free loop device"


def allowed() -> list[str] | None:
    """The nodes $FSLAB_LOOP_DEVICES allows, in order (None: any node)."""
    text = os.environ.get(LOOP_DEVICES, "").strip()
    if not text:
        return None
    found: list[str] = []
    for item in (part.strip() for part in text.split(",")):
        if item:
            found += sorted(glob.glob(item), key=_number) if glob.has_magic(item) else [item]
    return list(dict.fromkeys(found))


def attach(image: Path, direct_io: bool) -> str:
    """Attach `image` to a free loop device and return the device; Shortage (one line:
    how many nodes, which are held, what to do) when none is free."""
    options = ["--direct-io=on"] if direct_io else []
    nodes = allowed()
    if nodes is None:
        for attempt in range(FIND_TRIES):
            proc = system.run(["losetup", "--find", "--show", *options, str(image)],
                              check=False, timeout=60)
            if proc.returncode == 0:
                return proc.stdout.strip()
            said = proc.stderr.lower()
            if _BUSY not in said and _NONE_FREE not in said:
                raise ToolError(["losetup", "--find"], proc.returncode, proc.stderr)
            time.sleep(FIND_PAUSE_S * (attempt + 1))
        raise Shortage(no_free_message(None))
    for node in nodes:
        proc = system.run(["losetup", *options, node, str(image)], check=False, timeout=60)
        if proc.returncode == 0:
            return node
        if _BUSY not in proc.stderr.lower() and Path(node).exists():
            raise ToolError(["losetup", node], proc.returncode, proc.stderr)
    raise Shortage(no_free_message(nodes))


def no_free_message(nodes: list[str] | None) -> str:
    """What is wrong and what to do, in one line: the nodes there are (or fslab may use),
    which are held and by what."""
    present = nodes if nodes is not None else sorted(
        glob.glob("/dev/loop[0-9]*"), key=_number)
    held = [(node, holder(node)) for node in present if holder(node)]
    missing = [node for node in present if not Path(node).exists()]
    if nodes is not None:
        where = (f"{len(nodes)} node{'s' * (len(nodes) != 1)} allowed by ${LOOP_DEVICES} "
                 f"({', '.join(nodes)})")
        more = f"allow more in ${LOOP_DEVICES}"
    else:
        control = "" if Path("/dev/loop-control").exists() else \
            ", and no /dev/loop-control to make another"
        where = f"{len(present)} loop node{'s' * (len(present) != 1)} on this machine{control}"
        more = "give the machine more (mknod, or the loop module's max_loop)"
    shown = ", ".join(f"{node} by {backing}" for node, backing in held[:SHOWN])
    rest = f" and {len(held) - SHOWN} more" if len(held) > SHOWN else ""
    state = f"{len(held)} held ({shown}{rest})" if held else "none held"
    absent = f", {len(missing)} absent ({', '.join(missing)})" if missing else ""
    return (f"no free loop device: {where}: {state}{absent}; nothing was formatted. "
            f"Detach one you no longer use (losetup -d DEVICE) or {more}")


def holder(node: str) -> str:
    """The file a loop node is bound to ('' when it is free)."""
    backing = Path("/sys/block") / Path(node).name / "loop" / "backing_file"
    try:
        return backing.read_text().strip()
    except OSError:
        return ""


def releasing(under: Path) -> list[str]:
    """Loop devices still bound to a deleted file under `under`: an image removed while
    its loop device lets go in the background; its blocks are freed only then."""
    deleted = " (deleted)"
    nodes = [f"/dev/{Path(d).name}" for d in glob.glob("/sys/block/loop*")]
    return [node for node in nodes
            if (name := holder(node)).endswith(deleted)
            and Path(name.removesuffix(deleted)).is_relative_to(under)]


def _number(node: str) -> int:
    found = re.search(r"(\d+)$", node)
    return int(found.group(1)) if found else -1
