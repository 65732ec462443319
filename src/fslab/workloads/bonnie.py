"""`bonnie`: bonnie++ sized correctly, its CSV parsed into metrics.

bonnie++'s results mean something only when its file is at least twice the memory that
can cache it (and bonnie++ prints its usage and exits, with 0 on some versions, when -s
is below twice -r). fslab does not pretend with -r: the run's processes are confined to a
memory cgroup of half the file size (`memory_limit`; the page cache they create is
charged to it), and -r names that limit, so -s = 2 × the memory bonnie++ can really use.
Where memory cannot be limited, the file must be twice the machine's RAM, and a target
too small for that is refused in one line. Output without a CSV line is a failed run
with bonnie's own first line as the reason.

A plug-in of fslab's own (core/plugins.py): the module declares its suite (SUITE), the
kind that parses the files it writes (KIND, with their names) and the Debian package of
its tool (PACKAGES); bonnie++'s CSV itself is read by parsers/bonnie.py, which imported
bonnie++ output shares.
"""

from __future__ import annotations

import json
import resource
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fslab.core.errors import UserError
from fslab.core.failures import Failure
from fslab.core.metrics import cpu_measurements
from fslab.core.units import parse_size
from fslab.host import system
from fslab.host.children import run_child
from fslab.host.memlimit import memory_limit_support
from fslab.parsers.bonnie import BonnieParseError, parse_bonnie
from fslab.parsers.raw_files import (
    Parsed,
    RawFiles,
    RawKind,
    RawOutputError,
    named,
    read_json,
    read_text,
)
from fslab.workloads.base import Capabilities, RunOutput, Where, Workload
from fslab.workloads.provenance import Param, campaign, fslab
from fslab.workloads.suites import Suite, only_keys, picked

OUTPUT, CPU = "bonnie.csv", "cpu.json"  # bonnie++'s stdout; its rusage as % of one core
PACKAGES = {"bonnie++": "bonnie++"}
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
        # Whether it printed a result is the parse stage's to say (KIND, below).
        return RunOutput(metadata={
            "command": cmd, "memory_limit_bytes": self.memory_limit, "memory_cgroup": cgroup})




def _parse(files: RawFiles) -> Parsed:
    """bonnie++'s CSV line; without one (it prints its usage and exits 0 when -r is not
    below -s), the run fails with bonnie++'s own first words."""
    text = read_text(files, OUTPUT)
    try:
        measurements = parse_bonnie(text)
    except BonnieParseError:
        said = text + (read_text(files, "stderr.txt") if "stderr.txt" in files.names() else "")
        first = next((line.strip() for line in said.splitlines() if line.strip()), "no output")
        raise RawOutputError(f"bonnie++ printed no result: {first}") from None
    if CPU in files.names():
        record = read_json(files, CPU)
        measurements += cpu_measurements(record["cpu_usr"], record["cpu_sys"])
    return Parsed("bonnie", measurements)


KEYS = frozenset({"file_size", "files_k"})


def _build(only: list[str], runtime: int, file_size: int,
           options: dict[str, Any], seed: int, published: bool) -> list[Workload]:
    only_keys(options, KEYS, "bonnie")
    size = _size(options["file_size"]) if "file_size" in options else file_size
    return picked(only, [BonnieWorkload("bonnie", size, int(options.get("files_k", 4)))])


def _size(text: object) -> int:
    """bonnie++'s -s: a size, or "2xRAM" (the mirror study's rule: twice the RAM, so the
    page cache cannot hold the file)."""
    if str(text).replace(" ", "").lower() in ("2xram", "2*ram"):
        return 2 * system.memory_bytes()
    return parse_size(str(text))


SUITE = Suite(
    "bonnie",
    "bonnie++ with -s at the campaign's file size and -r half of it (bonnie++ "
    "demands -s >= 2 × -r); sequential, seek and file-creation tests.",
    "raid1-fs",
    {"bonnie": {
        "-s": Param("campaign", campaign("the quick scale; the study: twice the RAM "
                                         "(--as-published)")),
        "-r": Param("-s / 2", fslab("bonnie++ demands -s >= 2 x -r")),
        "-n": Param(4, campaign("the quick scale; the study: 16")),
        "-q": Param(1, fslab("quiet: the CSV line alone on stdout"))}},
    {"bonnie": 1}, _build, options="file_size (or \"2xRAM\"), files_k", keys=KEYS)
KIND = RawKind("bonnie", "", named(OUTPUT), _parse)
