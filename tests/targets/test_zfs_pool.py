"""A zfs pool as the ZFS server study built it (issue 60 item 1), before anything runs:
its layout, devices, log and cache devices and ARC size as target fields and factors,
refused in one line where they cannot be built, planned apart where pools would share one
ARC, and what a person types for a tuned pool."""

from __future__ import annotations

from pathlib import Path

import pytest

from fslab.core.cell_keys import declared_levels
from fslab.core.errors import UserError
from fslab.plan.loading import resolve
from fslab.plan.order import make_plan
from fslab.plan.schema import CampaignFile, Overrides
from fslab.run.places import apart
from fslab.targets import TargetSpec, make_target
from fslab.targets.zfs_pool import MiB, PoolBuild, pool_build
from fslab.tune.text import pool_commands
from tests.conftest import fslab_here


def test_a_pool_is_built_as_asked_and_as_zpool_takes_it():
    build = pool_build({"layout": "raidz1", "devices": "3", "log_size": "128M",
                        "cache_size": "64M", "arc_max": "256M"}, "zfs", "z")
    assert build == PoolBuild("raidz1", 3, 128 * MiB, 64 * MiB, 256 * MiB)
    assert build.vdevs(["a", "b", "c"], "l", "/dev/loop9") == [
        "raidz1", "a", "b", "c", "log", "l", "cache", "/dev/loop9"]
    assert build.shown() == "raidz1 of 3 images, a 128 MiB log, a 64 MiB cache"
    assert pool_build({}, "zfs", "z") == PoolBuild()  # one image, the daemon's ARC
    assert pool_build({}, "zfs-mirror", "z").vdevs(["a", "b"]) == ["mirror", "a", "b"]
    assert pool_build({"layout": "mirror", "devices": 3}, "zfs", "z").devices == 3
    assert pool_build({"log_size": "0", "cache_size": "none"}, "zfs", "z") == PoolBuild()


@pytest.mark.parametrize(("options", "fs", "words"), [
    ({"layout": "raidz2"}, "zfs", "unknown zfs layout 'raidz2' (known: single, mirror, raidz1)"),
    ({"layout": "raidz1", "devices": 2}, "zfs", "raidz1 needs at least 3 devices, not 2"),
    ({"layout": "mirror", "devices": 1}, "zfs", "mirror needs at least 2 devices"),
    ({"devices": 2}, "zfs", "layout single is one image, not 2"),
    ({"layout": "raidz1"}, "zfs-mirror", "fs = \"zfs-mirror\" is a mirror"),
    ({"arc_max": "8M"}, "zfs", "from 16M to 16384M"),
    ({"arc_max": "20000M"}, "zfs", "from 16M to 16384M"),
    ({"arc_max": "100000K"}, "zfs", "whole MiB"),
    ({"log_size": "32M"}, "zfs", "below zpool's smallest device (64 MiB)"),
    ({"devices": "three"}, "zfs", "whole number"),
])
def test_a_pool_that_cannot_be_built_is_one_line(options, fs, words):
    with pytest.raises(UserError, match=None) as caught:
        pool_build(options, fs, "z")
    assert words in str(caught.value) and "\n" not in str(caught.value)


def campaign_file(tmp_path: Path, target: str, sweep: str = "") -> Path:
    path = tmp_path / "c.toml"
    path.write_text(f'name = "zfs"\niterations = 2\n{sweep}\n[[target]]\nfs = "zfs"\n'
                    f'{target}\n[[workload]]\npreset = "basic5"\nonly = ["randread"]\n')
    return path


