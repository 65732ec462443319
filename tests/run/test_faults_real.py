"""Faults, end to end (issue 15): a target filling up mid-run, a FUSE daemon dying, the
results disk filling up, and two campaigns sharing one lab — real file systems, real fio,
nothing left mounted afterwards."""

import itertools
import json
import os
import subprocess
import threading
import time
from pathlib import Path

import pytest

from fslab import api
from fslab.host import system
from fslab.plan.loading import load_campaign
from tests.conftest import FSLAB, REPO, fslab_cmd, leftovers, requires

FILL = """[global]
ioengine=sync
direct=1
rw=write
bs=1M
[first]
size=120M
[second]
size=120M
"""


@pytest.mark.privileged
def test_a_target_filling_up_fails_that_run_and_the_next_gets_a_fresh_one(tmp_path, lab):
    requires("fio", "mkfs.ext4", "losetup")
    (tmp_path / "fill.fio").write_text(FILL)  # 240 MiB of files on a 256 MiB image
    (tmp_path / "c.toml").write_text(
        'name = "enospc"\niterations = 2\nruntime = 1\nimage_size = "256M"\n'
        'file_size = "16M"\nseed = 5\nfresh = "campaign"\nceiling = false\n'
        '[[target]]\nfs = "ext4"\n'
        '[[workload]]\njob_file = "fill.fio"\nname = "fill"\n'
        '[[workload]]\npreset = "direct5"\nonly = ["randread"]\n')
    out = tmp_path / "r"
    result = api.run(load_campaign(tmp_path / "c.toml"), out=out, lab=lab)
    records = {r["run_id"]: r for r in (json.loads(p.read_text())
                                        for p in (out / "runs").glob("*/run.json"))}
    fills = [r for r in records.values() if r["workload"] == "fill"]
    assert len(fills) == 2 and all(r["status"] == "failed" for r in fills)
    assert all("No space left on device" in r["reason"] or "error 28" in r["reason"]
               for r in fills), [r["reason"] for r in fills]
    assert [r["failure"] for r in fills] == ["no_space", "no_space"]  # fio's errno 28
    reads = [r for r in records.values() if r["workload"] == "randread"]
    assert [r["status"] for r in reads] == ["ok", "ok"]  # the campaign went on
    assert result.runner.failed == 2
    # fresh = "campaign" reuses a target, except after a failure: the next run got a new one
    by_order = sorted(records.values(), key=lambda r: r["started"])
    for before, after in itertools.pairwise(by_order):
        if before["status"] == "failed":
            made = [r["target_description"]["provisioned"]["number"] for r in (before, after)]
            assert made[1] > made[0]
    assert not leftovers(lab.root)


def fuse_daemons(program: str, under: Path | None = None) -> list[int]:
    """PIDs of `program`; with `under`, only those serving a path under it (another
    test's daemon, running beside this one, is not this test's to kill or wait for)."""
    out = subprocess.run(["pgrep", "-x", program], capture_output=True, text=True).stdout
    pids = [int(pid) for pid in out.split()]
    if under is None:
        return pids
    mine = []
    for pid in pids:
        try:
            words = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if any(str(under).encode() in word for word in words):
            mine.append(pid)
    return mine


