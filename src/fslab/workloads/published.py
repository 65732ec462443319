"""Each suite at its study's own scale: sizes, runtimes, repetitions, file systems and
tool settings, every value with its place in the study (`fslab run --as-published`).

The quick defaults stay what a first look runs; this table is what the studies ran.
What this machine kind cannot do is named, one line each (as_published.py adds the lines
that depend on the machine: a missing kernel driver, the lab's free space).
"""

from __future__ import annotations

from fslab.workloads.provenance import Param, Published, fslab, study

ONE_RUN = fslab("the study states no repetitions: one run per job, as written")
NEW_EACH_FS = fslab("the study made each file system once and ran every job on it")

_DESKTOP = Published(
    study="desktop-fio",
    runtime=Param(60, study("desktop-fio", "every job file: runtime=60s, time_based")),
    file_size=Param("1G", study("desktop-fio", "every job file: size=1G")),
    iterations=Param(10, study("desktop-fio", "the bash loop: for i in {0..9}")),
    filesystems=Param(("btrfs", "ext4", "xfs", "zfs"),
                      study("desktop-fio", "Data origin: Btrfs, Ext4, XFS and ZFS")),
    fresh=Param("campaign", NEW_EACH_FS),
    protocol="each repetition runs the five jobs once each, one fio run per job",
    cannot=("each file system ran in its own VM (Arch Linux, Gentoo, FreeBSD for ZFS) on a "
            "ThinkPad X230: here all share this kernel and one virtual disk",),
)

_SERVER = "btrfs-zfs-hpc"
_HUNDRED = Param("100G", study(_SERVER, "section 5: size = 100 G"))
_SERVER6 = Published(
    study=_SERVER,
    runtime=Param(600, study(_SERVER, "section 5, [global]: runtime = 600")),
    file_size=Param("10G", study(_SERVER, "section 5, [global]: size = 10 G")),
    sections={"seqread": {"size": _HUNDRED}, "seqwrite": {"size": _HUNDRED},
              "db": {"size": _HUNDRED},
              "web": {"size": Param("100G", study(_SERVER, "section 6.4: 'a 100 GB file "
                                                            "for a 600 s run'"))}},
    iterations=Param(1, ONE_RUN),
    filesystems=Param(("btrfs", "xfs", "zfs"),
                      study(_SERVER, "section 3: 'we selected btrfs, ZFS, and XFS'")),
    fresh=Param("campaign", NEW_EACH_FS),
    targets={"zfs": {
        "layout": Param("raidz1", study(_SERVER, "section 6.1: 'RAIDZ topologies are the "
                                                 "most common ZFS use cases'; 6.2: 'RAIDZ "
                                                 "uses an erasure coding methodology'")),
        "devices": Param(3, fslab("the study names a stack of 10,000 rpm SAS disks, not "
                                  "how many: raidz1's fewest")),
        "primarycache": Param(["all", "none"], study(
            _SERVER, "section 5: 'two scenarios, one with and one without' caching: zfs "
                     "set primarycache = none")),
    }},
    protocol="one fio run per job, stonewalled, 600 s each; ZFS with its cache and without",
    cannot=("the study's pools were RAIDZ and btrfs arrays of 10,000 rpm SAS disks "
            "(section 5): here images on one virtual disk",
            "hpc: the study ran an application on 16 Kubernetes nodes (section 6.6); fslab "
            "runs its fio stand-in",
            "secondarycache = none (section 5's other command) changes nothing without a "
            "cache device, and the study names none: examples/zfs-cache.toml adds one",
            "ZFS here is zfs-fuse 0.7.0 (FUSE, pool version 23), not kernel OpenZFS: its "
            "ARC keeps O_DIRECT reads, as OpenZFS before 2.3 does"),
)

_RAID1 = "raid1-fs"
_COMMAND = "the fio command line: "


def _mirror(name: str) -> Published:
    return Published(
        study=_RAID1,
        runtime=Param(600, study(_RAID1, _COMMAND + "--runtime=600 (a cap: no "
                                                    "--time_based)")),
        file_size=Param("1G", study(_RAID1, _COMMAND + "--size=1G")),
        iterations=Param(1, fslab("the study shows one run per file system")),
        filesystems=Param(("md-raid1-ext4", "md-raid1-xfs", "zfs-mirror"), study(
            _RAID1, "mkfs.ext4 /dev/md0, mkfs.xfs /dev/md1, zpool create ... mirror")),
        fresh=Param("campaign", NEW_EACH_FS),
        protocol="one fio run per file system; a run ends at 1 GiB per job or 600 s",
        cannot=("two HGST 5400 rpm disks in RAID-1: here two loop images on one virtual "
                "disk",) + ((
                    "the 128 KiB runs the study prints used --direct=0 --size=16G (128 GB "
                    "of data) though its command reads --direct=1 --size=1G: fslab runs "
                    "the command",) if name == "randrw128k" else ()),
    )


