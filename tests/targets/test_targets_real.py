"""Real targets: mkfs on loop images, mount, describe, tear down, leave nothing."""

import os
import threading
import time

import pytest

from fslab.core.errors import UserError
from fslab.targets import TargetSpec, make_target
from tests.conftest import leftovers, requires

GiB = 1024**3


@pytest.mark.privileged
@pytest.mark.parametrize("fs", ["ext4", "xfs", "btrfs"])
def test_provision_describe_teardown(lab, fs):
    requires(f"mkfs.{fs}", "losetup")
    target = make_target(TargetSpec(name=f"t-{fs}", fs=fs, size=GiB // 2,
                                    mount_options="noatime"))
    target.check()
    session = lab.open_session()
    mounted = target.provision(session)
    try:
        assert os.path.ismount(mounted.path)
        info = mounted.description.to_json()  # as run.json holds it
        assert info["fs"] == fs and info["fs_impl"].startswith("kernel ")
        assert info["image_size"] == GiB // 2
        assert "noatime" in info["mount_options"]
        assert info["device"].startswith("/dev/loop")
        assert info["loop"]["backing_file"].endswith(f"t-{fs}.img")
        assert info["mkfs_version"] not in ("missing", "unknown")
        if fs == "ext4":
            assert "lazy_itable_init=0,lazy_journal_init=0" in info["mkfs_command"]
        if fs == "btrfs":  # its default discard=async would reach the host's disk
            assert "discard" not in info["mount_options"].replace("nodiscard", "")
            assert info["mount_options_added"]["options"] == ["nodiscard"]
            assert "host's disk" in info["mount_options_added"]["why"]
        else:
            assert "mount_options_added" not in info
        (mounted.path / "probe").write_bytes(b"x" * 4096)
        assert 0 < mounted.free_bytes() < GiB // 2
    finally:
        target.teardown(session, mounted)
        session.close()
    assert not leftovers(lab.root)
    assert not any(lab.root.rglob("*.img"))


@pytest.mark.privileged
def test_a_target_that_asks_for_discard_keeps_it(lab):
    requires("mkfs.btrfs", "losetup")
    target = make_target(TargetSpec(name="d", fs="btrfs", size=GiB // 4,
                                    mount_options="discard=async"))
    session = lab.open_session()
    mounted = target.provision(session)
    try:
        assert "discard=async" in mounted.description.mount_options
        assert "mount_options_added" not in mounted.description.details
    finally:
        target.teardown(session, mounted)
        session.close()


@pytest.mark.privileged
def test_failed_mount_releases_the_loop_device(lab):
    requires("mkfs.ext4", "losetup")
    target = make_target(TargetSpec(name="bad", fs="ext4", size=GiB // 4,
                                    mount_options="no_such_option_xyz"))
    session = lab.open_session()
    with pytest.raises(Exception, match="mount"):
        target.provision(session)
    session.close()
    assert not leftovers(lab.root)


@pytest.mark.privileged
def test_a_loop_device_held_open_is_released_once_its_holder_lets_go(lab):
    """losetup -d of a device someone holds (udev probing it) only marks it to go: the
    release waits for it rather than leave a device on a deleted image."""
    requires("losetup")
    from fslab.core.run_parts import TargetDescription
    from fslab.targets.base import Mounted
    from fslab.targets.common import attach_loop, make_image

    session = lab.open_session()
    mounted = Mounted(path=lab.root, description=TargetDescription())
    device = attach_loop(session, mounted, make_image(session, mounted, "held", 1 << 20))
    holder = os.open(device, os.O_RDONLY)
    threading.Timer(0.5, os.close, (holder,)).start()
    started = time.monotonic()
    session.close()
    assert time.monotonic() - started >= 0.4  # it waited for the holder
    assert not leftovers(lab.root)


