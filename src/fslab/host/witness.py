"""The witness: what else the machine did while a run measured.

Four sync fio jobs on two vCPUs are CPU-bound, so another process's CPU time shows up as
a file-system "result"; a busy host disk, stolen CPU time or memory pressure do the same.
Around every run fslab reads, from /proc (a few milliseconds, nothing started):
- the CPU time of every other process (its utime + stime from /proc/PID/stat) — other
  than fslab and its children, the daemons serving fslab's mounts (their command line
  names the lab) and kernel threads (loop and file-system workers do fslab's own I/O);
- steal time (/proc/stat): CPU the hypervisor gave to other guests;
- pressure stall information (/proc/pressure/{cpu,io,memory}: the share of time some
  task waited), as a record — fslab's own jobs stall on CPU and I/O by design, so only
  memory pressure is a sign of disturbance;
- I/O on the disk under the lab (/proc/diskstats) less fslab's own: what its loop devices
  did, or what fslab and its children (fio on a `dir:` target writes to that disk
  directly) sent to storage by /proc/PID/io — whichever layer saw more, as a run on a
  loop image is seen at both. A reaped child's I/O counts in its parent's /proc/PID/io, so
  a fio that ended within the run is still fslab's.

A run is `disturbed` when one of these crosses its threshold (named constants below,
with the reason); pyperf, in the same spirit, warns that "the benchmark result may be
unstable" and says why.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

from fslab.core.run_parts import Busy, Witness

# Other processes using this much of one core, on average over the run, disturb it: the
# default jobs saturate both vCPUs, and a quarter core taken is a ~10 % loss for them.
OTHERS_CPU_PCT = 25.0
# Stolen time above this share of one core: the hypervisor ran someone else on our CPU
# (this VM kind shows 5–15 % steal when idle; a quarter core, as for other processes).
STEAL_PCT = 25.0
# Some task stalled on memory for this share of the run: reclaim ran beside the workload.
PSI_MEMORY_PCT = 5.0
# Bytes per second on the disk under the lab that fslab's loop devices did not do ...
OTHER_IO_BYTES_S = 20 * 1024**2
# ... and at least this much in all: a journal commit or fslab's own result files in a
# run of a few milliseconds is a high rate of nothing (seen: 23 MiB/s in 10 ms runs of
# the simulator, right after another test's writes).
OTHER_IO_MIN_BYTES = 16 * 1024**2
SECTOR = 512
TOP = 3  # the busiest other processes named in a witness


@dataclass
class Snapshot:
    """One reading of the machine's counters."""

    at: float
    processes: dict[int, tuple[float, int, str]]  # pid -> (start ticks, cpu ticks, name)
    steal_ticks: int
    pressure: dict[str, float]  # resource -> "some" stall total, µs
    disk_bytes: int  # the backing disk's bytes read + written
    own_bytes: int  # fslab's loop devices' bytes read + written
    process_bytes: int = 0  # bytes fslab and its children sent to or read from storage


