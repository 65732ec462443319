"""A FUSE daemon that hangs rather than dies (issue 62): SIGSTOPped under fio, its run
ends as a failure with the cause in one line within the job's timeout + 30 s, the campaign
goes on, and nothing is left: no mount, loop device, daemon or fio. `fslab cleanup`
releases a hung mount a SIGKILLed campaign left behind."""

import json
import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from fslab import api
from fslab.host import fuse, system
from fslab.plan.loading import load_campaign
from tests.conftest import FSLAB, REPO, fslab_cmd, leftovers, requires

RUN_TIMEOUT = 12  # the campaign's job timeout: the hung run must end by this + 30 s


def serving(program: str, under: Path) -> list[int]:
    """PIDs of `program` whose command line names a path under `under` (this test's lab:
    another test's daemons are not this test's to stop or wait for)."""
    out = subprocess.run(["pgrep", "-x", program], capture_output=True, text=True).stdout
    found = []
    for pid in map(int, out.split()):
        try:
            words = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if any(str(under).encode() in word for word in words):
            found.append(pid)
    return found


def alive(pid: int) -> bool:
    return system.process_state(pid) not in ("", "Z", "X")


def fio_under(path: Path) -> bool:
    """A fio whose command line names a path under `path` (only this test's)."""
    return subprocess.run(["pgrep", "-f", f"fio.*{path}"], capture_output=True).returncode == 0


def measuring(out: Path) -> bool:
    """A run of `out` is in flight: its job file written, no record yet, fio running."""
    runs = out / "runs"
    return runs.is_dir() and any((d / "job.fio").exists() and not (d / "run.json").exists()
                                 for d in runs.iterdir()) and fio_under(out)


def stop_when_measuring(out: Path, program: str, lab: Path, stopped: list[tuple[int, float]]
                        ) -> threading.Thread:
    """SIGSTOP the daemon of this test's mount once fio measures on it (the fault)."""
    def stopper() -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            daemons = serving(program, lab)
            if measuring(out) and daemons:
                time.sleep(1.0)
                for pid in serving(program, lab):
                    os.kill(pid, signal.SIGSTOP)
                    stopped.append((pid, time.time()))
                return
            time.sleep(0.05)

    thread = threading.Thread(target=stopper)
    thread.start()
    return thread


@pytest.mark.privileged
def test_a_daemon_stopped_mid_run_fails_that_run_and_the_campaign_goes_on(tmp_path, lab):
    requires("fio", "mkntfs", "ntfs-3g", "pgrep")
    (tmp_path / "c.toml").write_text(
        f'name = "hung"\niterations = 2\nruntime = 3\nimage_size = "256M"\n'
        f'file_size = "16M"\nseed = 3\nceiling = false\nrun_timeout = {RUN_TIMEOUT}\n'
        '[[target]]\nfs = "ntfs"\n'
        '[[workload]]\npreset = "direct5"\nonly = ["randwrite", "randread"]\n')
    out = tmp_path / "r"
    stopped: list[tuple[int, float]] = []
    thread = stop_when_measuring(out, "ntfs-3g", lab.root, stopped)
    try:
        result = api.run(load_campaign(tmp_path / "c.toml"), out=out, lab=lab)
    finally:
        thread.join()
        for pid, _ in stopped:  # never leave a stopped process, even when the test fails
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
    assert stopped, "the daemon was never stopped"
    records = [json.loads(p.read_text()) for p in out.glob("runs/*/run.json")]
    assert len(records) == 4  # every run has its record: none lost
    hung = [r for r in records if r["status"] != "ok"]
    assert [r["failure"] for r in hung] == ["hung"], [(r["status"], r["reason"]) for r in records]
    reason = hung[0]["reason"]
    assert "\n" not in reason and "ntfs-3g" in reason and f"pid {stopped[0][0]}" in reason
    assert "stopped" in reason and "aborted its connection" in reason, reason
    took = hung[0]["finished"] - stopped[0][1]
    assert took < RUN_TIMEOUT + 30, took
    assert result.runner.failed == 1 and result.runner.ok == 3  # the other cells finished
    assert not alive(stopped[0][0])  # the stopped daemon was ended
    assert not serving("ntfs-3g", lab.root) and not fio_under(lab.root)
    assert not leftovers(lab.root)
    assert not [p for p in fuse.control_mounts() if p.is_relative_to(lab.root)]


@pytest.mark.privileged
def test_cleanup_releases_a_hung_mount_a_sigkilled_campaign_left(tmp_path, lab):
    """exfat-fuse on a loop device: the daemon stopped under fio, then fslab SIGKILLed;
    `fslab cleanup` aborts the connection, unmounts, ends the daemon fslab started (in the
    ledger) and the fio left on the mount, and detaches the loop device."""
    requires("fio", "mkfs.exfat", "mount.exfat-fuse", "losetup", "pgrep")
    (tmp_path / "c.toml").write_text(
        'name = "hung-kill"\niterations = 1\nruntime = 30\nimage_size = "256M"\n'
        'file_size = "16M"\nseed = 3\nceiling = false\nrounds = 1\n'
        '[[target]]\nfs = "exfat"\n[[workload]]\npreset = "direct5"\nonly = ["randwrite"]\n')
    out = tmp_path / "r"
    proc = subprocess.Popen([*FSLAB, "run", str(tmp_path / "c.toml"), "--out", str(out),
                             "--lab", str(lab.root)], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    stopped: list[tuple[int, float]] = []
    try:
        # fslab SIGKILLed while fio measures, then the daemon stopped: fslab's own watch
        # (which aborts a daemon stopped for 3 s) is gone before the daemon hangs, so what
        # is left does not hang on how fast a busy host runs this test's steps
        deadline = time.monotonic() + 120
        while not (measuring(out) and serving("mount.exfat-fus", lab.root)):
            assert time.monotonic() < deadline and proc.poll() is None, proc.poll()
            time.sleep(0.05)
        time.sleep(1.0)  # fio is writing on the mount
        os.killpg(proc.pid, signal.SIGKILL)  # fslab's group: its fio has one of its own
        proc.wait()
        for pid in serving("mount.exfat-fus", lab.root):
            os.kill(pid, signal.SIGSTOP)
            stopped.append((pid, time.time()))
        assert stopped, "no daemon to stop"
        time.sleep(1.0)  # fio blocks on the mount
        assert fio_under(lab.root) or fio_under(out)  # left blocked on the hung mount
        assert leftovers(lab.root)
        started = time.monotonic()
        cleaned = fslab_cmd("cleanup", "--lab", str(lab.root), timeout=180)
        assert cleaned.returncode == 0, cleaned.stdout + cleaned.stderr
        assert time.monotonic() - started < 60
        assert "released fuse" in cleaned.stdout, cleaned.stdout
        assert not alive(stopped[0][0])
        assert not fio_under(out) and not fio_under(lab.root)
        assert not leftovers(lab.root) and not list(lab.sessions())
    finally:
        for pid, _ in stopped:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