def test_dir_target_works_in_a_private_subdirectory(lab, tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    (data / "user-file").write_text("mine")
    target = make_target(TargetSpec(name="d", fs="dir", path=str(data)))
    target.check()
    session = lab.open_session()
    mounted = target.provision(session)
    assert mounted.path.parent == data and mounted.path.name.startswith(".fslab-work-")
    (mounted.path / "scratch").write_text("x")
    assert mounted.description.fs not in ("", "unknown")
    target.teardown(session, mounted)
    session.close()
    assert [p.name for p in data.iterdir()] == ["user-file"]


def test_dir_target_must_exist():
    with pytest.raises(UserError, match="not an existing directory"):
        make_target(TargetSpec(name="d", fs="dir", path="/no/such/dir")).check()


@pytest.mark.privileged
def test_a_new_loop_image_file_system_is_one_profile(lab, tmp_path):
    """ext4 without a journal, added by one profile in this test alone: a campaign names
    it, fslab makes, measures and describes it, and the importer knows its name."""
    requires("mkfs.ext4", "losetup", "fio")
    from fslab import api
    from fslab.ingest.paths import known_fs
    from fslab.plan.loading import load_campaign
    from fslab.targets import REGISTRY, known_kinds, register_profile
    from fslab.targets.profiles import PROFILES, FsProfile

    register_profile(FsProfile(
        "ext4nj", "ext4 without a journal (a test's profile)", "mkfs.ext4",
        ("-F", "-q", "-O", "^has_journal"), 16 * 1024**2, "e2fsprogs", mount_type="ext4",
        free_space="e2freefrag"))
    try:
        assert "ext4nj" in known_kinds() and "ext4nj" in known_fs()
        (tmp_path / "c.toml").write_text(
            'iterations = 1\nruntime = 1\nfile_size = "8M"\nceiling = false\n'
            '[[target]]\nfs = "ext4nj"\nimage_size = "256M"\n'
            '[[workload]]\npreset = "direct5"\nonly = ["randread"]\n')
        result = api.run(load_campaign(tmp_path / "c.toml"), out=tmp_path / "r", lab=lab)
        assert result.runner.ok == 1 and result.runner.failed == 0
        described = result.results.environment().targets["ext4nj"].to_json()
        assert "^has_journal" in described["mkfs_command"]
        assert api.load(tmp_path / "r")["fs"].unique().tolist() == ["ext4nj"]
    finally:
        del PROFILES["ext4nj"], REGISTRY["ext4nj"]


@pytest.mark.privileged
def test_a_new_fuse_file_system_is_one_profile_of_the_same_type(lab, tmp_path):
    """NTFS with 64 KiB clusters through ntfs-3g, added as one profile (driver "fuse") in
    this test alone: the FUSE plug-in makes, mounts, measures and describes it, with its
    tools' packages named from the profile."""
    requires("mkntfs", "ntfs-3g", "losetup", "fio")
    from fslab import api
    from fslab.host import system
    from fslab.plan.loading import load_campaign
    from fslab.plan.schema import Overrides
    from fslab.targets import REGISTRY, register_profile
    from fslab.targets.profiles import FUSE, PROFILES, FsProfile

    register_profile(FsProfile(
        "ntfs64k", "NTFS, 64 KiB clusters, via ntfs-3g (a test's profile)", "mkntfs",
        ("-F", "-Q", "-q", "-c", "65536"), 2 * 1024**2, "ntfs-3g", driver=FUSE,
        mount_program="ntfs-3g"))
    try:
        assert REGISTRY["ntfs64k"][0].endswith(":FuseFsTarget")
        assert system.TOOL_PACKAGES["ntfs-3g"] == "ntfs-3g"
        campaign = load_campaign(None, Overrides(
            fs=["ntfs64k"], workloads=["randwrite"], iterations=1, runtime="1",
            image_size="256M", file_size="16M", seed=1, rounds=1, ceiling=False))
        result = api.run(campaign, out=tmp_path / "r", lab=lab)
        assert (result.runner.ok, result.runner.failed) == (1, 0)
        described = result.results.environment().targets["ntfs64k"].to_json()
        assert described["mkfs_command"][-3:] == ["-c", "65536", "<image>"]
        assert "(FUSE)" in api.load(tmp_path / "r")["fs_impl"].iloc[0]
        assert not leftovers(lab.root)
    finally:
        del PROFILES["ntfs64k"], REGISTRY["ntfs64k"]
    with pytest.raises(ValueError, match="driver must be one of kernel, fuse"):
        register_profile(FsProfile("odd", "odd", "mkfs.odd", (), 1, "odd", driver="ring0"))