_BONNIE = Published(
    study=_RAID1,
    options={"file_size": Param("2xRAM", study(_RAID1, "bonnie++ 'writes 128 GB data to "
                                                       "the disks because the server has "
                                                       "64 GB RAM'")),
             "files_k": Param(16, study(_RAID1, "the bonnie++ tables: Num Files 16"))},
    iterations=Param(1, fslab("the study shows one run per file system")),
    filesystems=Param(("md-raid1-ext4", "md-raid1-xfs", "zfs-mirror"), study(
        _RAID1, "mkfs.ext4 /dev/md0, mkfs.xfs /dev/md1, zpool create ... mirror")),
    fresh=Param("campaign", NEW_EACH_FS),
    protocol="one bonnie++ run per file system",
    cannot=("the study ran bonnie++ 1.98; Debian packages 2.00a",
            "two HGST 5400 rpm disks in RAID-1: here two loop images on one virtual disk"),
)

_SMALLFILES = Published(
    study=_RAID1,
    options={"count": Param(100_000, study(_RAID1, "Tests using Perl: 'Creating 100.000 "
                                                   "files with 4KB and 128KB size'"))},
    iterations=Param(1, fslab("the study shows one run per file system")),
    filesystems=Param(("md-raid1-ext4", "md-raid1-xfs", "zfs-mirror"), study(
        _RAID1, "mkfs.ext4 /dev/md0, mkfs.xfs /dev/md1, zpool create ... mirror")),
    fresh=Param("campaign", NEW_EACH_FS),
    protocol="write, rewrite, read and delete once per file system, each with its sync",
    cannot=("the study used 'a simple perl script' it does not print: fslab's own writer",
            "two HGST 5400 rpm disks in RAID-1: here two loop images on one virtual disk"),
)

_USB = "usb-files"
_FILES = Published(
    study=_USB,
    options={
        "small_count": Param(500, study(_USB, "Sample Sizes: 'All small file tests were run "
                                              "with a sample size of 500'")),
        "large_count": Param(250, study(_USB, "Sample Sizes: 'All large file tests were run "
                                              "with a sample size of 250'")),
        "small_size": Param("10M", study(_USB, "Setup: 'a small file as 10MB/10MiB'")),
        "large_size": Param("100M", study(_USB, "Setup: 'a large file as 105MB/100MiB'")),
        "tool": Param("dd", study(_USB, "How I ran tests: 'I used the dd command to write "
                                        "random data into a file'")),
        "flush": Param("none", study(_USB, "How I ran tests: dd with no flush named")),
    },
    iterations=Param(1, fslab("the study's samples are its repetitions: one iteration of "
                              "500 and 250 samples")),
    filesystems=Param(("fat32", "ext2", "ext4", "ntfs", "xfs"), study(
        _USB, "Setup: 'FAT32, ext2, ext4, NTFS, and xfs'")),
    fresh=Param("campaign", fslab("the study formatted the USB drive once per file "
                                  "system (GParted)")),
    protocol="dd writes of random data, each timed by dd; a z interval (1.96) over samples",
    cannot=("a USB drive written from an Ubuntu VM: here a loop image on this VM's virtual "
            "disk, not a USB stick",
            "FAT32 and NTFS here run through FUSE (fusefat, ntfs-3g)"),
)

_AGING = "aging-thesis"
_AGED = Published(
    study=_AGING,
    runtime=Param(600, study(_AGING, "section 6.1: 'runtime of 10 minutes'")),
    iterations=Param(1, fslab("section 6.2: tests 'can run in loops n times', n not given")),
    filesystems=Param(("xfs", "ext4"), study(_AGING, "section 7.5: XFS and EXT4")),
    fresh=Param("run", study(_AGING, "section 6.2: the image is reloaded before each test")),
    fstrim=Param(True, study(_AGING, "section 6.2: 'Before every test, initialization is "
                                     "performed by running sync, fstrim and dropping "
                                     "caches'")),
    protocol="before each test: sync, fstrim and dropped caches (section 6.2); fresh "
             "and aged tests in separate loops",
    cannot=("fio's size as 'most of the space left after loading the image' (section "
            "6.1): fslab keeps 2,000 files of 4 KiB per job",
            "the thesis's images came from fs-drift at 80 % and 99 % utilisation on HDD "
            "and SSD: age targets with fslab's own aging (age = ...)"),
)

PUBLISHED: dict[str, Published] = {
    "basic5": _DESKTOP,
    "direct5": _DESKTOP,  # fslab's variant of the same suite: the study's scale, O_DIRECT
    "server6": _SERVER6,
    "randrw16k": _mirror("randrw16k"),
    "randrw": _mirror("randrw"),
    "randrw128k": _mirror("randrw128k"),
    "aged": _AGED,
    "bonnie": _BONNIE,
    "smallfiles": _SMALLFILES,
    "files": _FILES,
}
