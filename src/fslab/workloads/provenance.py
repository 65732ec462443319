"""Where every preset parameter comes from: a study (and the place in it), fio's default,
the campaign, or fslab's choice (and why).

The five studies are named as their readers know them: title, author or venue and year
where the document gives them. `fslab presets` prints a source beside every value and
`fslab presets --json` emits them; tests/workloads/test_preset_fidelity.py checks every "study"
value against a table of the studies' own values, so a label cannot drift again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

STUDY = "study"
FIO_DEFAULT = "fio default"
FSLAB = "fslab's choice"
CAMPAIGN = "campaign"  # the quick scale's runtime and size (fitted to the image)


@dataclass(frozen=True)
class Study:
    """One published study fslab reproduces."""

    key: str
    title: str
    by: str  # author, venue and year as the document gives them

    @property
    def cite(self) -> str:
        return f"{self.title} ({self.by})"


STUDIES: dict[str, Study] = {s.key: s for s in (
    Study("desktop-fio",
          "Statistical analysis: comparison of file-system benchmarks: Btrfs, Ext4, XFS, ZFS",
          "a notebook of fio runs in libvirt VMs on a ThinkPad X230; no author or year given"),
    Study("usb-files",
          "What file systems perform best for small and large files on Linux?",
          "Darlyn Close, course report for CSCI340-01; no year given"),
    Study("btrfs-zfs-hpc",
          "High-Performance Computing Storage Performance and Design Patterns: Btrfs and ZFS "
          "Performance for Different Use Cases",
          "Computers 13(6):139, MDPI, 2024"),
    Study("raid1-fs",
          "EXT4, XFS and ZFS comparison (two mirrored disks, RAID-1)",
          "a web article: CentOS 8.1, two HGST 5400 rpm disks; no author or year given"),
    Study("aging-thesis",
          "The effects of age on file system performance",
          "Samuel Petrovič, bachelor's thesis, Masaryk University, Brno, 2017"),
)}


@dataclass(frozen=True)
class Source:
    """Where one value comes from. `where` is the place in the study for a study value,
    the reason for fslab's choice, and a note otherwise."""

    kind: str
    where: str = ""
    study: str = ""  # a key of STUDIES when kind is "study"

    def label(self) -> str:
        """The short form `fslab presets` prints in brackets."""
        if self.kind == STUDY:
            return f"study: {self.where}" if self.where else STUDY
        return f"{self.kind}: {self.where}" if self.where else self.kind

    def to_json(self) -> dict[str, str]:
        data = {"source": self.kind}
        if self.study:
            data["study"] = self.study
            data["cite"] = STUDIES[self.study].cite
        if self.where:
            data["where" if self.kind == STUDY else "why"] = self.where
        return data


def study(key: str, where: str) -> Source:
    """A value the study gives, with the place in it."""
    if key not in STUDIES:
        raise KeyError(f"unknown study {key}")
    return Source(STUDY, where, key)


def fslab(why: str) -> Source:
    """A value fslab chose, with the reason."""
    return Source(FSLAB, why)


def fio_default(note: str = "") -> Source:
    return Source(FIO_DEFAULT, note)


def campaign(note: str = "") -> Source:
    return Source(CAMPAIGN, note)


@dataclass(frozen=True)
class Param:
    """One parameter of one job: its value and its source."""

    value: Any
    source: Source

    def to_json(self) -> dict[str, object]:
        return {"value": self.value, **self.source.to_json()}


@dataclass(frozen=True)
class Published:
    """A suite at its study's own scale and protocol (`fslab run --as-published`).

    Every value carries its source; `cannot` names, one line each, what a loop image on
    this kind of machine cannot reproduce (the rest still runs).
    """

    study: str
    iterations: Param
    filesystems: Param  # a tuple of fslab target kinds
    runtime: Param | None = None  # seconds per job (fio's runtime; a cap when size-based)
    file_size: Param | None = None  # per fio job
    options: dict[str, Param] | None = None  # the suite's [[workload]] options
    sections: dict[str, dict[str, Param]] | None = None  # fio: per-job values
    fresh: Param | None = None  # when the study made a new file system
    fstrim: Param | None = None  # True: fstrim before each run (a target option)
    # fields of a file system's [[target]] table as the study set them (a zfs pool's
    # layout, its cache properties; a list of levels is a factor of that target)
    targets: dict[str, dict[str, Param]] | None = None
    cannot: tuple[str, ...] = ()
    protocol: str = ""  # how the study ran its jobs, in one line

    def params(self) -> dict[str, Param]:
        """Every campaign-level value, for listings."""
        out = {"iterations": self.iterations, "filesystems": self.filesystems}
        for name in ("runtime", "file_size", "fresh", "fstrim"):
            if (param := getattr(self, name)) is not None:
                out[name] = param
        return out

    def to_json(self) -> dict[str, object]:
        data: dict[str, object] = {
            "study": self.study, "cite": STUDIES[self.study].cite,
            **{name: param.to_json() for name, param in self.params().items()},
        }
        if self.options:
            data["options"] = {k: p.to_json() for k, p in self.options.items()}
        if self.sections:
            data["sections"] = {job: {k: p.to_json() for k, p in values.items()}
                                for job, values in self.sections.items()}
        if self.targets:
            data["targets"] = {fs: {k: p.to_json() for k, p in values.items()}
                               for fs, values in self.targets.items()}
        data["protocol"] = self.protocol
        data["cannot_here"] = list(self.cannot)
        return data
