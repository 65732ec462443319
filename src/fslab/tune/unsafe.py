"""Options that trade durability for speed: not wins. A tuner that "finds" nobarrier,
data=writeback or ZFS sync=disabled has found a way to lose acknowledged data on a power
loss or crash, not a better file system. One table, a source per entry; a space that
contains one is refused in one line unless --allow-unsafe, and a winner that uses one
says so everywhere it is printed."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from fslab.core.errors import UserError
from fslab.plan.levels import ZFS_PREFIX

EXT4_DOC = "https://docs.kernel.org/admin-guide/ext4.html"
XFS_DOC = "https://docs.kernel.org/admin-guide/xfs.html"
BTRFS_DOC = "https://btrfs.readthedocs.io/en/latest/ch-mount-options.html"
ZFS_DOC = "https://openzfs.github.io/openzfs-docs/man/master/7/zfsprops.7.html"
FIO_DOC = "https://fio.readthedocs.io/en/latest/fio_doc.html"


@dataclass(frozen=True)
class Unsafe:
    """One option that risks acknowledged data: where it applies ('mount' options of the
    named file systems, a 'zfs' property, a 'fio' job option), its value, why, and the
    document that says so."""

    kind: str  # mount | zfs | fio
    option: str  # the option as written (mount), the property=value, or the fio option
    fs: tuple[str, ...]  # file systems it applies to (mount, zfs); () for fio
    why: str
    source: str


UNSAFE = (
    Unsafe("mount", "nobarrier", ("ext3", "ext4"), "journal commits reach the disk out of "
           "order: a power loss can leave the file system inconsistent", EXT4_DOC),
    Unsafe("mount", "barrier=0", ("ext3", "ext4"), "write barriers off: a power loss can "
           "leave the file system inconsistent", EXT4_DOC),
    Unsafe("mount", "data=writeback", ("ext3", "ext4"), "data ordering is not preserved: "
           "after a crash, files can hold stale data", EXT4_DOC),
    Unsafe("mount", "journal_async_commit", ("ext4",), "the commit block is written "
           "without waiting for its descriptor blocks", EXT4_DOC),
    Unsafe("mount", "nobarrier", ("xfs",), "write barriers off (removed in Linux 4.19 for "
           "this reason): a power loss can corrupt the log", XFS_DOC),
    Unsafe("mount", "nodatacow", ("btrfs", "btrfs-raid1"), "no copy-on-write and no "
           "checksums for data: a torn write after a crash goes unnoticed", BTRFS_DOC),
    Unsafe("mount", "nodatasum", ("btrfs", "btrfs-raid1"), "no checksums for data: "
           "corruption goes unnoticed", BTRFS_DOC),
    Unsafe("zfs", "sync=disabled", ("zfs", "zfs-mirror"), "synchronous writes are "
           "acknowledged before they are on stable storage: the last seconds are lost on a "
           "power loss", ZFS_DOC),
    Unsafe("fio", "fsync", (), "the job no longer makes its writes durable", FIO_DOC),
    Unsafe("fio", "fdatasync", (), "the job no longer makes its writes durable", FIO_DOC),
    Unsafe("fio", "end_fsync", (), "the job no longer makes its writes durable", FIO_DOC),
    Unsafe("fio", "sync", (), "the job's writes are no longer synchronous", FIO_DOC),
)
OFF = {"0", "none", "false", "no"}


def unsafe_of(factor: str, level: str, reference: str, fs: Iterable[str]) -> Unsafe | None:
    """The table's entry a factor's level falls under on these file systems (the
    simulator, fs null, stands for any), or None."""
    kinds = set(fs)
    any_fs = "null" in kinds
    if factor.startswith("mount_options"):
        options = {part.strip() for part in level.split(",") if part.strip()}
        return next((u for u in UNSAFE if u.kind == "mount" and u.option in options
                     and (any_fs or kinds & set(u.fs))), None)
    if factor.startswith(ZFS_PREFIX):
        setting = f"{factor[len(ZFS_PREFIX):]}={level}"
        return next((u for u in UNSAFE if u.kind == "zfs" and u.option == setting
                     and (any_fs or kinds & set(u.fs))), None)
    if level.lower() in OFF and reference.lower() not in OFF:
        return next((u for u in UNSAFE if u.kind == "fio" and u.option == factor), None)
    return None


def check_space(levels: dict[str, list[str]], fs: Iterable[str], allowed: bool) -> list[str]:
    """Refuse, in one line, a space with an unsafe level unless `allowed`; with it, the
    notes that name each (printed wherever a winner uses one)."""
    found = [(factor, level, entry) for factor, values in levels.items() for level in values
             if (entry := unsafe_of(factor, level, values[0], fs)) is not None]
    if found and not allowed:
        factor, level, entry = found[0]
        raise UserError(f"--factor {factor}: {level} risks acknowledged data on a power loss "
                        f"or crash ({entry.why}; {entry.source}); tuning for it finds a way "
                        "to lose data, not a faster file system: leave it out, or pass "
                        "--allow-unsafe to measure it anyway")
    return [f"{level} is unsafe: {entry.why} ({entry.source})" for _, level, entry in found]