class Watcher:
    """Reads the counters for one lab: which processes and devices are fslab's own."""

    def __init__(self, lab_root: Path) -> None:
        self.lab_root = str(Path(lab_root).resolve())
        self.ticks = os.sysconf("SC_CLK_TCK")
        self.disk = backing_disk(Path(lab_root))
        self._lab_daemons: dict[tuple[int, float], bool] = {}  # (pid, start) -> serves lab

    def snapshot(self) -> Snapshot:
        others, ours = self._processes()
        return Snapshot(time.monotonic(), others, _steal_ticks(), _pressure(),
                        _disk_bytes(self.disk) if self.disk else 0, self._own_bytes(),
                        sum(_storage_bytes(pid) for pid in ours))

    def compare(self, before: Snapshot, after: Snapshot) -> Witness:
        """The witness of the span between two snapshots."""
        wall = max(after.at - before.at, 1e-6)
        used: list[tuple[float, str]] = []
        for pid, (start, cpu, name) in after.processes.items():
            earlier = before.processes.get(pid)
            base = earlier[1] if earlier and earlier[0] == start else 0
            if cpu > base:
                used.append(((cpu - base) / self.ticks, name))
        others = 100.0 * sum(seconds for seconds, _ in used) / wall
        busiest = [Busy(name, 100.0 * seconds / wall)
                   for seconds, name in sorted(used, reverse=True)[:TOP]
                   if 100.0 * seconds / wall >= 1.0]
        steal = 100.0 * (after.steal_ticks - before.steal_ticks) / self.ticks / wall
        psi = {k: (after.pressure[k] - before.pressure[k]) / 1e4 / wall
               for k in after.pressure if k in before.pressure}  # µs per s → %
        other_io = float("nan")
        if self.disk:
            own = max(after.own_bytes - before.own_bytes,
                      after.process_bytes - before.process_bytes)
            other_io = max(0.0, ((after.disk_bytes - before.disk_bytes) - own) / wall)
        found = Witness(seconds=wall, others_cpu_pct=others, busiest=busiest,
                        steal_pct=max(0.0, steal), psi_cpu_pct=psi.get("cpu", float("nan")),
                        psi_io_pct=psi.get("io", float("nan")),
                        psi_memory_pct=psi.get("memory", float("nan")),
                        other_io_bytes_s=other_io, disk=self.disk)
        judge(found)
        return found

    @contextmanager
    def watching(self) -> Iterator[Witness]:
        """Witness the block: the yielded Witness is filled in when it ends."""
        found = Witness()
        before = self.snapshot()
        try:
            yield found
        finally:
            result = self.compare(before, self.snapshot())
            for key, value in asdict(result).items():
                setattr(found, key, value)

    def _processes(self) -> tuple[dict[int, tuple[float, int, str]], set[int]]:
        """(every other user-space process: pid -> (start ticks, utime + stime, name);
        fslab's own: this process and its descendants)."""
        table: dict[int, tuple[int, float, int, str]] = {}
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            parsed = _stat(int(entry.name))
            if parsed is not None:
                table[int(entry.name)] = parsed
        ours = _descendants(os.getpid(), table)
        out = {}
        for pid, (ppid, start, cpu, name) in table.items():
            if pid in ours or ppid == 2 or pid == 2 or self._serves_lab(pid, start):
                continue
            out[pid] = (start, cpu, name)
        return out, ours | {os.getpid()}

    def _serves_lab(self, pid: int, start: float) -> bool:
        """A daemon started for the lab (FUSE file system, zfs-fuse): its command line
        names the lab directory. Read once per process (a pid and its start time)."""
        key = (pid, start)
        if key not in self._lab_daemons:
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as handle:
                    line = handle.read().decode(errors="replace")
            except OSError:
                return False
            self._lab_daemons[key] = self.lab_root in line
        return self._lab_daemons[key]

    def _own_bytes(self) -> int:
        """Bytes read and written by loop devices whose backing file is in the lab."""
        total = 0
        for loop in Path("/sys/block").glob("loop*"):
            try:
                backing = (loop / "loop" / "backing_file").read_text().strip()
            except OSError:
                continue
            if backing.startswith(self.lab_root):
                total += _disk_bytes(loop.name)
        return total


def judge(found: Witness) -> None:
    """Set `disturbed` and the reasons from the thresholds."""
    reasons = []
    if found.others_cpu_pct >= OTHERS_CPU_PCT:
        who = f" ({', '.join(b.text() for b in found.busiest)})" if found.busiest else ""
        reasons.append(f"other processes used {found.others_cpu_pct:.0f} % of a CPU{who}")
    if found.steal_pct >= STEAL_PCT:
        reasons.append(f"the hypervisor stole {found.steal_pct:.0f} % of a CPU")
    if found.psi_memory_pct == found.psi_memory_pct and found.psi_memory_pct >= PSI_MEMORY_PCT:
        reasons.append(f"tasks stalled on memory {found.psi_memory_pct:.0f} % of the time")
    if found.other_io_bytes_s == found.other_io_bytes_s and (
            found.other_io_bytes_s >= OTHER_IO_BYTES_S) and (
            found.other_io_bytes_s * found.seconds >= OTHER_IO_MIN_BYTES):
        reasons.append(f"other I/O on {found.disk}: "
                       f"{found.other_io_bytes_s / 1024**2:.0f} MiB/s")
    found.reasons = reasons
    found.disturbed = bool(reasons)


