"""fslab's own processes (children.py): a job that never ends is ended by the watchdog and
recorded as failed while the campaign goes on; after fslab is SIGKILLed, `fslab cleanup`
ends the fio it left running (issue 24)."""

import os
import signal
import subprocess
import time

import pytest

from fslab import api
from fslab.plan.loading import load_campaign
from tests.conftest import FSLAB, REPO, fslab_cmd, leftovers, requires

FOREVER = """[global]
ioengine=psync
time_based=1
runtime=1h
[forever]
rw=randread
bs=4k
size=8M
"""


def campaign_file(tmp_path, extra=""):
    (tmp_path / "forever.fio").write_text(FOREVER)
    path = tmp_path / "c.toml"
    path.write_text(f"""iterations = 1
runtime = 1
image_size = "256M"
file_size = "16M"
seed = 4
ceiling = false
{extra}
[[target]]
name = "ext4"
fs = "ext4"
[[workload]]
job_file = "forever.fio"
[[workload]]
preset = "direct5"
only = ["randread"]
""")
    return path


def ours_running(marker) -> bool:
    """A process whose command line names `marker` (a path only this test uses)."""
    return subprocess.run(["pgrep", "-f", str(marker)], capture_output=True).returncode == 0


@pytest.mark.privileged
def test_a_job_that_never_ends_is_ended_and_the_campaign_goes_on(tmp_path, lab):
    requires("fio", "mkfs.ext4", "losetup")
    out = tmp_path / "r"
    start = time.monotonic()
    result = api.run(load_campaign(campaign_file(tmp_path, "run_timeout = 3")), out=out,
                     lab=lab)
    assert time.monotonic() - start < 90
    runs = api.runs(out).set_index("workload")
    assert runs.loc["forever", "status"] == "failed"
    reason = runs.loc["forever", "reason"]
    assert "watchdog ended fio after 3 s" in reason and "run_timeout = 3" in reason, reason
    assert runs.loc["randread", "status"] == "ok"  # the campaign went on
    assert result.runner.failed == 1
    assert not ours_running(out) and not ours_running(lab.root)


@pytest.mark.privileged
def test_cleanup_after_sigkill_ends_the_fio_fslab_left_running(tmp_path, lab):
    requires("fio", "mkfs.ext4", "losetup", "pgrep")
    out = tmp_path / "r"
    proc = subprocess.Popen([*FSLAB, "run", str(campaign_file(tmp_path)), "--out", str(out),
                             "--lab", str(lab.root)], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    deadline = time.monotonic() + 120
    while not _measuring(out):
        if time.monotonic() > deadline or proc.poll() is not None:
            proc.terminate()  # fslab ends its own fio on SIGTERM
            raise AssertionError(f"fio never started: {proc.communicate()[1]}")
        time.sleep(0.1)
    os.killpg(proc.pid, signal.SIGKILL)  # fslab's own group: its fio has a group of its own
    proc.wait()
    time.sleep(0.5)
    assert ours_running(out), "fio should outlive a SIGKILLed fslab"
    assert leftovers(lab.root)

    cleaned = fslab_cmd("cleanup", "--lab", str(lab.root))
    assert cleaned.returncode == 0, cleaned.stderr
    # its cgroup (cgroup v2, as here), or its process group where there is none
    assert "released children" in cleaned.stdout or "released pgroup" in cleaned.stdout, \
        cleaned.stdout
    assert not ours_running(out)
    assert not leftovers(lab.root)  # the loop device detached: nothing held the image


def _measuring(out) -> bool:
    """The never-ending job's measured fio run has started (its layout pass is over)."""
    run_dir = out / "runs" / "i001-ext4-forever"
    if not (run_dir / "job.fio").exists():
        return False
    found = subprocess.run(["pgrep", "-af", "output-format=json"], capture_output=True,
                           text=True).stdout
    return str(run_dir) in found


def test_work_waits_for_a_child_nobody_measures(tmp_path):
    """Work queued with while_unmeasured never runs beside a measured child; it runs once,
    while fslab waits on the next unmeasured one, and that child's wait covers it. Shown
    by the two waiting for each other, not by a clock (a busy host stretches any bound):
    the work waits until the child has started, the child until the work is done."""
    from fslab.host import children

    started, done = tmp_path / "child-started", tmp_path / "work-done"
    saw_the_child: list[bool] = []

    def work() -> None:
        deadline = time.monotonic() + 10  # a bound against a hang only
        while not started.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        saw_the_child.append(started.exists())
        done.touch()

    children.while_unmeasured(work)
    children.while_unmeasured(work)  # queued once
    children.run_child(["sleep", "0.1"], 10)
    assert saw_the_child == []  # a measured child: nothing beside it
    finished = children.run_child(
        ["sh", "-c", f'touch "{started}"; while [ ! -e "{done}" ]; do sleep 0.01; done'],
        10, measured=False)
    # the work saw the child running, and the child ended because the work was done:
    # had the work run before the child or after it, one of them would have waited 10 s
    assert saw_the_child == [True]
    assert finished.returncode == 0 and not finished.watchdog, finished.stderr
    children.run_child(["true"], 10, measured=False)
    assert saw_the_child == [True]


def test_a_cgroup_busy_for_a_moment_is_released_once_it_empties():
    """rmdir of a cgroup that still holds a process fails with EBUSY; release_cgroup tries
    again until the process has gone (here it leaves after 0.2 s), and refuses others."""
    import errno
    import threading

    from fslab.host.cgroups import PREFIX, release_cgroup, tracking_root

    requires()
    root = tracking_root()
    if root is None:
        pytest.skip("no cgroup v2 to hold children")
    group = root / f"{PREFIX}test-busy-{os.getpid()}"
    group.mkdir()
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        (group / "cgroup.procs").write_text(str(sleeper.pid))
        with pytest.raises(OSError) as busy:
            group.rmdir()
        assert busy.value.errno == errno.EBUSY

        def leave() -> None:
            time.sleep(0.2)
            sleeper.kill()
            sleeper.wait()

        threading.Thread(target=leave).start()
        release_cgroup(group)
        assert not group.exists()
    finally:
        if sleeper.poll() is None:
            sleeper.kill()
            sleeper.wait()
        if group.exists():
            group.rmdir()
    with pytest.raises(OSError, match="not an fslab cgroup"):
        release_cgroup(root / "system.slice")