@pytest.mark.privileged
def test_a_fuse_daemon_dying_mid_run_fails_that_run_and_releases_its_mount(tmp_path, lab):
    requires("fio", "mkntfs", "ntfs-3g")
    (tmp_path / "c.toml").write_text(
        'name = "fuse"\niterations = 2\nruntime = 3\nimage_size = "256M"\n'
        'file_size = "16M"\nseed = 2\nceiling = false\n[[target]]\nfs = "ntfs"\n'
        '[[workload]]\npreset = "direct5"\nonly = ["randwrite"]\n')
    out = tmp_path / "r"
    killed: list[int] = []

    def killer() -> None:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and not killed:
            runs = out / "runs"
            busy = runs.exists() and any(
                (d / "job.fio").exists() and (d / "fio.json").exists() is False
                and not (d / "run.json").exists() for d in runs.iterdir())
            if busy and fuse_daemons("ntfs-3g", lab.root):
                time.sleep(2.0)  # layout done, fio measuring
                for pid in fuse_daemons("ntfs-3g", lab.root):
                    os.kill(pid, 9)  # the test plays the crash
                    killed.append(pid)
            time.sleep(0.05)

    thread = threading.Thread(target=killer)
    thread.start()
    result = api.run(load_campaign(tmp_path / "c.toml"), out=out, lab=lab)
    thread.join()
    assert killed
    runs = api.runs(out)
    assert (runs.status == "failed").sum() == 1, runs.to_dict("records")
    assert runs.loc[runs.status == "failed", "reason"].iloc[0]
    assert (runs.status == "ok").sum() == 1  # the next iteration ran on a new mount
    assert result.runner.failed == 1
    assert not leftovers(lab.root)
    deadline = time.monotonic() + 30  # a killed daemon in the middle of a write exits once it lands
    while fuse_daemons("ntfs-3g", lab.root) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not fuse_daemons("ntfs-3g", lab.root)


@pytest.mark.privileged
def test_a_full_results_disk_stops_in_one_line_and_resume_finishes(tmp_path, lab):
    requires("fio", "mkfs.ext4", "losetup")
    disk = tmp_path / "small"
    disk.mkdir()
    system.run(["mount", "-t", "tmpfs", "-o", "size=12M", "tmpfs", str(disk)])
    try:
        from fslab.results.store import RESULTS_MIN_FREE

        free = os.statvfs(disk).f_bavail * os.statvfs(disk).f_frsize
        (disk / "filler").write_bytes(b"\0" * (free - RESULTS_MIN_FREE - 100 * 1024))
        args = ["run", "--fs", "ext4", "--workloads", "randread", "--iterations", "4",
                "--runtime", "1", "--size", "256M", "--file-size", "16M", "--seed", "2",
                "--rounds", "1", "--no-ceiling", "--out", str(disk / "r"), "--lab",
                str(lab.root)]
        stopped = fslab_cmd(*args)
        assert stopped.returncode == 2, stopped.stderr
        errors = [line for line in stopped.stderr.splitlines() if "error" in line]
        assert len(errors) == 1 and "out of space" in errors[0] and "--resume" in errors[0]
        assert "Traceback" not in stopped.stderr
        assert not leftovers(lab.root)
        done_before = len(list((disk / "r" / "runs").glob("*/run.json")))
        assert done_before < 4  # it stopped before the end
        (disk / "filler").unlink()  # space is back
        resumed = fslab_cmd(*args, "--resume")
        assert resumed.returncode == 0, resumed.stderr
        assert f"{done_before} of 4 runs done" in resumed.stdout
        assert sorted(p.parent.name for p in (disk / "r" / "runs").glob("*/run.json")) == [
            f"i00{i}-ext4-randread" for i in (1, 2, 3, 4)]
    finally:
        system.run(["umount", str(disk)], check=False)
    assert not leftovers(lab.root)


