"""`fslab doctor`: is this machine fit to measure on, and what would each finding do to
the results — as pyperf's `system show` does. Reads only; `--tune` changes what it can
change reversibly (the CPU frequency governor) and records the old value in the lab.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from fslab.core.plugins import declared
from fslab.core.units import format_bytes
from fslab.host import system
from fslab.host.witness import OTHERS_CPU_PCT, Watcher, backing_disk

OK, WARN, BAD = "ok", "warn", "bad"
SAMPLE_S = 1.0  # how long the load check watches other processes
LAB_FREE_MIN = 4 * 1024**3  # the default campaign makes three 1 GiB images
TOOLS = ("fio", "mkfs.ext4", "mkfs.xfs", "mkfs.btrfs", "losetup")
TUNE_FILE = "tune.json"


@dataclass(frozen=True)
class Finding:
    """One check: its state, what was seen, what it means and how to fix it."""

    name: str
    state: str  # ok | warn | bad
    seen: str
    meaning: str = ""
    fix: str = ""


Check = Callable[[Path], Finding]


def load(lab: Path) -> Finding:
    """Other processes' CPU over a short sample (fio jobs are CPU-bound on small VMs)."""
    watcher = Watcher(lab)
    with watcher.watching() as found:
        time.sleep(SAMPLE_S)
    load1 = os.getloadavg()[0]
    seen = (f"other processes {found.others_cpu_pct:.0f} % of a CPU"
            + (f" ({', '.join(b.text() for b in found.busiest)})" if found.busiest else "")
            + f"; load average {load1:.2f} on {os.cpu_count()} CPUs")
    if found.others_cpu_pct >= OTHERS_CPU_PCT:
        return Finding("load", BAD, seen, "CPU-bound jobs lose what others take: results "
                       "measure the load, not the file system", "stop those processes, or "
                       "run with --rerun-disturbed")
    if found.steal_pct >= 10:
        return Finding("load", WARN, seen + f"; steal {found.steal_pct:.0f} %",
                       "the hypervisor gives this VM's CPU to others", "")
    return Finding("load", OK, seen)


def governor(lab: Path) -> Finding:
    paths = sorted(Path("/sys/devices/system/cpu").glob("cpu*/cpufreq/scaling_governor"))
    if not paths:
        return Finding("CPU frequency", OK, "no cpufreq (a VM: the host decides)")
    names = sorted({p.read_text().strip() for p in paths})
    if names == ["performance"]:
        return Finding("CPU frequency", OK, "governor performance")
    return Finding("CPU frequency", WARN, f"governor {', '.join(names)}",
                   "the clock follows the load: short slices start slow",
                   "fslab doctor --tune (reversible: fslab doctor --untune)")


def swap(lab: Path) -> Finding:
    info = _meminfo()
    used = info.get("SwapTotal", 0) - info.get("SwapFree", 0)
    available = info.get("MemAvailable", 0)
    seen = f"swap used {used // 1024**2} MiB; memory available {available / 1024**3:.1f} GiB"
    if used > 64 * 1024:
        return Finding("memory", WARN, seen, "pages move to swap during runs: latency tails "
                       "grow", "free memory or swapoff -a")
    return Finding("memory", OK, seen)


def disk(lab: Path) -> Finding:
    name = backing_disk(lab)
    if not name:
        return Finding("disk", WARN, f"no block device found under {lab}")
    scheduler = _read(Path(f"/sys/block/{name}/queue/scheduler"))
    rotational = _read(Path(f"/sys/block/{name}/queue/rotational")) == "1"
    seen = (f"{name} ({'rotational' if rotational else 'non-rotational'}), scheduler "
            f"{scheduler or 'unknown'}")
    return Finding("disk", OK, seen, "loop images live on it: every result is bounded by it")


def free_space(lab: Path) -> Finding:
    where = lab if lab.exists() else lab.parent
    while not where.exists() and where != where.parent:
        where = where.parent
    free = shutil.disk_usage(where).free
    seen = f"{free / 1024**3:.1f} GiB free at {where}"
    if free < LAB_FREE_MIN:
        return Finding("lab space", BAD, seen, "the default campaign's images will not fit",
                       "free space, or --lab DIR on a larger disk")
    return Finding("lab space", OK, seen)


def lab_space(total: int, least: int) -> Check:
    """The lab's free space against a campaign's need (run/lab_space.py): `total` bytes
    with every target made at once, `least` for its smallest run."""
    def check(lab: Path) -> Finding:
        where = lab if lab.exists() else lab.parent
        while not where.exists() and where != where.parent:
            where = where.parent
        free = shutil.disk_usage(where).free
        seen = (f"{format_bytes(free)} free at {where}; the campaign's images take about "
                f"{format_bytes(total)} with every target made at once, "
                f"{format_bytes(least)} for its smallest run")
        if free < least:
            return Finding("lab space", BAD, seen, "no target of the campaign fits: it "
                           "stops before making anything", "free space, or --lab DIR on a "
                           "larger disk")
        if free < total:
            return Finding("lab space", WARN, seen, "a target that does not fit when it is "
                           "made fails for want of space; the others run", "free space, or "
                           "--lab DIR on a larger disk")
        return Finding("lab space", OK, seen)

    return check


