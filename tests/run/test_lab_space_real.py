"""A lab disk that fills while an image is made or formatted (issue 62), the lab on a
small tmpfs of the test's own: a target too big for what is free fails with the space it
needed and had, before anything is made, and the campaign goes on; a disk that another
process fills while mkfs runs fails that target with its image removed, and when no
target could be made any more the campaign stops in one line and --resume finishes it;
`fslab doctor CAMPAIGN` and `--dry-run` say the lab's free space against the campaign's
need before anything starts."""

import contextlib
import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fslab import api
from fslab.host import system
from fslab.host.lab import Lab
from fslab.plan.loading import load_campaign
from tests.conftest import FSLAB, REPO, fslab_cmd, leftovers, requires

MiB = 1024**2
TWO_TARGETS = """name = "lab-space"
iterations = 2
runtime = 1
rounds = 1
file_size = "16M"
seed = 8
ceiling = false
[[target]]
name = "small"
fs = "ext4"
image_size = "256M"
[[target]]
name = "big"
fs = "ext4"
image_size = "2G"
[[workload]]
preset = "direct5"
only = ["randread"]
"""


@contextlib.contextmanager
def lab_on_tmpfs(where: Path, size: str) -> Iterator[Lab]:
    """A lab on a tmpfs of `size` this test mounts (and unmounts: only it)."""
    where.mkdir()
    system.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)])
    lab = Lab(where / "lab")
    try:
        yield lab
    finally:
        lab.cleanup()
        system.run(["umount", str(where)], check=False)


def images(lab: Lab) -> list[Path]:
    return list(lab.root.glob("sessions/*/images/*"))


@pytest.mark.privileged
def test_a_target_too_big_for_the_lab_fails_with_what_it_needed_and_the_rest_runs(tmp_path):
    requires("fio", "mkfs.ext4", "losetup")
    (tmp_path / "c.toml").write_text(TWO_TARGETS)
    with lab_on_tmpfs(tmp_path / "disk", "120M") as lab:
        found = fslab_cmd("doctor", str(tmp_path / "c.toml"), "--lab", str(lab.root))
        (line,) = [x for x in found.stdout.splitlines() if "lab space" in x]
        # each image: mkfs's 1/16 + 16 MiB, at most, and four jobs' 16 MiB files
        assert "warn" in line and "about 304 MiB with every target made at once" in line
        assert "96 MiB for its smallest run" in line, line
        planned = fslab_cmd("run", str(tmp_path / "c.toml"), "--dry-run", "--lab",
                            str(lab.root))
        assert planned.returncode == 0, planned.stderr
        assert "the campaign's images take about 304 MiB" in planned.stdout
        out = tmp_path / "r"
        result = api.run(load_campaign(tmp_path / "c.toml"), out=out, lab=lab)
        records = {r["run_id"]: r for r in (json.loads(p.read_text())
                                            for p in out.glob("runs/*/run.json"))}
        assert len(records) == 4 and result.runner.failed == 2
        for iteration in (1, 2):
            small = records[f"i00{iteration}-small-randread"]
            big = records[f"i00{iteration}-big-randread"]
            assert small["status"] == "ok"
            assert big["status"] == "failed" and big["failure"] == "no_space"
            assert "target big needs about 208 MiB" in big["reason"], big["reason"]
            assert "free at" in big["reason"] and "it was not made" in big["reason"]
        assert not images(lab) and not leftovers(lab.root) and not list(lab.sessions())


@pytest.mark.privileged
def test_a_lab_disk_filled_while_formatting_stops_in_one_line_and_resume_finishes(tmp_path):
    """Another process fills the lab's disk while the image is made, before mkfs has
    written it: mkfs fails on its loop device; the image is removed; nothing else could
    be made, so the campaign stops with no run recorded for it, and --resume finishes
    once there is room."""
    requires("fio", "mkfs.ext4", "losetup")
    (tmp_path / "c.toml").write_text(TWO_TARGETS.split("[[target]]")[0] + "[[target]]"
                                     + TWO_TARGETS.split("[[target]]")[2])  # big alone
    with lab_on_tmpfs(tmp_path / "disk", "256M") as lab:
        filler = tmp_path / "disk" / "filler"
        filled: list[float] = []
        args = ["run", str(tmp_path / "c.toml"), "--out", str(tmp_path / "r"), "--lab",
                str(lab.root)]
        proc = subprocess.Popen([*FSLAB, *args], cwd=REPO, text=True,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)
        try:
            # The moment the image appears (made before it is attached and formatted),
            # fslab and its children (the group this test started) are held still while
            # the disk fills: the fill lands while the image is made, every time.
            deadline = time.monotonic() + 120
            while not images(lab):
                assert time.monotonic() < deadline and proc.poll() is None
                time.sleep(0.001)
            os.killpg(proc.pid, signal.SIGSTOP)
            try:
                with filler.open("wb") as handle:
                    stats = os.statvfs(filler.parent)
                    os.posix_fallocate(handle.fileno(), 0,
                                       stats.f_bavail * stats.f_frsize - 2 * MiB)
                filled.append(time.monotonic())
            finally:
                os.killpg(proc.pid, signal.SIGCONT)
            out, err = proc.communicate(timeout=300)
        finally:
            if proc.poll() is None:  # the test failed under it: fslab releases on SIGTERM
                proc.terminate()
                proc.communicate(timeout=300)
        stopped = subprocess.CompletedProcess(args, proc.returncode, out, err)
        assert filled
        assert stopped.returncode == 2, stopped.stdout + stopped.stderr
        assert "Traceback" not in stopped.stderr
        errors = [line for line in stopped.stderr.splitlines() if "error" in line]
        assert len(errors) == 1, stopped.stderr
        assert "filled while target" in errors[0] and "was made" in errors[0], errors
        assert "no target of the campaign can be made" in errors[0]
        assert "needs about 208 MiB" in errors[0] and "--resume" in errors[0]
        assert not images(lab) and not leftovers(lab.root) and not list(lab.sessions())
        assert not list((tmp_path / "r" / "runs").glob("*/run.json"))  # none recorded
        filler.unlink()
        resumed = fslab_cmd(*args, "--resume")
        assert resumed.returncode == 0, resumed.stderr
        records = [json.loads(p.read_text()) for p in (tmp_path / "r").glob("runs/*/run.json")]
        assert sorted(r["run_id"] for r in records) == ["i001-big-randread",
                                                         "i002-big-randread"]
        assert all(r["status"] == "ok" for r in records)
        assert not images(lab) and not leftovers(lab.root)


@pytest.mark.privileged
def test_a_lab_too_small_for_any_target_is_said_before_anything_starts(tmp_path):
    requires("fio", "mkfs.ext4", "losetup")
    (tmp_path / "c.toml").write_text(TWO_TARGETS)
    with lab_on_tmpfs(tmp_path / "disk", "30M") as lab:
        planned = fslab_cmd("run", str(tmp_path / "c.toml"), "--dry-run", "--lab",
                            str(lab.root))
        assert planned.returncode == 2
        (stop,) = [x for x in planned.stderr.splitlines() if x.startswith("would stop")]
        assert "smallest target of the campaign needs about 96 MiB" in stop, stop
        ran = fslab_cmd("run", str(tmp_path / "c.toml"), "--out", str(tmp_path / "r"),
                        "--lab", str(lab.root))
        assert ran.returncode == 2 and "needs about 96 MiB" in ran.stderr
        assert not (tmp_path / "r").exists() and not leftovers(lab.root)
