"""Every file system and mirror kind available here: provisioned, 1-second fio, torn down.

Nothing may remain afterwards: no mount, no loop device, no zfs pool, and no zfs-fuse
daemon that the test started.
"""

import threading
import time
from pathlib import Path

import pytest

from fslab import api
from fslab.core.errors import UserError
from fslab.host import system
from fslab.host.lab import Lab
from fslab.plan.loading import load_campaign
from fslab.plan.schema import Overrides
from fslab.targets import availability_table
from fslab.targets.zfs_daemon import running_daemons
from tests.conftest import leftovers, requires

KINDS = {
    # kind: (tools it needs, what fs_impl must say)
    "ext2": (("mkfs.ext2",), "kernel"),
    "ext3": (("mkfs.ext3",), "kernel"),
    "tmpfs": ((), "(memory)"),
    "zfs": (("zfs-fuse", "zpool"), "zfs-fuse 0.7.0 (FUSE, not kernel OpenZFS), pool version 23"),
    "zfs-mirror": (("zfs-fuse", "zpool"), "pool version 23"),
    "ntfs": (("mkntfs", "ntfs-3g"), "ntfs-3g"),
    "exfat": (("mkfs.exfat", "mount.exfat-fuse"), "exfat-fuse"),
    "fat32": (("mkfs.fat", "fusefat"), "fusefat"),
    "raw": ((), "no file system"),
    "btrfs-raid1": (("mkfs.btrfs",), "kernel"),
}
# zfs-fuse serves every pool of the machine: its kinds are tested apart, one test at a time
# (conftest: their test names it), for the pools and daemons they leave. A FUSE kind's
# daemon serves its one mount, and fslab waits for it to exit as it releases the mount.
ZFS_KINDS = [kind for kind in KINDS if kind.startswith("zfs")]
UNSHARED_KINDS = [kind for kind in KINDS if kind not in ZFS_KINDS]


def zpools() -> list[str]:
    if system.which("zpool") is None or not running_daemons():
        return []
    out = system.run(["zpool", "list", "-H"], check=False).stdout
    return [line.split("\t")[0] for line in out.splitlines() if line.startswith("fslab")]


def campaign_for(kind, workloads="randwrite", **extra):
    return load_campaign(None, Overrides(
        fs=[kind], workloads=workloads.split(","), iterations=1, runtime="1",
        image_size="256M", file_size="16M", seed=1, rounds=1, ceiling=False,
        **extra))


def runs_fio_and_leaves_nothing(tmp_path: Path, lab: Lab, kind: str) -> None:
    tools, impl = KINDS[kind]
    requires("fio", "losetup", *tools)
    result = api.run(campaign_for(kind, "randwrite,seqread"), out=tmp_path / "r", lab=lab)
    runs = api.runs(tmp_path / "r")
    assert list(runs["status"]) == ["ok", "ok"], runs.to_dict("records")
    metrics = api.load(tmp_path / "r")
    assert impl in metrics["fs_impl"].iloc[0]
    writes = metrics[(metrics.op == "write") & (metrics.metric == "iops")]["value"]
    assert writes.iloc[0] > 0
    assert result.runner.warnings == []
    assert not leftovers(lab.root)


@pytest.mark.privileged
@pytest.mark.parametrize("kind", UNSHARED_KINDS)
def test_each_kind_runs_fio_and_leaves_nothing(tmp_path, lab, kind):
    runs_fio_and_leaves_nothing(tmp_path, lab, kind)


@pytest.mark.privileged
@pytest.mark.parametrize("kind", ZFS_KINDS)
def test_each_zfs_kind_runs_fio_and_leaves_no_pool_and_no_daemon(tmp_path, lab, kind):
    daemons_before = set(running_daemons())
    runs_fio_and_leaves_nothing(tmp_path, lab, kind)
    assert not zpools()
    assert set(running_daemons()) <= daemons_before