@pytest.mark.parametrize(("target", "sweep", "words"), [
    ('layout = "raidz3"', "", "unknown zfs layout 'raidz3'"),
    ('layout = "raidz1"\ndevices = 2', "", "layout raidz1 needs at least 3 devices"),
    ('layout = ["single", "raidz1"]\ndevices = 2', "", "layout single is one image, not 2"),
    ("", '[sweep]\narc_max = ["32M", "8M"]', "arc_max 8M must be whole MiB"),
    ('layout = "raidz1"\noptions = { layout = "mirror" }', "", "layout is given twice"),
])
def test_an_impossible_pool_is_refused_before_anything_is_made(tmp_path, target, sweep,
                                                                words):
    out = fslab_here("run", str(campaign_file(tmp_path, target, sweep)), "--dry-run",
                     "--out", str(tmp_path / "out"))
    assert out.returncode == 2, out.stdout
    assert words in out.stderr and len(out.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_pool_fields_belong_to_zfs_targets(tmp_path):
    path = tmp_path / "c.toml"
    path.write_text('[[target]]\nfs = "ext4"\nlog_size = "128M"\n[[workload]]\npreset = '
                    '"basic5"\n')
    out = fslab_here("run", str(path), "--dry-run")
    assert out.returncode == 2
    assert "log_size is for zfs targets" in out.stderr
    out = fslab_here("run", "--fs", "ext4", "--sweep", "arc_max=32M,256M", "--dry-run")
    assert out.returncode == 2 and "no target of this campaign takes it" in out.stderr


def resolved(tmp_path: Path, target: str, sweep: str = "") -> object:
    path = campaign_file(tmp_path, target, sweep)
    import tomllib

    return resolve(CampaignFile.model_validate(tomllib.loads(path.read_text())), Overrides(),
                   tmp_path)


def test_an_arc_sweep_makes_variants_described_with_their_pool(tmp_path):
    campaign = resolved(tmp_path, 'layout = "raidz1"\ndevices = 3\nlog_size = "64M"\n'
                        'cache_size = "64M"', '[sweep]\narc_max = ["32M", "256M"]')
    plan = make_plan(campaign)
    names = [t.name for t in plan.targets]
    assert names == ["zfs arc_max=32M", "zfs arc_max=256M"]
    described = make_target(plan.targets[1]).describe().to_json()
    assert (described["layout"], described["devices"], described["arc_max"]) == (
        "raidz1", 3, 256 * MiB)
    assert (described["log_size"], described["cache_size"]) == (64 * MiB, 64 * MiB)
    assert described["pool_layout"] == "raidz1 of 3 images, a 64 MiB log, a 64 MiB cache"
    shares = [make_target(t).shares() for t in plan.targets]
    assert shares == [("zfs ARC", "32 MiB"), ("zfs ARC", "256 MiB")]


def test_a_targets_own_list_of_layouts_sweeps_it_and_campaign_toml_keeps_it(tmp_path):
    campaign = resolved(tmp_path, 'layout = ["mirror", "raidz1"]\ndevices = 3\n'
                        'primarycache = ["all", "metadata"]')
    names = sorted(t.name for t in make_plan(campaign).targets)
    assert names == ["zfs layout=mirror zfs.primarycache=all",
                     "zfs layout=mirror zfs.primarycache=metadata",
                     "zfs layout=raidz1 zfs.primarycache=all",
                     "zfs layout=raidz1 zfs.primarycache=metadata"]
    written = campaign.to_dict()
    target = written["target"][0]
    assert target["layout"] == ["mirror", "raidz1"] and target["devices"] == "3"
    assert target["options"]["primarycache"] == ["all", "metadata"]
    assert declared_levels(written)["layout"] == ["mirror", "raidz1"]
    again = CampaignFile.model_validate(written)  # resume reads it back
    assert again.target[0].layout == ["mirror", "raidz1"]


class Run:
    """A run as apart() sees it: its target's name."""

    def __init__(self, target: str) -> None:
        self.target = TargetSpec(target, "null")


def test_runs_at_different_arc_sizes_are_never_in_one_round_and_each_size_runs_once():
    level = {"btrfs": ("", ""), "z32": ("zfs ARC", "32"), "z256": ("zfs ARC", "256")}
    groups = [[Run("z256"), Run("btrfs"), Run("z32")],  # job A, in the plan's order
              [Run("z32"), Run("btrfs"), Run("z256")]]  # job B
    out = apart(groups, lambda run: level[run.target.name])  # type: ignore[arg-type]
    names = [[run.target.name for run in group] for group in out]
    # the first size the plan reaches runs first, for every job; the others wait
    assert names == [["btrfs", "z256"], ["z256"], ["z32"], ["btrfs", "z32"]]
    for group in names:
        assert len({level[name] for name in group} - {("", "")}) <= 1
    plain = [[Run("btrfs"), Run("btrfs")]]
    assert apart(plain, lambda run: ("", "")) == plain  # type: ignore[arg-type]


def test_a_tuned_pool_is_what_a_person_types():
    spec = TargetSpec("zfs", "zfs", options={"layout": "raidz1", "devices": "3",
                                             "log_size": "64M", "arc_max": "256M"})
    lines = pool_commands(spec, ["layout", "arc_max"])
    assert lines[0].startswith("zpool create POOL raidz1 DISK1 DISK2 DISK3 log LOGDEV")
    assert "zfs-fuse --max-arc-size 256" in lines[1]
    assert "echo 268435456 > /sys/module/zfs/parameters/zfs_arc_max" in lines[1]
    assert pool_commands(TargetSpec("e", "ext4"), ["arc_max"]) == []
