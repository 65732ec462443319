"""Every module fslab imports by its name, in one table.

Some parts are found by a name written as text, so that what needs them loads them only
when it does: fslab's own plug-ins (core/plugins.py), a kind of target's class (listing
the kinds imports none), a participant beside the targets (the runner imports none), an
analysis step and the libraries loaded ahead of the analysis. import-linter cannot see an
import written as text, so each of those lookups takes its names from here, and
tests/test_structure.py reads `LOOKUPS`: every name exists, and each lookup goes down the
layers of pyproject.toml or stays in its own folder. The plug-ins are the one sanctioned
exception: lower layers read their declarations, and each plug-in module imports the
contract types of those layers (Suite, RawKind, Statistic), so its own imports still go
down.

A name is "module" or "module:attribute".
"""

from __future__ import annotations

from dataclasses import dataclass

# fslab's own plug-ins, one line each (a user's are named in $FSLAB_PLUGINS): a workload
# with its suite, its raw files' kind and its tool's package; a statistic. Their order is
# the order `fslab presets` lists the suites in and the parse stage tries the kinds in.
BUILTIN: tuple[str, ...] = (
    "fslab.workloads.files",
    "fslab.workloads.smallfiles",
    "fslab.workloads.agedfiles",
    "fslab.workloads.scan",
    "fslab.workloads.bonnie",
    "fslab.workloads.null",
    "fslab.analysis.cells.noise",
    "fslab.analysis.cells.aging_series",
    "fslab.analysis.pairs.aging_trend",
    "fslab.analysis.factors.aging_latency",
)

# Kinds of target (targets/__init__.py): the class that runs a file system's profile, by
# its driver, and every other kind with the one line `fslab targets` shows for it.
LOOPFS = "fslab.targets.loopfs:LoopFsTarget"
FUSEFS = "fslab.targets.fusefs:FuseFsTarget"
TARGET_KINDS: dict[str, tuple[str, str]] = {
    "zfs": ("fslab.targets.zfs:ZfsTarget",
            "zfs pool on an image: kernel OpenZFS, else zfs-fuse"),
    "tmpfs": ("fslab.targets.tmpfs:TmpfsTarget", "tmpfs: a memory-speed baseline"),
    "raw": ("fslab.targets.raw:RawTarget",
            "the loop device itself, no file system: the ceiling"),
    "zfs-mirror": ("fslab.targets.zfs:ZfsTarget", "zfs mirror over two images"),
    "btrfs-raid1": ("fslab.targets.mirror:BtrfsRaid1Target",
                    "btrfs raid1 (data+metadata) over two loop devices"),
    "md-raid1-ext4": ("fslab.targets.mirror:MdRaid1Target",
                      "md RAID-1 over two loop devices, ext4 on top"),
    "md-raid1-xfs": ("fslab.targets.mirror:MdRaid1Target",
                     "md RAID-1 over two loop devices, xfs on top"),
    "dir": ("fslab.targets.directory:DirectoryTarget",
            "dir:PATH: an existing directory, no mkfs, no root"),
    "null": ("fslab.targets.null:NullTarget", "the null target (tests the harness itself)"),
}

# Participants beside a campaign's targets (run/participants.py), a factory each.
PARTICIPANTS: tuple[str, ...] = ("fslab.run.ceiling:ceiling_beside",)

# The analysis's steps (analysis/step.py), one line each: a module declaring STEP, in the
# room of the question it answers (cells: what each target measured; pairs: which is
# faster and how sure; factors: what each option does). They run in the order of what
# each reads; where that leaves a choice, in this order (methods.csv's order).
ANALYSIS_STEPS: tuple[str, ...] = (
    "fslab.analysis.cells.observations",
    "fslab.analysis.pairs.questions",
    "fslab.analysis.cells.summary",
    "fslab.analysis.factors.levels",
    "fslab.analysis.pairs.comparisons",
    "fslab.analysis.sittings.on_repeat",
    "fslab.analysis.pairs.ranking",
    "fslab.analysis.cells.drift",
    "fslab.analysis.cells.disturbance",
    "fslab.analysis.cells.hosts",
    "fslab.analysis.cells.zfs_pools",
    "fslab.analysis.cells.study_intervals",
    "fslab.analysis.pairs.study_methods",
    "fslab.analysis.pairs.aged",
    "fslab.analysis.factors.sweeps",
    "fslab.analysis.pairs.sequential",
    "fslab.analysis.statistic",
    "fslab.analysis.factors.aging_ranking",
    "fslab.analysis.verdicts",
)
# What a campaign's parse stage and analysis load, heavy ones first (imported on their
# own they cost 1.2 s here): analysis.pipeline.preload imports those not loaded yet while
# a campaign waits on its first layout pass, so that time is not added at the end. (With
# fslab's imports at the top of each module, the api and the runner load most of them
# when they are imported; pyarrow.parquet is left to the preload.)
PRELOADED: tuple[str, ...] = (
    "pandas", "pyarrow.parquet", "scipy.special", "fslab.analysis.pairs.comparisons",
    "fslab.analysis.verdicts", "fslab.analysis.factors.sweeps", "fslab.parsers.registry")


@dataclass(frozen=True)
class Lookup:
    """The names one module imports by text."""

    reader: str
    names: tuple[str, ...]
    plugins: bool = False  # declarations lower layers read (the module doc's exception)


LOOKUPS: tuple[Lookup, ...] = (
    Lookup("fslab.core.plugins", BUILTIN, plugins=True),
    Lookup("fslab.targets", (LOOPFS, FUSEFS, *(name for name, _ in TARGET_KINDS.values()))),
    Lookup("fslab.run.participants", PARTICIPANTS),
    Lookup("fslab.analysis.step", ANALYSIS_STEPS),
    Lookup("fslab.analysis.pipeline", PRELOADED),
)
