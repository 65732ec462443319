"""The campaign's data: what a campaign file may say (CampaignFile), the flags that stand in
for it (Overrides) and the resolved form every later stage reads (Campaign).

Kept apart from loading (loading.py) so that the steps of loading that need these types
(as_published.py, workload_entries.py) do not import the loader back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, field_validator

from fslab.core.campaign_settings import LookCell
from fslab.core.cell_keys import CellKey
from fslab.core.units import DEFAULT_MARGIN
from fslab.plan.target_entries import TargetEntry
from fslab.targets import IMAGE_LESS, TargetSpec
from fslab.targets.zfs_pool import POOL_FIELDS
from fslab.workloads.fio.distributed import Host

DEFAULT_PRESET = "direct5"
DEFAULT_ITERATIONS = 5  # on this VM: paired comparisons with 4 df, t = 2.78 instead of 4.30
# 2 s per job (3 interleaved slices of 0.67 s, the first after a 0.5 s ramp: run/pieces.py):
# the default campaign then runs in about 8 minutes here, set-up included. A 3 s job is not
# steadier in a way that matters: between fresh file systems the disk's own state
# dominates the spread (PLATFORM.md), and each slice costs fio a quarter second to start.
DEFAULT_RUNTIME_S = 2
DEFAULT_IMAGE_SIZE = "1G"
DEFAULT_ROUNDS = 6  # jobs of 5 s or more in slices: the disk's drift falls on every target
# Auto file size per fio job: at most this, and at most FILL_FRACTION of the smallest
# image split over the busiest workload's jobs, leaving room for fs metadata.
AUTO_FILE_SIZE_CAP = 256 * 1024**2
FILL_FRACTION = 0.5
# A workload's files may use at most this share of an image (checked before running).
MAX_FILL = 0.8
Fresh = Literal["run", "iteration", "campaign"]


class WorkloadEntry(BaseModel):
    """One [[workload]] table: a preset (optionally some of its jobs) or a job file."""

    model_config = ConfigDict(extra="forbid")
    preset: str | None = None
    only: list[str] | None = None
    name: str | None = None
    job_file: str | None = None
    job_text: str | None = None  # the job file's content, kept in a resolved campaign
    options: dict[str, Any] = {}
    # The jobs this entry runs, written by fslab into a resolved campaign (the history
    # reads a job's definition by them without the presets: history/identity.py).
    jobs: list[str] | None = None
    # The study its preset comes from (workloads/provenance.STUDIES), written by fslab into
    # a resolved campaign: the analysis puts the study's own interval and tests beside
    # fslab's by it (analysis/cells/study_intervals.py, analysis/pairs/study_methods.py).
    study: str | None = None


class ResolveTable(BaseModel):
    """[resolve]: looks = [5, 9], cells = [[["ext4", "randread", 9, 4, 1.6], ...]] (one
    list per round after a look: target, workload, last iteration, and where the round
    chose them its run length and weight)."""

    model_config = ConfigDict(extra="forbid")
    looks: list[int] = []
    cells: list[list[tuple[str, str, int] | tuple[str, str, int, int, float]]] = []


class CellEntry(BaseModel):
    """One cell of `cells`: the target as declared, the job, every factor's level."""

    model_config = ConfigDict(extra="forbid")
    target: str
    job: str
    levels: dict[str, str] = {}

    def key(self) -> CellKey:
        return CellKey(self.target, self.job, tuple(self.levels.items()))


