"""fio's client/server mode: many load generators driven from one controller.

`fio --server` runs on every load node; fslab runs `fio --client=H1 job --client=H2 job`
and gets one JSON with each host's jobs (`client_stats`). Before a distributed campaign a
preflight checks, per host: reachable, the same fio version as the controller (a mismatch
makes fio fail quietly), and the target path present (checked by fio on that host).
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from fslab.core.errors import UserError
from fslab.host import system
from fslab.host.signals import signals_unwind
from fslab.workloads.fio.jobfile import fio_path

DEFAULT_PORT = 8765
CONNECT_TIMEOUT_S = 3.0
PREFLIGHT_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class Host:
    """One fio server: address and port."""

    address: str
    port: int = DEFAULT_PORT

    @property
    def client_arg(self) -> str:
        """The value for fio's --client (fio's own 'host,port' form)."""
        prefix = "ip6:" if ":" in self.address else ""
        return f"{prefix}{self.address},{self.port}"

    def __str__(self) -> str:
        return f"{self.address}:{self.port}"

    @property
    def spec(self) -> str:
        """As a campaign writes it, parsed back by parse_hosts ([IPv6]:PORT)."""
        return f"[{self.address}]:{self.port}" if ":" in self.address else str(self)


def parse_hosts(text: str | list[str]) -> list[Host]:
    """'h1,h2:8766' or ['h1', 'h2:8766'] -> hosts (IPv6 as [addr]:port)."""
    items = [i.strip() for i in (text.split(",") if isinstance(text, str) else text)]
    hosts = []
    for item in filter(None, items):
        match = re.fullmatch(r"\[(?P<v6>[0-9a-fA-F:]+)\](?::(?P<p6>\d+))?|"
                             r"(?P<host>[A-Za-z0-9_.-]+)(?::(?P<port>\d+))?", item)
        if not match:
            raise UserError(f"bad host {item!r}: use NAME, NAME:PORT or [IPv6]:PORT")
        address = match.group("v6") or match.group("host")
        port = int(match.group("p6") or match.group("port") or DEFAULT_PORT)
        if not 0 < port < 65536:
            raise UserError(f"bad port in host {item!r}")
        hosts.append(Host(address, port))
    if not hosts:
        raise UserError("--hosts needs at least one host")
    if len(set(hosts)) != len(hosts):
        raise UserError("--hosts lists a host twice")
    return hosts


def client_args(hosts: list[Host], job_file: Path) -> list[str]:
    """--client=H job --client=H job ... for every host."""
    args: list[str] = []
    for host in hosts:
        args += [f"--client={host.client_arg}", str(job_file)]
    return args


def preflight(hosts: list[Host], path: Path) -> list[str]:
    """One line per host that cannot take part (empty when every host is ready)."""
    local = system.tool_version("fio")
    problems = []
    for host in hosts:
        try:
            with socket.create_connection((host.address, host.port), CONNECT_TIMEOUT_S):
                pass
        except OSError as exc:
            problems.append(f"host {host}: unreachable ({exc.strerror or exc})")
            continue
        output = _probe(host, path)
        version = re.search(r"fio=fio-(\S+?),", output)
        if version is None:
            problems.append(f"host {host}: no fio server answered ({_first_line(output)})")
        elif version.group(1) != local:
            problems.append(f"host {host}: fio {version.group(1)} but the controller has "
                            f"fio {local}; install the same version everywhere")
        elif "is not a directory" in output or re.search(r"job \S+ dropped", output):
            problems.append(f"host {host}: target path {path} is missing there")
    return problems


def _probe(host: Host, path: Path) -> str:
    """Run a 4 KiB write-and-unlink job on the host in `path`; return fio's output."""
    job = f"[fslab-preflight]\ndirectory={fio_path(path)}\nsize=4k\nrw=write\nunlink=1\n"
    with tempfile.NamedTemporaryFile("w", suffix=".fio") as handle:
        handle.write(job)
        handle.flush()
        try:
            proc = subprocess.run(["fio", f"--client={host.client_arg}", handle.name],
                                  capture_output=True, text=True, timeout=PREFLIGHT_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            return "fio client timed out"
    return proc.stdout + proc.stderr


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "no output")


def run_server(bind: str, port: int) -> bool:
    """Run a fio server in the foreground until it exits or Ctrl-C, SIGTERM or SIGHUP
    stops it (it is ours: we started it, so we end it; a SIGTERM that ended fslab alone
    left fio serving). True when stopped so; a failure to serve is a UserError."""
    import subprocess

    system.require_tool("fio")
    family = "ip6" if ":" in bind else "ip"
    proc = subprocess.Popen(["fio", f"--server={family}:{bind},{port}"])
    try:
        with signals_unwind():
            code = proc.wait()
    except KeyboardInterrupt:  # Ctrl-C, or SIGTERM / SIGHUP as signals.Interrupted
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        return True
    if code:
        raise UserError(f"fio server exited with {code} (port {port} in use?)")
    return False


LOOPBACK = ("127.", "localhost", "::1")


def exposure(bind: str, port: int) -> str:
    """Who can reach a fio server listening on `bind` and what they can do, in one line
    ('' on loopback): fio's server protocol has no authentication, so whoever reaches the
    port runs any job file as the server's user."""
    if bind.startswith(LOOPBACK):
        return ""
    import pwd

    user = pwd.getpwuid(os.geteuid()).pw_name
    where = ("every address of this machine" if bind in ("0.0.0.0", "::", "")
             else f"{bind}")
    power = ("read, write and delete any file here" if os.geteuid() == 0
             else f"read and write what {user} can")
    return (f"fio's server has no authentication: anyone who can reach TCP port {port} on "
            f"{where} can run any fio job as {user}, and so {power}; let only the "
            "controller reach it (a firewall rule), or keep --bind on loopback")