def _stat(pid: int) -> tuple[int, float, int, str] | None:
    """(ppid, start ticks, utime + stime ticks, name) from /proc/PID/stat."""
    try:  # raw reads: this runs for every process, twice per run and per slice
        fd = os.open(f"/proc/{pid}/stat", os.O_RDONLY)
        try:
            text = os.read(fd, 4096).decode(errors="replace")
        finally:
            os.close(fd)
    except OSError:
        return None
    close = text.rfind(")")
    name = text[text.find("(") + 1:close]
    fields = text[close + 2:].split()
    try:  # fields from state (3rd in man proc): ppid 4th, utime 14th, stime 15th, start 22nd
        return int(fields[1]), float(fields[19]), int(fields[11]) + int(fields[12]), name
    except (IndexError, ValueError):
        return None


def _descendants(root: int, table: dict[int, tuple[int, float, int, str]]) -> set[int]:
    children: dict[int, list[int]] = {}
    for pid, (ppid, *_rest) in table.items():
        children.setdefault(ppid, []).append(pid)
    found, stack = {root}, [root]
    while stack:
        for child in children.get(stack.pop(), []):
            if child not in found:
                found.add(child)
                stack.append(child)
    return found


def _steal_ticks() -> int:
    try:
        with open("/proc/stat") as handle:
            fields = handle.readline().split()
        return int(fields[8]) if len(fields) > 8 else 0
    except (OSError, ValueError):
        return 0


def _pressure() -> dict[str, float]:
    """resource -> total µs some task stalled (the "some" line's total=)."""
    out = {}
    for resource in ("cpu", "io", "memory"):
        try:
            line = Path(f"/proc/pressure/{resource}").read_text().splitlines()[0]
        except (OSError, IndexError):
            continue
        for part in line.split():
            if part.startswith("total="):
                out[resource] = float(part[len("total="):])
    return out


def _storage_bytes(pid: int) -> int:
    """Bytes a process (with the children it reaped) read from and sent to storage,
    /proc/PID/io's read_bytes + write_bytes − cancelled_write_bytes; 0 when gone."""
    try:
        with open(f"/proc/{pid}/io") as handle:
            fields = dict(line.split(":", 1) for line in handle)
    except (OSError, ValueError):
        return 0
    try:
        return (int(fields["read_bytes"]) + int(fields["write_bytes"])
                - int(fields.get("cancelled_write_bytes", 0)))
    except (KeyError, ValueError):
        return 0


def _disk_bytes(name: str) -> int:
    """Bytes read + written by one block device, from /proc/diskstats."""
    try:
        with open("/proc/diskstats") as handle:
            for line in handle:
                fields = line.split()
                if len(fields) > 9 and fields[2] == name:
                    return (int(fields[5]) + int(fields[9])) * SECTOR
    except (OSError, ValueError):
        pass
    return 0


def backing_disk(path: Path) -> str:
    """The whole disk (not the partition) under a directory, e.g. "vda"; "" if none."""
    try:
        device = os.stat(path if path.exists() else path.parent).st_dev
    except OSError:
        return ""
    sys_path = Path(f"/sys/dev/block/{os.major(device)}:{os.minor(device)}")
    try:
        resolved = sys_path.resolve()
    except OSError:
        return ""
    if not resolved.exists():
        return ""
    return resolved.parent.name if (resolved / "partition").exists() else resolved.name