class CampaignFile(BaseModel):
    """The whole campaign.toml."""

    model_config = ConfigDict(extra="forbid")
    name: str = "default"
    iterations: int = DEFAULT_ITERATIONS
    runtime: str | int = DEFAULT_RUNTIME_S
    seed: int | None = None
    out: str | None = None
    fresh: Fresh = "iteration"
    image_size: str | int = DEFAULT_IMAGE_SIZE
    file_size: str | int = "auto"
    hosts: list[str] = []  # fio servers (HOST or HOST:PORT) to drive with fio --client
    # Measure the device under the loop images for each fio job first (ceiling.py), so
    # that results above it are marked cache-bound.
    ceiling: bool = True
    primary: list[str] = []  # metrics verdicts answer, by preference (analysis/questions)
    pilot: int = 0  # adaptive runs: these first iterations chose how many (adaptive.py)
    rounds: int = DEFAULT_ROUNDS  # interleaved slices per fio job and iteration (rounds.py)
    # The watchdog: a run past this many seconds is ended and recorded as failed (0: each
    # workload's own bound, its runtime and ramp with a margin; children.py).
    run_timeout: str | int = 0
    # "published": the preset's study's own scale and protocol (as_published.py)
    scale: Literal["quick", "published"] = "quick"
    # The user's own labels (kernel = "6.12.3", commit = "abc123"): the history orders and
    # compares campaigns by them (history/).
    labels: dict[str, str | int | float | bool] = {}
    # Two targets within this of each other are "the same" (analysis/pairs/pair.py).
    margin: str | float = DEFAULT_MARGIN
    # Factors of the design: NAME = [levels] (plan/sweep.py); one level sets the option.
    sweep: dict[str, list[Any]] = {}
    # A campaign that resolves (--resolve, run/resolve.py): the iterations at each look and
    # the cells measured after each, [target, workload, last iteration]; fslab writes it.
    resolve: ResolveTable | None = None
    # What each swept factor varies (target or job): fslab writes it from the sweep, for
    # the analysis; a campaign file need not give it (it is recomputed).
    factors: dict[str, Literal["target", "job"]] = {}
    # Only these cells of the sweep, each {target, job, levels = {factor: level}} (a
    # design's configurations: `fslab tune` writes it); empty: every combination.
    cells: list[CellEntry] = []
    # The first iteration the plan holds (a tuner's race measures one round at a time).
    first_iteration: int = 1
    # `fslab tune`'s space and limits: NAME = [levels] (the first the reference), and
    # budget, max_runs, margin, objective, subject_to, allow_unsafe (tune/request.py).
    tune: dict[str, Any] = {}
    # Aging levels of the `age` factor changed or added ([age_levels.NAME]: an aging
    # config's keys: workloads/aging_levels.py), and whether each target × level is aged
    # once and copied for every run (age_reuse) instead of aged per file system.
    age_levels: dict[str, dict[str, Any]] = {}
    age_reuse: bool = False
    target: list[TargetEntry] = []
    workload: list[WorkloadEntry] = []

    @field_validator("iterations", "rounds")
    @classmethod
    def _positive(cls, value: int) -> int:
        if value < 1:
            raise ValueError("must be at least 1")
        return value