@pytest.mark.privileged
def test_md_raid1_is_refused_in_one_line_where_the_kernel_lacks_md(tmp_path, lab):
    if Path("/proc/mdstat").exists():
        requires("mdadm")
        api.run(campaign_for("md-raid1-ext4"), out=tmp_path / "r", lab=lab)
        assert list(api.runs(tmp_path / "r")["status"]) == ["ok"]
        return
    with pytest.raises(UserError, match=r"md-raid1-xfs\): the running kernel has no md RAID"):
        api.prepare(campaign_for("md-raid1-xfs"))
    reasons = {name: why for name, _, why in availability_table()}
    assert "no md RAID driver" in reasons["md-raid1-ext4"]


@pytest.mark.privileged
def test_fat32_basic5_every_cell_has_a_result_or_a_reason(tmp_path, lab):
    requires("fio", "mkfs.fat", "fusefat")
    campaign = load_campaign(None, Overrides(fs=["fat32"], iterations=1, runtime="1",
                                             image_size="256M", file_size="8M", seed=2,
                                             rounds=1, ceiling=False))
    api.run(campaign, out=tmp_path / "r", lab=lab)
    runs = api.runs(tmp_path / "r")
    assert len(runs) == 5
    metrics = api.load(tmp_path / "r")
    for _, run in runs.iterrows():
        if run["status"] == "ok":
            assert not metrics[metrics.run_id == run["run_id"]].empty
        else:
            assert run["status"] == "unsupported" and run["reason"], run.to_dict()
    # fio alone fails randread/randwrite/mixed on fusefat; the sequential layout fixes them.
    assert set(runs["status"]) == {"ok"}


@pytest.mark.privileged
def test_zfs_daemon_killed_mid_run(tmp_path, lab):
    requires("fio", "zfs-fuse", "zpool")
    if running_daemons():
        pytest.skip("a zfs-fuse daemon not started by this test is running")
    campaign = load_campaign(None, Overrides(
        fs=["zfs"], workloads=["randwrite", "seqwrite"], iterations=2, runtime="2",
        image_size="256M", file_size="16M", seed=4, rounds=1, ceiling=False))
    out = tmp_path / "r"
    killed: list[int] = []

    def killer() -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            runs = out / "runs"
            busy = runs.exists() and any((d / "job.fio").exists() and not (d / "run.json").exists()
                                         for d in runs.iterdir())
            if busy and running_daemons():
                time.sleep(0.8)  # fio is past layout and running
                for pid in running_daemons():
                    system.run(["kill", "-KILL", str(pid)], check=False)
                    killed.append(pid)
                return
            time.sleep(0.05)

    thread = threading.Thread(target=killer)
    thread.start()
    result = api.run(campaign, out=out, lab=lab)
    thread.join()
    assert killed
    runs = api.runs(out).set_index("run_id")
    failed = runs[runs.status == "failed"]
    assert len(failed) == 1, runs.to_dict("records")
    assert failed["reason"].iloc[0]  # recorded with fio's reason
    assert (runs.status == "ok").sum() == 3  # the campaign went on, on a new daemon
    assert result.runner.failed == 1
    assert not leftovers(lab.root) and not running_daemons()


@pytest.mark.privileged
def test_loop_direct_io_and_slow_device_emulation(tmp_path, lab):
    requires("fio", "mkfs.ext4", "losetup")
    campaign_file = tmp_path / "c.toml"
    campaign_file.write_text("""
iterations = 1
runtime = 2
image_size = "256M"
file_size = "16M"
[[target]]
name = "slow"
fs = "ext4"
direct_io = true
throttle = { write_iops = 200 }
[[workload]]
preset = "basic5"
only = ["randwrite"]
options = { direct = 1, numjobs = 1 }
""")
    api.run(load_campaign(campaign_file), out=tmp_path / "r", lab=lab)
    metrics = api.load(tmp_path / "r")
    iops = metrics[(metrics.op == "write") & (metrics.metric == "iops")]["value"].iloc[0]
    assert 100 < iops <= 220  # capped at 200 by the blkio throttle
    env = (tmp_path / "r" / "runs").glob("*/run.json")
    record = next(iter(env)).read_text()
    assert '"direct_io": true' in record and '"write_iops": 200' in record
    assert not leftovers(lab.root)
