"""A real block device is formatted only when confirmed, unmounted and blank."""

import subprocess

import pytest

from fslab.core.errors import UserError
from fslab.targets import TargetSpec, make_target
from fslab.targets.blockdev import check_block_device
from tests.conftest import requires

MiB = 1024**2


@pytest.fixture
def loop_device(tmp_path):
    """A loop device made by the test itself, standing in for a real disk."""
    requires("losetup", "mkfs.ext4", "blkid")
    image = tmp_path / "disk.img"
    with image.open("wb") as handle:
        handle.truncate(64 * MiB)
    device = subprocess.run(["losetup", "--find", "--show", str(image)], check=True,
                            capture_output=True, text=True).stdout.strip()
    mountpoint = tmp_path / "mnt"
    mountpoint.mkdir()
    yield device, mountpoint
    subprocess.run(["umount", str(mountpoint)], capture_output=True)
    subprocess.run(["losetup", "-d", device], check=True)


@pytest.mark.privileged
def test_unconfirmed_device_is_refused(loop_device):
    device, _ = loop_device
    with pytest.raises(UserError, match=f"--confirm-device {device}"):
        check_block_device(device, confirmed=False)


@pytest.mark.privileged
def test_blank_confirmed_device_is_accepted(loop_device):
    device, _ = loop_device
    check_block_device(device, confirmed=True)


@pytest.mark.privileged
def test_device_with_signature_is_refused_unless_forced(loop_device):
    device, _ = loop_device
    subprocess.run(["mkfs.ext4", "-q", "-F", device], check=True)
    with pytest.raises(UserError, match="ext4 file-system signature"):
        check_block_device(device, confirmed=True)
    check_block_device(device, confirmed=True, force_signature=True)


@pytest.mark.privileged
def test_mounted_device_is_refused_even_when_forced(loop_device):
    device, mountpoint = loop_device
    subprocess.run(["mkfs.ext4", "-q", "-F", device], check=True)
    subprocess.run(["mount", device, str(mountpoint)], check=True)
    with pytest.raises(UserError, match="it is mounted at"):
        check_block_device(device, confirmed=True, force_signature=True)
    target = make_target(TargetSpec(name="disk", fs="ext4", device=device),
                         confirmed_devices=frozenset({device}), force_device=True)
    with pytest.raises(UserError, match="mounted"):
        target.check()


def test_a_regular_file_is_not_a_block_device(tmp_path):
    path = tmp_path / "file"
    path.write_text("x")
    with pytest.raises(UserError, match="not a block device"):
        check_block_device(str(path), confirmed=True)
