"""Loop-image kernel file systems, one profile each: everything fslab knows about one.

A profile is the whole of a file system's part in fslab: how to make it (mkfs, its
defaults, its smallest image), how to mount it (type, options fslab adds on loop images,
options for an aged copy, read-only options for copying its files out), its Debian
package and version flag, its metadata image tools, and which free-space probe reads it.
Adding a loop-image file system is one profile here (or `register_profile` from a
plug-in or a test); the target, aging images, free-space probes, the registry and the
importer all read it.
"""

from __future__ import annotations

from dataclasses import dataclass

MiB = 1024**2


@dataclass(frozen=True)
class FsProfile:
    """One kernel file system on a loop image (or a confirmed device)."""

    fs: str  # the campaign name
    description: str  # one line for `fslab targets`
    mkfs: str
    default_mkfs_options: tuple[str, ...]
    min_size: int
    package: str  # the Debian package with mkfs (named when it is missing)
    version_flag: tuple[str, ...] = ("-V",)
    mount_type: str = ""  # `mount -t` and the kernel's name; the campaign name if empty
    image_mount_options: tuple[str, ...] = ()  # added on loop images (see ON_IMAGES)
    aged_mount_options: tuple[str, ...] = ()  # for private copies of one aged image
    aged_fixup: tuple[str, ...] = ()  # run on a copy's device before mounting it
    read_only: str = "ro"  # mount an image to copy its files out, replaying nothing
    metadata_dump: tuple[str, ...] = ()  # <dump> DEVICE FILE
    metadata_restore: tuple[str, ...] = ()  # <restore> FILE IMAGE
    free_space: str = ""  # the aging.freespace probe that reads it ('' none)

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
                     metadata_restore=("e2image", "-r"), free_space="e2freefrag")


BUILT_IN = (
    _ext("ext2", "ext2 (kernel) on a loop image", ("-F", "-q", "-E", "lazy_itable_init=0"),
         8 * MiB),
    _ext("ext3", "ext3 (kernel) on a loop image", ("-F", "-q", *_NO_LAZY), 16 * MiB),
    _ext("ext4", "ext4 (kernel) on a loop image, lazy init off", ("-F", "-q", *_NO_LAZY),
         16 * MiB),
    FsProfile("xfs", "xfs (kernel) on a loop image", "mkfs.xfs", ("-f", "-q"), 300 * MiB,
              "xfsprogs", aged_mount_options=("nouuid",),  # copies share a UUID
              read_only="ro,norecovery,nouuid", metadata_dump=("xfs_metadump", "-o"),
              metadata_restore=("xfs_mdrestore",), free_space="xfs_spaceman"),
    FsProfile("btrfs", "btrfs (kernel) on a loop image", "mkfs.btrfs", ("-f", "-q"),
              114 * MiB, "btrfs-progs", version_flag=("--version",),
              image_mount_options=("nodiscard",),
              aged_fixup=("btrfstune", "-f", "-m"),  # a copy shares the fsid: its own
              metadata_dump=("btrfs-image",), metadata_restore=("btrfs-image", "-r"),
              free_space="btrfs_free_space_tree"),
)
PROFILES: dict[str, FsProfile] = {p.fs: p for p in BUILT_IN}