@pytest.mark.privileged
def test_two_campaigns_share_a_lab_and_cleanup_leaves_live_runs_alone(tmp_path, lab):
    requires("fio", "mkfs.ext4", "losetup")
    args = ["run", "--fs", "ext4", "--workloads", "randread,seqread", "--iterations", "2",
            "--runtime", "2", "--size", "256M", "--file-size", "16M", "--rounds", "1",
            "--no-ceiling", "--lab", str(lab.root)]
    first, second = (subprocess.Popen([*FSLAB, *args, "--seed", str(n), "--out",
                                       str(tmp_path / f"r{n}")], cwd=REPO, text=True,
                                      stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                     for n in (1, 2))
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(list(lab.sessions())) < 2:
        time.sleep(0.1)
    assert len(list(lab.sessions())) == 2
    cleaned = fslab_cmd("cleanup", "--lab", str(lab.root))
    assert cleaned.returncode == 0 and "released" not in cleaned.stdout
    assert "left alone" in cleaned.stdout
    for proc in (first, second):
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
    for n in (1, 2):
        assert len(list((tmp_path / f"r{n}" / "runs").glob("*/run.json"))) == 4
    assert not leftovers(lab.root) and not list(lab.sessions())


def measuring(out: Path) -> bool:
    """fio runs for a run of `out` that has no record yet (only this test's fio names it)."""
    runs = out / "runs"
    busy = runs.is_dir() and any((d / "job.fio").exists() and not (d / "run.json").exists()
                                 for d in runs.iterdir())
    return busy and subprocess.run(["pgrep", "-f", f"fio.*{out}"],
                                   capture_output=True).returncode == 0


@pytest.mark.privileged
@pytest.mark.parametrize("when", ["after the first run", "while fio measures"])
def test_results_made_read_only_mid_campaign_stop_in_one_line_and_resume_finishes(
        tmp_path, lab, when):
    """Issue 62: the results directory's file system remounted read-only after the first
    run of an ext4/xfs campaign (or while a slice of fio writes into it) stops it at the
    next write in one line, releases both file systems, keeps every run written; once
    writable, --resume finishes it, each run once."""
    requires("fio", "mkfs.ext4", "mkfs.xfs", "losetup")
    disk = tmp_path / "results"
    disk.mkdir()
    system.run(["mount", "-t", "tmpfs", "-o", "size=64M", "tmpfs", str(disk)])
    args = ["run", "--fs", "ext4,xfs", "--workloads", "randread,randwrite", "--iterations",
            "2", "--runtime", "1", "--size", "320M", "--file-size", "16M", "--seed", "2",
            "--no-ceiling", "--out", str(disk / "r"), "--lab", str(lab.root)]
    proc = subprocess.Popen([*FSLAB, *args], cwd=REPO, text=True, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 180
        while not (measuring(disk / "r") if when == "while fio measures"
                   else list((disk / "r" / "runs").glob("*/run.json"))):
            assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()
            time.sleep(0.02)
        # a file open for writing (fio's output) makes the remount busy: again, until
        # it lands between two writes
        while system.run(["mount", "-o", "remount,ro", str(disk)], check=False).returncode:
            assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()
            time.sleep(0.01)
        out, err = proc.communicate(timeout=300)
        written = sorted(p.parent.name for p in (disk / "r" / "runs").glob("*/run.json"))
        assert proc.returncode == 2, out + err
        assert "Traceback" not in err, err
        errors = [line for line in err.splitlines() if line.startswith("fslab: error")]
        assert len(errors) == 1, err
        assert "Read-only file system" in errors[0] and "--resume" in errors[0], errors
        assert not leftovers(lab.root) and not list(lab.sessions())  # the lab released
        assert (1 if when == "after the first run" else 0) <= len(written) < 8
        system.run(["mount", "-o", "remount,rw", str(disk)])
        resumed = fslab_cmd(*args, "--resume")
        assert resumed.returncode == 0, resumed.stderr
        assert f"{len(written)} of 8 runs done" in resumed.stdout
        after = sorted(p.parent.name for p in (disk / "r" / "runs").glob("*/run.json"))
        assert set(written) <= set(after) and len(after) == 8  # none lost, none twice
        records = [json.loads(p.read_text()) for p in (disk / "r" / "runs").glob("*/run.json")]
        assert len({r["run_id"] for r in records}) == 8
        assert all(r["status"] == "ok" for r in records)
    finally:
        if proc.poll() is None:  # the test failed under it: fslab releases on SIGTERM
            proc.terminate()
            proc.communicate(timeout=300)
        system.run(["umount", str(disk)], check=False)
    assert not leftovers(lab.root)
