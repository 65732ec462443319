"""The contract every workload implements: render and run (its raw output is parsed by
the parse stage, parsers/registry.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol


@dataclass(frozen=True)
class Where:
    """Where a workload runs: a directory on the target, or a raw block device."""

    directory: Path | None
    device: str = ""
    layout_first: bool = False  # the fs needs files written sequentially before use
    cgroup: str = ""  # processes join this blkio cgroup (slow-device emulation)
    memory_cgroup: str = ""  # ... and this memory cgroup, for a workload with memory_limit
    quirk: str = ""  # the target's known limitation, to explain a failure it causes
    hosts: tuple[Any, ...] = ()  # fio servers to drive (distributed.Host); () = this machine
    root: Path | None = None  # the target's path as every host knows it (hosts only)
    run_timeout: int = 0  # the campaign's watchdog, seconds (0: the workload's own bound)
    keep_files: bool = False  # files laid out by an earlier run of the same job may serve


@dataclass
class RunOutput:
    """What one execution of a workload produced."""

    status: str = "ok"  # ok | failed | unsupported
    reason: str = ""  # for people; code reads `failure`
    metadata: dict[str, object] = field(default_factory=dict)
    failure: str = ""  # core/failures.Failure when it failed ('' : implied by the status)
    tool_said: str = ""  # a refusing tool's own words (core/failures.py)


class Workload(Protocol):
    """One workload of a campaign (a fio job, a user job file, ...)."""

    name: str
    family: str

    @property
    def primary_metric(self) -> str:
        """The metric its verdict is about ("iops", "bw_bytes", "ops_per_s"; "" = infer
        from the data): recorded in each run.json, read by analysis/pairs/questions.py."""

    @property
    def runs_on_load_nodes(self) -> bool:
        """Whether it can run on a campaign's load nodes (`hosts`: fio servers); the runner
        records the others there as unsupported."""

    @property
    def memory_limit(self) -> int:
        """Bytes (> 0) of a memory cgroup the runner makes for it (memlimit.py); 0: none."""

    @property
    def measures_host_cpu(self) -> bool:
        """Whether the runner adds system-wide CPU rows to its results."""

    @property
    def drops_caches(self) -> bool:
        """Whether the runner syncs and drops the page cache before it runs."""

    @property
    def watched(self) -> bool:
        """Whether the witness watches the machine while it runs (host/witness.py)."""

    @property
    def reads_tree(self) -> bool:
        """Whether it reads or rewrites the files already on the target (an aged tree):
        it runs on aged file systems and their fresh twins (workloads/aging_levels.py)."""

    def check(self) -> None:
        """Raise UserError with one line when the workload cannot run here."""

    def required_bytes(self) -> int:
        """Space the workload's files need on the target (0 if unknown)."""

    def render(self, where: Where) -> dict[str, str]:
        """Return the resolved input files (name -> text), as they would run at `where`."""

    def run(self, where: Where, run_dir: Path) -> RunOutput:
        """Run at `where`, keep raw output in `run_dir`, and return its status."""


class Capabilities:
    """The capabilities a workload declares, with the defaults most have (cf. fio's engine
    flags): a tool run on this machine, after the runner synced and dropped the caches,
    its system-wide CPU recorded, no memory cgroup, its primary metric inferred from the
    data. A workload class says only what differs."""

    runs_on_load_nodes: ClassVar[bool] = False  # fio servers (`hosts`) run only fio
    measures_host_cpu: ClassVar[bool] = True  # the runner adds system-wide CPU rows
    drops_caches: ClassVar[bool] = True  # the runner syncs and drops caches before it
    watched: ClassVar[bool] = True  # the witness watches the machine while it runs
    reads_tree: ClassVar[bool] = False  # reads or rewrites the target's existing files
    PRIMARY: ClassVar[str] = ""  # what its verdict is about ("": inferred from the data)

    @property
    def primary_metric(self) -> str:
        return self.PRIMARY

    @property
    def memory_limit(self) -> int:
        """Bytes of a memory cgroup to run in (0: none)."""
        return 0
