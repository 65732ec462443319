"""`bonnie`: bonnie++ sized correctly, its CSV parsed into metrics.

bonnie++'s results mean something only when its file is at least twice the memory that
can cache it (and bonnie++ prints its usage and exits, with 0 on some versions, when -s
is below twice -r). fslab does not pretend with -r: the run's processes are confined to a
memory cgroup of half the file size (`memory_limit`; the page cache they create is
charged to it), and -r names that limit, so -s = 2 × the memory bonnie++ can really use.
Where memory cannot be limited, the file must be twice the machine's RAM, and a target
too small for that is refused in one line. Output without a CSV line is a failed run
with bonnie's own first line as the reason.
"""

from __future__ import annotations

import json
import resource
import time
from dataclasses import dataclass
from pathlib import Path

from fslab.core.errors import UserError
from fslab.core.failures import Failure
from fslab.host import system
from fslab.host.children import run_child
from fslab.host.memlimit import memory_limit_support
from fslab.parsers.raw_names import BONNIE_CPU, BONNIE_OUTPUT
from fslab.workloads.base import Capabilities, RunOutput, Where

OUTPUT, CPU = BONNIE_OUTPUT, BONNIE_CPU
MiB = 1024**2
MIN_LIMIT = 32 * MiB  # below this bonnie++ itself risks the cgroup's OOM killer
BONNIE_DEADLINE_S = 3600  # a whole bonnie++ pass on a slow device takes minutes, not hours


@dataclass
class BonnieWorkload(Capabilities):
    """One bonnie++ run: -s file size, -r = half of it, -n file count (in 1024s)."""

    name: str = "bonnie"
    file_size: int = 256 * MiB
    files_k: int = 4  # -n: thousands (1024s) of files for the create/read/delete tests
    family: str = "bonnie"

    def check(self) -> None:
        system.require_tool("bonnie++")
        if self.file_size < 2 * MIN_LIMIT:
            raise UserError(f"workload {self.name}: bonnie++ needs a file size of at least "
                            f"{2 * MIN_LIMIT // MiB} MiB (twice the {MIN_LIMIT // MiB} MiB "
                            "of memory it is confined to)")
        reason = memory_limit_support()
        if reason:
            need = 2 * system.memory_bytes()
            raise UserError(f"workload {self.name}: bonnie++ needs a file twice the memory "
                            f"it can use; with {reason}, that is 2 × RAM = {need // MiB} MiB: "
                            f"set file_size and image_size to at least that")

    @property
    def memory_limit(self) -> int:
        """Bytes of memory the run is confined to: half the file, so -s = 2 × -r."""
        return self.file_size // 2 // MiB * MiB

    @property
    def ram_mib(self) -> int:
        return self.memory_limit // MiB

    def required_bytes(self) -> int:
        return self.file_size + self.files_k * 1024 * 4096

    def command(self, directory: Path) -> list[str]:
        return ["bonnie++", "-d", str(directory), "-s", f"{self.file_size // MiB}M",
                "-r", str(self.ram_mib), "-n", str(self.files_k), "-m", "fslab", "-q",
                "-u", "root"]

    def render(self, where: Where) -> dict[str, str]:
        return {"command": " ".join(self.command(where.directory or Path("<dir>")))}

    def run(self, where: Where, run_dir: Path) -> RunOutput:
        if where.directory is None:
            return RunOutput(status="unsupported", reason="bonnie++ needs a file system")
        cmd = self.command(where.directory)
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        cgroup = where.memory_cgroup
        deadline, bound = ((where.run_timeout, f"run_timeout = {where.run_timeout} in the "
                            "campaign") if where.run_timeout else
                           (BONNIE_DEADLINE_S, "fslab's bound for bonnie++; a campaign's "
                            "run_timeout sets another"))
        proc = run_child(cmd, deadline, cgroup, bound)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        (run_dir / CPU).write_text(json.dumps({
            "cpu_usr": 100.0 * (after.ru_utime - before.ru_utime) / wall,
            "cpu_sys": 100.0 * (after.ru_stime - before.ru_stime) / wall}))
        (run_dir / OUTPUT).write_text(proc.stdout)
        (run_dir / "stderr.txt").write_text(proc.stderr)
        if proc.watchdog:
            return RunOutput(status="failed", metadata={"command": cmd}, reason=proc.watchdog,
                             failure=Failure.TIMEOUT)
        # Whether it printed a result is the parse stage's to say (parsers/tool_kinds.py).
        return RunOutput(metadata={
            "command": cmd, "memory_limit_bytes": self.memory_limit, "memory_cgroup": cgroup})


