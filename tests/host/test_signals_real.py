"""Killed and interrupted campaigns: nothing left mounted, nothing lost, nothing repeated."""

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import FSLAB, REPO, fslab_cmd, leftovers, requires

CAMPAIGN = ["run", "--fs", "ext4,xfs", "--workloads", "randread,seqwrite", "--iterations", "2",
            "--runtime", "1", "--size", "512M", "--file-size", "32M", "--seed", "3",
            "--no-ceiling", "--rounds", "2"]


def start(out, lab_root):
    """fslab as a terminal starts it: with SIGINT at its default even when this suite was
    started as a background job (`make test &`, nohup), which ignores it, and an ignored
    SIGINT stays ignored through exec (a Ctrl-C test would then see exit 0, not 130)."""
    return subprocess.Popen([*FSLAB, *CAMPAIGN, "--out", str(out), "--lab", str(lab_root)],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True, preexec_fn=_as_a_terminal)


def _as_a_terminal() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def wait_for(condition, timeout=120.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError("condition not reached in time")


def finished(out):
    return {p.parent.name: json.loads(p.read_text())["started"]
            for p in (out / "runs").glob("*/run.json")} if (out / "runs").exists() else {}


def fio_in_flight(out):
    """A run has written its job file but not its record: fio is running."""
    runs = out / "runs"
    return runs.exists() and any((d / "job.fio").exists() and not (d / "run.json").exists()
                                 for d in runs.iterdir())


@pytest.mark.privileged
def test_sigkill_then_cleanup_then_resume(tmp_path, lab):
    requires("fio", "mkfs.ext4", "mkfs.xfs", "losetup")
    out = tmp_path / "results"
    proc = start(out, lab.root)
    wait_for(lambda: len(finished(out)) >= 2 and fio_in_flight(out))
    os.killpg(proc.pid, signal.SIGKILL)  # fslab and its fio: nothing gets to clean up
    proc.wait()
    before = finished(out)
    assert 2 <= len(before) < 8
    assert leftovers(lab.root), "a SIGKILLed run should have left its mounts behind"

    cleaned = fslab_cmd("cleanup", "--lab", str(lab.root))
    assert cleaned.returncode == 0, cleaned.stderr
    assert "released mount" in cleaned.stdout
    assert not leftovers(lab.root)

    resumed = fslab_cmd("run", "--resume", "--out", str(out), "--lab", str(lab.root))
    assert resumed.returncode == 0, resumed.stderr
    after = finished(out)
    assert len(after) == 8
    assert {k: after[k] for k in before} == before  # completed runs kept, not repeated
    assert f"{8 - len(before)} runs ok" in resumed.stdout.replace("\n", " ")


@pytest.mark.privileged
@pytest.mark.parametrize("how", ["ctrl-c", "sigterm"])
def test_interrupt_during_a_run_exits_cleanly(tmp_path, lab, how):
    requires("fio", "mkfs.ext4", "mkfs.xfs", "losetup")
    out = tmp_path / "results"
    proc = start(out, lab.root)
    wait_for(lambda: fio_in_flight(out))
    status = Path(f"/proc/{proc.pid}/status").read_text()
    ignored = next((line for line in status.splitlines(True)  # what it was told to ignore
                    if line.startswith("SigIgn")), "")
    if how == "ctrl-c":
        os.killpg(proc.pid, signal.SIGINT)  # a terminal's Ctrl-C reaches fslab and fio
    else:
        proc.send_signal(signal.SIGTERM)  # only fslab: it must stop its own fio
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, f"{ignored}{stderr}"
    assert "Traceback" not in stderr
    assert "--resume" in stderr
    assert not leftovers(lab.root)
    assert not list(lab.sessions())
    assert subprocess.run(["pgrep", "-f", str(out)], capture_output=True).returncode == 1


@pytest.mark.privileged
def test_a_walk_cut_short_does_not_keep_its_file_system_busy(lab):
    """Ctrl-C in the middle of a directory walk (an aging's probe, a room being made):
    the walk's suspended iterator lives on in the exception's frames and holds its file
    system busy; the session, closed while the exception unwinds, still unmounts it."""
    requires("mkfs.ext4")
    from fslab.targets import TargetSpec, make_target

    target = make_target(TargetSpec(name="walked", fs="ext4", size=64 * 1024**2))
    session = lab.open_session()
    mounted = target.provision(session)
    for index in range(3):
        (mounted.path / f"d{index}").mkdir()

    def walk() -> None:
        entries = os.scandir(mounted.path)  # a walk kept in a local, half done
        next(entries)
        raise KeyboardInterrupt

    try:
        walk()
    except KeyboardInterrupt:
        report = session.close()
    assert report.errors == []
    assert not os.path.ismount(mounted.path)
    wait_for(lambda: leftovers(lab.root) == [], timeout=10)  # a loop device detaches lazily
