"""What fslab watches while a run (or one slice of it) measures: the host's CPU, the
witness of other activity, and the counters of the devices under the target.

One context for the runner and the rounds, so that a run measured whole and a run measured
in slices record the same things the same way.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from fslab.core.run_parts import TargetDescription, Witness
from fslab.host import diskstats
from fslab.host.diskstats import DiskStats
from fslab.host.witness import Watcher
from fslab.workloads.base import RunOutput
from fslab.workloads.cpu_use import HostCpu, host_cpu, keep_host_cpu


@dataclass
class Observed:
    """Filled in when the observed block ends."""

    cpu: HostCpu
    witness: Witness
    disks: DiskStats

    def record(self, output: RunOutput, run_dir: Path, host: bool) -> None:
        """Keep what was observed in a whole run's output (and the host's CPU beside its
        raw output when `host`: a local run of a workload that asks for it)."""
        if self.disks.devices:
            output.metadata["disk_stats"] = self.disks.to_json()
        output.metadata["witness"] = self.witness.to_json()
        if output.status == "ok" and host:
            output.metadata["host_cpu"] = keep_host_cpu(self.cpu, run_dir)


@contextmanager
def observed(watcher: Watcher, description: TargetDescription) -> Iterator[Observed]:
    """Observe the block; `description` is the target's (it names the member devices)."""
    with (host_cpu() as cpu, watcher.watching() as witness,
          diskstats.sampled(diskstats.members(description)) as disks):
        yield Observed(cpu, witness, disks)
