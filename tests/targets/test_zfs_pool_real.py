"""A real zfs-fuse pool as the ZFS server study built it (issue 60 item 1): raidz1 over
three images with a log image and a cache device on a loop device, swept over two ARC
sizes. Each size runs under a zfs-fuse daemon of its own (pools under one daemon share
its ARC), the sizes never in one round; the descriptions in run.json and stats/ say what
was built; no daemon, pool, mount or loop device is left."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from fslab import api
from fslab.plan.loading import load_campaign
from fslab.targets.zfs_daemon import running_daemons
from tests.conftest import leftovers, requires

MiB = 1024**2
CAMPAIGN = """
name = "raidz-arc"
iterations = 2
runtime = 1
rounds = 1
ceiling = false
seed = 11
file_size = "32M"
[sweep]
arc_max = ["32M", "256M"]
[[target]]
fs = "zfs"
layout = "raidz1"
devices = 3
log_size = "64M"
cache_size = "64M"
image_size = "256M"
[[workload]]
preset = "basic5"
only = ["randread", "seqread"]
"""


@pytest.mark.privileged
def test_a_raidz1_pool_with_log_and_cache_swept_over_the_arc(tmp_path: Path, lab):
    requires("fio", "zfs-fuse", "zpool", "losetup")
    if running_daemons():
        pytest.skip("a zfs-fuse daemon not started by this test is running")
    path = tmp_path / "c.toml"
    path.write_text(CAMPAIGN)
    out = tmp_path / "r"
    result = api.run(load_campaign(path), out=out, lab=lab)
    assert result.runner.failed == 0 and result.runner.warnings == []
    records = [json.loads(p.read_text()) for p in sorted((out / "runs").glob("*/run.json"))]
    assert len(records) == 8
    by_iteration: dict[int, list[tuple[float, str, int]]] = {}
    for record in records:
        described = record["target_description"]
        level = record["levels"]["arc_max"]
        assert (described["layout"], described["devices"]) == ("raidz1", 3)
        assert (described["log_size"], described["cache_size"]) == (64 * MiB, 64 * MiB)
        assert described["vdevs"] == "raidz1-0: 3; logs: 1; cache: 1"  # zpool status
        assert described["arc_max"] == int(level.rstrip("M")) * MiB
        assert described["daemon"]["started_by_fslab"] is True
        assert described["arc_source"].startswith("zfs-fuse --max-arc-size")
        assert "zfs-fuse" in record["fs_impl"] and "not kernel OpenZFS" in record["fs_impl"]
        by_iteration.setdefault(record["iteration"], []).append(
            (record["started"], level, described["daemon"]["pid"]))
    for runs in by_iteration.values():
        order = [level for _, level, _ in sorted(runs)]
        assert order in (["32M"] * 2 + ["256M"] * 2, ["256M"] * 2 + ["32M"] * 2), order
        daemons = {level: {pid for _, lvl, pid in runs if lvl == level}
                   for level in ("32M", "256M")}
        assert all(len(pids) == 1 for pids in daemons.values())  # one daemon per size
        assert daemons["32M"] != daemons["256M"]
    pools = pd.read_csv(out / "stats" / "zfs_pools.csv").set_index("target")
    assert set(pools.index) == {"zfs arc_max=32M", "zfs arc_max=256M"}
    assert pools.loc["zfs arc_max=256M", "arc_max"] == 256 * MiB
    assert set(pools["layout"]) == {"raidz1"} and set(pools["devices"]) == {3}
    effects = pd.read_csv(out / "stats" / "effects.csv")
    arc = effects[effects["factor"] == "arc_max"]
    assert set(arc["workload"]) == {"randread", "seqread"}
    assert ((arc["ratio_ci_low"] <= arc["ratio"]) & (arc["ratio"] <= arc["ratio_ci_high"])).all()
    # 4 jobs × 32 MiB of files fit a 256 MiB ARC, not a 32 MiB one: random reads after the
    # page cache is dropped come from the ARC (3.8× here on 2026-12-07)
    assert arc.set_index("workload").loc["randread", "ratio"] > 1.0
    assert "arc_max" in (out / "stats" / "verdicts.txt").read_text()
    assert not leftovers(lab.root) and not running_daemons()


@pytest.mark.privileged
def test_an_arc_size_on_a_daemon_fslab_did_not_start_fails_its_runs_with_the_reason(
        tmp_path: Path, lab):
    """A zfs-fuse someone else started serves every pool with its own ARC: a target that
    sets arc_max cannot have its size there, says so, and the campaign goes on; the
    daemon is left alone (fslab never ends a process it did not start)."""
    requires("fio", "zfs-fuse", "zpool")
    if running_daemons():
        pytest.skip("a zfs-fuse daemon not started by this test is running")
    import subprocess
    import time

    daemon = subprocess.Popen(["zfs-fuse", "--no-daemon"], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and subprocess.run(
                ["zpool", "list", "-H"], capture_output=True).returncode != 0:
            time.sleep(0.1)
        path = tmp_path / "c.toml"
        path.write_text('iterations = 1\nruntime = 1\nrounds = 1\nceiling = false\n'
                        'file_size = "16M"\n[[target]]\nfs = "zfs"\narc_max = "64M"\n'
                        'image_size = "128M"\n[[workload]]\npreset = "basic5"\n'
                        'only = ["randread"]\n')
        out = tmp_path / "r"
        result = api.run(load_campaign(path), out=out, lab=lab)
        runs = api.runs(out)
        assert result.runner.failed == 1 and list(runs["status"]) == ["failed"]
        reason = runs["reason"].iloc[0]
        assert f"zfs-fuse PID {daemon.pid} (not fslab's)" in reason and "arc_max" in reason
        assert daemon.poll() is None  # still running: not fslab's to stop
    finally:
        daemon.terminate()
        daemon.wait(timeout=20)
    assert not leftovers(lab.root) and not running_daemons()