def loop_direct_io(lab: Path) -> Finding:
    """A small image attached with direct I/O: what every loop target uses."""
    if os.geteuid() != 0:
        return Finding("loop direct I/O", WARN, "not checked: needs root")
    lab.mkdir(parents=True, exist_ok=True)
    image = lab / f".doctor-{os.getpid()}.img"
    try:
        with image.open("wb") as handle:
            handle.truncate(4 * 1024**2)
        out = subprocess.run(["losetup", "--direct-io=on", "--show", "-f", str(image)],
                             capture_output=True, text=True, timeout=10)
        device = out.stdout.strip()
        if out.returncode != 0 or not device:
            return Finding("loop direct I/O", BAD, out.stderr.strip() or "losetup failed",
                           "loop images would sit on the host's page cache", "")
        dio = _read(Path(f"/sys/block/{Path(device).name}/loop/dio"))
        subprocess.run(["losetup", "-d", device], capture_output=True, timeout=10)
        if dio != "1":
            return Finding("loop direct I/O", WARN, "accepted but not in effect",
                           "results may come from the host's page cache", "")
        return Finding("loop direct I/O", OK, "works")
    except (OSError, subprocess.SubprocessError) as exc:
        return Finding("loop direct I/O", BAD, str(exc))
    finally:
        image.unlink(missing_ok=True)


def versions(lab: Path) -> Finding:
    tools = [*TOOLS, *(tool for packages in declared("PACKAGES") for tool in packages)]
    missing = [tool for tool in tools if system.which(tool) is None]
    fio = system.tool_version("fio") if system.which("fio") else "missing"
    seen = f"kernel {platform.release()}, fio {fio}"
    if missing:
        return Finding("tools", BAD, seen + f"; missing {', '.join(missing)}", "",
                       "make run installs them")
    return Finding("tools", OK, seen)


CHECKS: list[Check] = [load, governor, swap, disk, free_space, loop_direct_io, versions]
QUICK: list[Check] = [load, swap, free_space]  # the short form before every run


def examine(lab: Path, checks: list[Check] | None = None) -> list[Finding]:
    """Run the checks (all of them by default) against this machine and lab."""
    return [check(lab) for check in (checks or CHECKS)]


def examine_beside(lab: Path, checks: list[Check], say: Callable[[str], None]
                   ) -> threading.Thread:
    """Run the checks in a thread and `say` their quick line when done.

    The load check watches other processes for a second; fslab's own set-up (loading the
    campaign, making the first file systems) runs meanwhile instead of waiting for it —
    the witness leaves fslab and its children out, so the reading is the same."""
    thread = threading.Thread(target=lambda: say(quick_line(examine(lab, checks))),
                              name="fslab-quick-check", daemon=True)
    thread.start()
    return thread


def quick_line(findings: list[Finding]) -> str:
    """One line for the start of a run: quiet, or what is wrong."""
    bad = [f for f in findings if f.state != OK]
    if not bad:
        return "machine: " + "; ".join(f.seen for f in findings)
    return "machine: " + "; ".join(f"{f.name}: {f.seen}" + (f" — {f.meaning}" if f.meaning
                                                           else "") for f in bad)


def tune(lab: Path) -> list[str]:
    """Set every CPU's governor to performance, recording the old ones (reversible)."""
    paths = sorted(Path("/sys/devices/system/cpu").glob("cpu*/cpufreq/scaling_governor"))
    if not paths:
        return ["nothing to tune: no cpufreq governor on this machine"]
    before = {str(p): p.read_text().strip() for p in paths}
    lab.mkdir(parents=True, exist_ok=True)
    (lab / TUNE_FILE).write_text(json.dumps({"scaling_governor": before}, indent=1))
    for path in paths:
        path.write_text("performance")
    return [f"governor performance on {len(paths)} CPUs (was: "
            f"{', '.join(sorted(set(before.values())))}); undo: fslab doctor --untune"]


def untune(lab: Path) -> list[str]:
    """Put back what `tune` changed."""
    record = lab / TUNE_FILE
    if not record.exists():
        return ["nothing to undo"]
    saved = json.loads(record.read_text()).get("scaling_governor", {})
    for path, value in saved.items():
        Path(path).write_text(value)
    record.unlink()
    return [f"governor restored on {len(saved)} CPUs"]


def _meminfo() -> dict[str, int]:
    out = {}
    for line in _read(Path("/proc/meminfo")).splitlines():
        key, _, rest = line.partition(":")
        parts = rest.split()
        if parts and parts[0].isdigit():
            out[key] = int(parts[0]) * 1024
    return out


def _read(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError:
        return ""
