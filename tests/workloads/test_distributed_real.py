"""fio client/server mode with real fio servers on loopback ports started by the tests."""

import socket
import subprocess
import threading
import time

import pytest

from fslab import api
from fslab.core.errors import UserError
from fslab.parsers.fio import ALL_CLIENTS
from fslab.plan.loading import load_campaign
from fslab.plan.schema import Overrides
from fslab.workloads.fio.distributed import Host, parse_hosts, preflight
from tests.conftest import requires


def free_port(taken: set[int] = frozenset()) -> int:  # type: ignore[assignment]
    """A loopback port free now and not among `taken` (the kernel may hand a port just
    released to the next bind: two servers asked for at once must not share one)."""
    while True:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        if port not in taken:
            return port


@pytest.fixture
def servers(request):
    """Start N fio servers on loopback; stop them (ours) afterwards."""
    requires("fio", root=False)
    started: list[tuple[subprocess.Popen, int]] = []

    def start(count: int) -> list[tuple[subprocess.Popen, int]]:
        for _ in range(count):
            port = free_port({p for _, p in started})
            proc = subprocess.Popen(["fio", f"--server=ip:127.0.0.1,{port}"],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            started.append((proc, port))
        for _, port in started[-count:]:
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline:
                try:
                    socket.create_connection(("127.0.0.1", port), 0.2).close()
                    break
                except OSError:
                    time.sleep(0.05)
        return started[-count:]

    yield start
    for proc, _ in started:
        proc.terminate()
        proc.wait(timeout=10)


def campaign(data, ports, workloads=("randread",), runtime="1", iterations=1):
    return load_campaign(None, Overrides(
        fs=[f"dir:{data}"], hosts=[f"127.0.0.1:{p}" for p in ports],
        workloads=list(workloads), iterations=iterations, runtime=runtime,
        file_size="8M", seed=2))


@pytest.mark.parametrize("count", [2, 3])
def test_per_host_rows_and_an_aggregate_equal_to_their_sum(tmp_path, lab, servers, count):
    data = tmp_path / "data"
    data.mkdir()
    ports = [port for _, port in servers(count)]
    result = api.run(campaign(data, ports), out=tmp_path / "r", lab=lab)
    assert result.runner.failed == 0
    metrics = api.load(tmp_path / "r")
    iops = metrics[(metrics.metric == "iops") & (metrics.op == "read")].set_index("host")["value"]
    hosts = {f"127.0.0.1:{p}" for p in ports}
    assert set(iops.index) == hosts | {ALL_CLIENTS}
    assert iops[ALL_CLIENTS] == pytest.approx(sum(iops[h] for h in hosts), rel=0.01)
    summary = api.analyze(tmp_path / "r")
    cell = summary[(summary.metric == "iops") & (summary.op == "read")]
    assert cell["mean"].iloc[0] == pytest.approx(iops[ALL_CLIENTS])  # the aggregate counts
    assert (tmp_path / "r" / "stats" / "hosts.csv").exists()
    assert "Per-host spread" in api.report(tmp_path / "r").read_text()
    assert list(data.iterdir()) == []  # fio's files unlinked on every host


def test_a_server_stopped_mid_run_fails_that_run_and_names_it(tmp_path, lab, servers):
    data = tmp_path / "data"
    data.mkdir()
    (_, keep_port), (victim, victim_port) = servers(2)
    out = tmp_path / "r"

    def stop_when_running() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            runs = out / "runs"
            if runs.exists() and any((d / "job.fio").exists() and not (d / "run.json").exists()
                                     for d in runs.iterdir()):
                time.sleep(1.0)
                victim.kill()  # a server this test started
                return
            time.sleep(0.05)

    thread = threading.Thread(target=stop_when_running)
    thread.start()
    start = time.monotonic()
    result = api.run(campaign(data, [keep_port, victim_port], ("randread", "seqwrite"), "3"),
                     out=out, lab=lab)
    thread.join()
    assert time.monotonic() - start < 120  # nothing hung
    runs = api.runs(out)
    assert len(runs) == 2 and result.runner.failed >= 1  # the campaign went on
    failed = runs[runs.status == "failed"]
    assert all(f"127.0.0.1:{victim_port}" in reason for reason in failed["reason"])


def test_preflight_names_an_unreachable_host(tmp_path, servers):
    (_, port), = servers(1)
    dead = free_port()
    problems = preflight([Host("127.0.0.1", port), Host("127.0.0.1", dead)], tmp_path)
    assert problems == [f"host 127.0.0.1:{dead}: unreachable (Connection refused)"]
    missing = preflight([Host("127.0.0.1", port)], tmp_path / "nope")
    assert missing == [f"host 127.0.0.1:{port}: target path {tmp_path / 'nope'} is missing "
                       "there"]


def test_host_lists_parse_and_refuse_nonsense():
    assert parse_hosts("a,b:8766,[::1]:9000") == [Host("a"), Host("b", 8766), Host("::1", 9000)]
    assert Host("::1", 9000).client_arg == "ip6:::1,9000"
    for bad in ("a:b", "a,a", "a:70000", ""):
        with pytest.raises(UserError):
            parse_hosts(bad)


@pytest.mark.parametrize("bind", ["0.0.0.0", "127.0.0.1"])
def test_serve_beyond_loopback_says_who_can_reach_it_and_what_they_can_do(bind):
    """Issue 62: fio's server runs any job file that reaches its port; `fslab serve` on an
    address other machines reach says so in one line (who, what), and nothing on loopback."""
    import os
    import signal

    from tests.conftest import FSLAB, REPO

    requires("fio", root=False)
    port = free_port()
    proc = subprocess.Popen([*FSLAB, "serve", "--bind", bind, "--port", str(port)],
                            cwd=REPO, text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        assert proc.stdout is not None
        listening = proc.stdout.readline()  # printed after the warning, before fio starts
        assert f"listening on {bind}:{port}" in listening, listening
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the group this test started: fslab and its fio
        _, err = proc.communicate(timeout=30)
    warnings = [line for line in err.splitlines() if line.startswith("fslab: warning")]
    if bind == "127.0.0.1":
        assert warnings == []
        return
    assert len(warnings) == 1, err
    user = "root" if os.geteuid() == 0 else ""
    line = warnings[0]
    assert "no authentication" in line and f"TCP port {port}" in line, line
    assert "every address of this machine" in line and f"any fio job as {user}" in line
    assert "firewall" in line


@pytest.mark.parametrize("sig", ["SIGTERM", "SIGHUP"])
def test_fslab_serve_ends_its_fio_server_when_it_is_told_to_stop(sig):
    """`fslab serve` started the fio server, so a SIGTERM or SIGHUP that stops fslab
    stops it too (before, fslab ended and fio went on serving the open port)."""
    import contextlib
    import os
    import signal
    import sys

    requires("fio", root=False)
    port = free_port()
    children: list[str] = []
    serve = subprocess.Popen([sys.executable, "-m", "fslab.cli", "serve", "--bind",
                              "127.0.0.1", "--port", str(port)],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        else:
            pytest.fail("fslab serve never listened")
        children = subprocess.run(["pgrep", "-P", str(serve.pid), "-x", "fio"],
                                  capture_output=True, text=True).stdout.split()
        assert len(children) == 1, children
        os.kill(serve.pid, getattr(signal, sig))
        assert serve.wait(timeout=20) is not None
        fio = int(children[0])
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and os.path.exists(f"/proc/{fio}"):
            time.sleep(0.1)
        assert not os.path.exists(f"/proc/{fio}"), "fio went on serving"
    finally:
        if serve.poll() is None:  # ours
            serve.kill()
            serve.wait()
        for pid in children:  # the server our fslab serve started, if it outlived it
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid), signal.SIGKILL)
