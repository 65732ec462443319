"""Capture what is needed to reproduce a campaign: host, kernel, CPU, memory, tools."""

from __future__ import annotations

import os
import platform
import socket
import sys
import time
from collections.abc import Iterable
from pathlib import Path

from fslab.core.environment_record import Environment, SittingFacts
from fslab.core.version import __version__
from fslab.host import system

TOOLS = ("fio", "losetup")  # every campaign's; the targets add their own (Target.tools)


def capture(lab_root: Path, tools: Iterable[str] = ()) -> Environment:
    """This machine and the tools a campaign uses (fio and losetup, and `tools`: what its
    targets declare they run)."""
    return Environment(
        captured_at=time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        host=socket.gethostname(),
        boot_id=_read("/proc/sys/kernel/random/boot_id"),
        kernel=platform.release(),
        cpu_model=_cpu_model(),
        cpu_count=os.cpu_count(),
        memory_bytes=system.memory_bytes(),
        fslab=__version__,
        tools={tool: system.tool_version(tool) for tool in dict.fromkeys((*TOOLS, *tools))},
        disk_model=disk_model(lab_root),
        facts={"kernel_version": platform.version(), "machine": platform.machine(),
               "python": sys.version.split()[0], "root": system.is_root(),
               "lab_dir": str(lab_root), "lab_fs": _fs_of(lab_root),
               "virtualization": _virtualization(),
               "dirty_ratio": _read("/proc/sys/vm/dirty_ratio"),
               "dirty_background_ratio": _read("/proc/sys/vm/dirty_background_ratio")},
    )


def sitting(environment: Environment, host: str = "") -> SittingFacts:
    """What makes a results directory one sitting: the machine (`host`, default the
    environment's: a simulated campaign names its simulated host), its boot, the start,
    the kernel, the tools' versions and the lab's disk (environment.json "sitting")."""
    return SittingFacts(host=host or environment.host, boot_id=environment.boot_id,
                   started=environment.captured_at, kernel=environment.kernel,
                   tools=dict(environment.tools),
                   lab_disk=environment.disk_model or str(environment.facts.get("lab_fs", "")))


def _read(path: str) -> str:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return ""


def _cpu_model() -> str:
    for line in _read("/proc/cpuinfo").splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"



def _virtualization() -> str:
    if "hypervisor" in _read("/proc/cpuinfo"):
        vendor = _read("/sys/class/dmi/id/sys_vendor")
        return f"virtual machine ({vendor})" if vendor else "virtual machine"
    return "none detected"


def disk_model(path: Path) -> str:
    """The model of the disk under `path` as sysfs names it (a partition's whole disk;
    a virtio disk, which has no model, by its bus), or '' when it cannot be told."""
    _, source, _ = system.containing_mount(path)
    block = Path("/sys/class/block") / Path(source).name
    if not block.exists():
        return ""
    if (block / "partition").exists():
        block = block.resolve().parent
    device = block / "device"
    model = _read(str(device / "model"))
    if model:
        vendor = _read(str(device / "vendor"))
        return f"{vendor} {model}".strip()
    bus = _read(str(device / "modalias")).partition(":")[0]
    return f"{bus} disk" if bus else ""


def _fs_of(path: Path) -> str:
    fstype, source, _ = system.containing_mount(path)
    return f"{fstype} on {source}"