@dataclass
class Campaign:
    """A resolved campaign: every value explicit, ready to plan and to save."""

    name: str
    iterations: int
    runtime: int
    seed: int
    fresh: str
    image_size: int
    file_size: int
    targets: list[TargetSpec]
    workloads: list[WorkloadEntry]
    out: str | None = None
    base_dir: Path = field(default_factory=Path.cwd)
    hosts: list[Host] = field(default_factory=list)  # fio servers, parsed once
    ceiling: bool = True
    primary: list[str] = field(default_factory=list)
    pilot: int = 0
    rounds: int = 1  # built in code (the ceiling's, tests'): plain order unless asked
    run_timeout: int = 0  # seconds; 0: each workload's own bound
    scale: str = "quick"  # or "published": the study's own scale (as_published.py)
    labels: dict[str, str] = field(default_factory=dict)  # the user's own (history/)
    margin: float = DEFAULT_MARGIN  # the same within this (a fraction)
    # The sweep (plan/sweep.py): campaign-wide factors as text levels, and the lists each
    # target's own table gave ({target: {factor: levels}}); `targets` stay as declared.
    sweep: dict[str, list[str]] = field(default_factory=dict)
    target_sweeps: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    # --resolve (run/resolve.py): the iterations at each look so far, and after each look
    # but the last the cells measured further, (target, workload, up to which iteration).
    looks: list[int] = field(default_factory=list)
    look_cells: list[list[LookCell]] = field(default_factory=list)
    # {factor: 'target' or 'job'} of every swept factor (plan/sweep.py, at resolve time):
    # what each varies, in campaign.toml ([factors]) for the analysis to read.
    factor_scopes: dict[str, str] = field(default_factory=dict)
    # Only these cells (a design's configurations: tune/); empty: every combination.
    cells: list[CellKey] = field(default_factory=list)
    first_iteration: int = 1  # iterations first_iteration..iterations are planned
    tune: dict[str, Any] = field(default_factory=dict)  # [tune]: `fslab tune`'s space
    # What --as-published set and could not do here (printed; not saved: the values are)
    published: Any = None
    age_levels: dict[str, dict[str, Any]] = field(default_factory=dict)  # [age_levels]
    age_reuse: bool = False  # age once per target × level, copy the image for each run

    def to_dict(self) -> dict[str, object]:
        """The resolved campaign as TOML-ready data (what campaign.toml in results holds)."""
        data: dict[str, object] = {
            "name": self.name,
            "iterations": self.iterations,
            "runtime": self.runtime,
            "seed": self.seed,
            "fresh": self.fresh,
            "image_size": self.image_size,
            "file_size": self.file_size,
        }
        if self.out:
            data["out"] = self.out
        if self.hosts:
            data["hosts"] = [host.spec for host in self.hosts]
        if not self.ceiling:
            data["ceiling"] = False
        if self.primary:
            data["primary"] = list(self.primary)
        if self.pilot:
            data["pilot"] = self.pilot
        data["rounds"] = self.rounds
        if self.run_timeout:
            data["run_timeout"] = self.run_timeout
        data["scale"] = self.scale
        data["margin"] = self.margin
        if self.labels:
            data["labels"] = dict(self.labels)
        if self.sweep:
            data["sweep"] = {name: list(levels) for name, levels in self.sweep.items()}
        if self.factor_scopes:
            data["factors"] = dict(self.factor_scopes)
        if self.cells:
            data["cells"] = [cell.to_dict() for cell in self.cells]
        if self.first_iteration != 1:
            data["first_iteration"] = self.first_iteration
        if self.tune:
            data["tune"] = dict(self.tune)
        if self.age_levels:
            data["age_levels"] = {name: dict(values) for name, values in
                                  self.age_levels.items()}
        if self.age_reuse:
            data["age_reuse"] = True
        if self.looks:
            data["resolve"] = {"looks": list(self.looks),
                               "cells": [[list(cell) for cell in cells]
                                         for cells in self.look_cells]}
        data["target"] = [_target_dict(spec, self.target_sweeps.get(spec.name, {}))
                          for spec in self.targets]
        data["workload"] = [w.model_dump(exclude_none=True, exclude_defaults=True)
                            for w in self.workloads]
        return data


@dataclass
class Overrides:
    """The `fslab run` flags that override or stand in for a campaign file."""

    fs: list[str] | None = None
    preset: str | None = None
    workloads: list[str] | None = None
    iterations: int | None = None
    runtime: str | None = None
    image_size: str | None = None
    file_size: str | None = None
    out: str | None = None
    seed: int | None = None
    fresh: str | None = None
    hosts: list[str] | None = None
    primary: list[str] | None = None
    rounds: int | None = None
    ceiling: bool | None = None  # False: --no-ceiling
    as_published: bool | None = None  # --as-published: the study's own scale (None: not given)
    labels: dict[str, str] | None = None  # --label KEY=VALUE: added to the file's labels
    margin: str | None = None  # --margin 10%
    sweeps: dict[str, list[str]] | None = None  # --sweep NAME=V1,V2 (repeatable)
    job_files: list[str] | None = None  # --job-file J (repeatable): what job_file = does


def _target_dict(spec: TargetSpec, lists: dict[str, list[str]]) -> dict[str, object]:
    data: dict[str, object] = {"name": spec.name, "fs": spec.fs}
    if spec.fs not in IMAGE_LESS and not spec.device:
        data["image_size"] = spec.size
    given = {"mkfs_options": list(spec.mkfs_options), "mount_options": spec.mount_options,
             "path": spec.path, "device": spec.device}
    data.update({key: value for key, value in given.items() if value})
    options = dict(spec.options)
    for key in ("direct_io", "fstrim", "precondition", "throttle", "image", "fresh_copy_of",
                "age", "scale", *POOL_FIELDS):
        if key in options:
            value = options.pop(key)
            data[key] = value[len("target:"):] if key == "fresh_copy_of" and str(
                value).startswith("target:") else value
    for name, levels in lists.items():  # its own sweep, as its table gave it
        if name == "mkfs_options":
            data[name] = [level.split() for level in levels]
        elif name.startswith("zfs."):
            options[name[len("zfs."):]] = list(levels)
        else:
            data[name] = list(levels)
    if options:
        data["options"] = options
    return data
