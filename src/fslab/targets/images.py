"""Aged images kept and restored: sparse copies, zstd-compressed copies, metadata images.

An aged file system is worth keeping: aging it again costs minutes to hours. `fslab age
--image` keeps it in one of three forms, and a target's `image = ...` (or `fresh_copy_of
= ...`) restores any of them into a private sparse image in the lab:

- sparse (image.img): the whole image, holes kept; full fidelity.
- zstd (image.img.zst): the same, compressed; restored with holes again.
- metadata (image.meta): the file system's own metadata dump (its profile's tools:
  e2image -Q, xfs_metadump, btrfs-image). The tree, names, sizes and every extent's
  place survive; file contents do not (they read as zeros, and on btrfs reading them
  fails its data checksums). Small enough to share, and enough for layout, metadata
  and write workloads.

image.json beside the image says what it is and how big the file system is, so a target
can use it without being told.
"""

from __future__ import annotations

import json
from pathlib import Path

from fslab.core.aging_record import KeptImage
from fslab.core.errors import UserError
from fslab.host import system
from fslab.targets.profiles import PROFILES

KINDS = ("sparse", "zstd", "metadata", "none")
FILE_NAMES = {"sparse": "image.img", "zstd": "image.img.zst", "metadata": "image.meta"}
CONTENTS = {"sparse": "full", "zstd": "full",
            "metadata": "metadata only: file contents read as zeros (btrfs: reads fail "
                        "their data checksums)"}


def _metadata_tools(fs: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(dump, restore) commands from the file system's profile (empty when it has none)."""
    profile = PROFILES.get(fs)
    return (profile.metadata_dump, profile.metadata_restore) if profile else ((), ())


def has_metadata_dump(fs: str) -> bool:
    """Whether `fs` can be kept as a metadata image (its profile names both tools)."""
    return all(_metadata_tools(fs))


def kind_of(path: Path) -> str:
    """What an image file is, from its name (image.img.zst, image.meta, anything else)."""
    if path.name.endswith(".zst"):
        return "zstd"
    if path.name.endswith(".meta"):
        return "metadata"
    return "sparse"


def keep(image: Path, device: str, fs: str, out: Path, kind: str) -> KeptImage:
    """Keep an unmounted aged file system (its image file and loop device) as `kind`."""
    destination = out / FILE_NAMES[kind]
    if kind == "sparse":
        system.run(["cp", "--sparse=always", str(image), str(destination)], timeout=3600)
    elif kind == "zstd":
        system.run(["zstd", "-q", "-T0", "-o", str(destination), str(image)], timeout=3600)
    else:
        if not has_metadata_dump(fs):
            raise UserError(f"no metadata image tool for {fs}; use --image sparse or zstd")
        system.run([*_metadata_tools(fs)[0], device, str(destination)], timeout=3600)
    return KeptImage(kind, destination.name, fs, CONTENTS[kind], image.stat().st_size,
                     destination.stat().st_blocks * 512)


def restore(source: Path, destination: Path, fs: str) -> None:
    """Turn a kept image of any kind into a sparse image file at `destination`."""
    kind = kind_of(source)
    if kind == "sparse":
        command = ["cp", "--sparse=always", str(source), str(destination)]
    elif kind == "zstd":
        command = ["zstd", "-q", "-d", "--sparse", "-f", "-o", str(destination), str(source)]
    else:
        if not has_metadata_dump(fs):
            raise UserError(f"{source} is a metadata image: {fs} has no metadata restore "
                            "tool; use a sparse or zstd image")
        command = [*_metadata_tools(fs)[1], str(source), str(destination)]
    system.run(command, timeout=3600)


def described(source: Path) -> dict[str, object]:
    """What image.json beside an image says about it ({} when there is none)."""
    sidecar = source.parent / "image.json"
    try:
        record = json.loads(sidecar.read_text())
    except (OSError, ValueError):
        return {}
    image = record.get("image") if isinstance(record, dict) else None
    if not isinstance(image, dict) or image.get("path") != source.name:
        return {}  # image.json describes another file of that directory
    return {"fs": record.get("fs"), **image}


def check_usable(source: Path, fs: str, where: str) -> int | None:
    """Refuse an image of another file system; the file system's size when known."""
    about = described(source)
    if about.get("fs") and about["fs"] != fs:
        raise UserError(f"{where}: {source} holds {about['fs']}, not {fs}")
    kind = kind_of(source)
    if kind == "metadata" and not has_metadata_dump(fs):
        raise UserError(f"{where}: {source} is a metadata image; {fs} has no restore tool")
    if kind == "sparse":
        return source.stat().st_size
    size = about.get("fs_bytes")
    return int(size) if isinstance(size, int) else None
