"""File systems on images, one profile each: everything fslab knows about one.

A profile is the whole of a file system's part in fslab: its driver (the kernel's, or a
FUSE program's), how to make it (mkfs, its defaults, its smallest image), how to mount it
(type or program, options fslab adds on loop images, options for an aged copy, read-only
options for copying its files out), its Debian package and version flag, its metadata
image tools, which free-space probe reads it, and the limits of its implementation the
workloads must know (declared as capabilities, never inferred from its name).
Adding a file system is one profile here (or `register_profile` from a plug-in or a
test); the targets, aging images, free-space probes, the registry and the importer all
read it.
"""

from __future__ import annotations

from dataclasses import dataclass

from fslab.targets.base import SEQUENTIAL_LAYOUT

MiB = 1024**2


KERNEL, FUSE = "kernel", "fuse"


@dataclass(frozen=True)
class FsProfile:
    """One file system on an image: a kernel driver on a loop image (or a confirmed
    device), or a FUSE program on an image (or a loop device, when it needs one)."""

    fs: str  # the campaign name
    description: str  # one line for `fslab targets`
    mkfs: str
    default_mkfs_options: tuple[str, ...]
    min_size: int
    package: str  # the Debian package with mkfs (named when it is missing)
    driver: str = KERNEL  # KERNEL or FUSE
    mount_program: str = ""  # FUSE: the program that mounts it
    needs_block_device: bool = False  # FUSE: a loop device under it, not the image file
    fuse_mount_options: tuple[str, ...] = ()  # FUSE: always given to its program
    capabilities: frozenset[str] = frozenset()  # what workloads must know (see above)
    quirk: str = ""  # what fslab does about the implementation's limits, for the record
    version_flag: tuple[str, ...] = ("-V",)
    mount_type: str = ""  # `mount -t` and the kernel's name; the campaign name if empty
    image_mount_options: tuple[str, ...] = ()  # added on loop images (see ON_IMAGES)
    aged_mount_options: tuple[str, ...] = ()  # for private copies of one aged image
    aged_fixup: tuple[str, ...] = ()  # run on a copy's device before mounting it
    read_only: str = "ro"  # mount an image to copy its files out, replaying nothing
    metadata_dump: tuple[str, ...] = ()  # <dump> DEVICE FILE
    metadata_restore: tuple[str, ...] = ()  # <restore> FILE IMAGE
    free_space: str = ""  # the probes.freespace probe that reads it ('' none)
    mkfs_nodiscard: tuple[str, ...] = ()  # mkfs without its discard (precondition = "fill")

    @property
    def kernel_name(self) -> str:
        return self.mount_type or self.fs

    def added_on_images(self, requested: str) -> list[str]:
        """Mount options fslab adds on loop images, unless the target asked about
        discard itself (see ON_IMAGES for why)."""
        return [] if "discard" in requested else list(self.image_mount_options)


# Why: btrfs mounts with discard=async wherever the device can discard, and a loop device
# can: its discards punch holes in the image file, which the host file system passes on
# to the host's disk. On this VM (host / mounted with discard) deleting a written 1 GiB
# file stopped another file's direct reads for half a second: such a burst lands on
# whichever target is being measured. A target whose mount_options mention discard
# keeps what it asks for; a real device keeps the file system's default.
ON_IMAGES = ("on loop images only: a file system's discards would punch holes in the image "
             "and reach the host's disk, stalling every target's I/O")


def added_description(options: list[str]) -> dict[str, object]:
    """The target description's entry for options fslab added ({} when none)."""
    return {"mount_options_added": {"options": options, "why": ON_IMAGES}} if options else {}


# Lazy inode-table and journal init off: otherwise ext4lazyinit writes in the background
# for minutes after mkfs and skews the first runs.
_NO_LAZY = ("-E", "lazy_itable_init=0,lazy_journal_init=0")


def _ext(fs: str, description: str, options: tuple[str, ...], min_size: int) -> FsProfile:
    return FsProfile(fs, description, f"mkfs.{fs}", options, min_size, "e2fsprogs",
                     read_only="ro,noload", metadata_dump=("e2image", "-Q"),
                     metadata_restore=("e2image", "-r"), free_space="e2freefrag",
                     mkfs_nodiscard=("-E", "nodiscard"))


BUILT_IN = (
    _ext("ext2", "ext2 (kernel) on a loop image", ("-F", "-q", "-E", "lazy_itable_init=0"),
         8 * MiB),
    _ext("ext3", "ext3 (kernel) on a loop image", ("-F", "-q", *_NO_LAZY), 16 * MiB),
    _ext("ext4", "ext4 (kernel) on a loop image, lazy init off", ("-F", "-q", *_NO_LAZY),
         16 * MiB),
    FsProfile("xfs", "xfs (kernel) on a loop image", "mkfs.xfs", ("-f", "-q"), 300 * MiB,
              "xfsprogs", aged_mount_options=("nouuid",),  # copies share a UUID
              read_only="ro,norecovery,nouuid", metadata_dump=("xfs_metadump", "-o"),
              metadata_restore=("xfs_mdrestore",), free_space="xfs_spaceman",
              mkfs_nodiscard=("-K",)),
    FsProfile("btrfs", "btrfs (kernel) on a loop image", "mkfs.btrfs", ("-f", "-q"),
              114 * MiB, "btrfs-progs", version_flag=("--version",),
              image_mount_options=("nodiscard",),
              aged_fixup=("btrfstune", "-f", "-m"),  # a copy shares the fsid: its own
              metadata_dump=("btrfs-image",), metadata_restore=("btrfs-image", "-r"),
              free_space="btrfs_free_space_tree", mkfs_nodiscard=("-K",)),
)
FUSE_BUILT_IN = (
    FsProfile("ntfs", "NTFS via ntfs-3g (FUSE) on an image", "mkntfs", ("-F", "-Q", "-q"),
              2 * MiB, "ntfs-3g", driver=FUSE, mount_program="ntfs-3g"),
    FsProfile("exfat", "exFAT via exfat-fuse (FUSE) on a loop device", "mkfs.exfat", (),
              1 * MiB, "exfat-fuse", driver=FUSE, mount_program="mount.exfat-fuse",
              needs_block_device=True),
    FsProfile("fat32", "FAT32 via fusefat rw+ (FUSE, experimental) on an image", "mkfs.fat",
              ("-F", "32"), 64 * MiB, "fusefat", driver=FUSE, mount_program="fusefat",
              fuse_mount_options=("rw+",), capabilities=frozenset({SEQUENTIAL_LAYOUT}),
              quirk="fusefat rejects ftruncate and random writes into a new file: fslab "
                    "writes each job's files sequentially before fio runs (as fio's own "
                    "layout would)"),
)
PROFILES: dict[str, FsProfile] = {p.fs: p for p in (*BUILT_IN, *FUSE_BUILT_IN)}
