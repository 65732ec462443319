"""A memory limit for one run's processes (cgroup memory controller), as a host operation.

bonnie++ is only honest when its file is at least twice the memory that can cache it.
On a small loop image that is possible only when the memory is limited: page cache a
process creates is charged to its memory cgroup (v1 and v2 alike), so a run confined to
M bytes cannot cache more than M of its 2 × M file. The cgroup is recorded in the lab's
ledger before it is made and released after the run (or by `fslab cleanup`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from fslab.host.cgroups import CGROUP_V2_ROOT as V2_ROOT
from fslab.host.cgroups import MEMORY_V1_ROOT as V1_ROOT
from fslab.host.cgroups import PREFIX
from fslab.host.lab import Resource, Session


def memory_root() -> tuple[Path, str] | None:
    """(root, limit file) of a usable memory controller: cgroup v2 with "memory" among its
    controllers, else cgroup v1's memory hierarchy; None when there is neither."""
    controllers = V2_ROOT / "cgroup.controllers"
    if controllers.exists() and "memory" in controllers.read_text().split():
        return V2_ROOT, "memory.max"
    if (V1_ROOT / "memory.limit_in_bytes").exists():
        return V1_ROOT, "memory.limit_in_bytes"
    return None


def memory_limit_support() -> str:
    """Why a run's memory cannot be limited here ('' when it can)."""
    if memory_root() is None:
        return "no cgroup memory controller (v2 'memory' or v1 /sys/fs/cgroup/memory)"
    return ""


def limit_memory(session: Session, name: str, limit: int) -> tuple[Resource, Path]:
    """A memory cgroup capped at `limit` bytes, recorded before it is made."""
    found = memory_root()
    if found is None:
        raise OSError(memory_limit_support())
    root, limit_file = found
    cgroup = root / f"{PREFIX}{session.dir.name}-{name}"
    resource = session.record("cgroup", cgroup)
    cgroup.mkdir()
    (cgroup / limit_file).write_text(str(limit))
    return resource, cgroup


@contextmanager
def memory_limited(session: Session, name: str, limit: int) -> Iterator[str]:
    """A memory cgroup of `limit` bytes for one run, as the path its processes join
    ('' when `limit` is 0: unlimited), released after the run."""
    if not limit:
        yield ""
        return
    resource, cgroup = limit_memory(session, name, limit)
    try:
        yield str(cgroup)
    finally:
        session.release(resource)
