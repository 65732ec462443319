"""fslab's cache drop leaves a target cold: after it, reading a file system's files and
their metadata goes to the device under it (counted by the loop device itself), where the
same reads just before came from memory."""

import os
from pathlib import Path

import pytest

from fslab.host import system
from fslab.host.lab import Lab
from fslab.targets import TargetSpec, make_target
from tests.conftest import requires

MiB = 1024**2
SMALL = 200


def device_reads(device: str) -> tuple[int, int]:
    """(read requests, bytes read) of a block device so far."""
    fields = Path(f"/sys/block/{Path(device).name}/stat").read_text().split()
    return int(fields[0]), int(fields[2]) * 512


def read_everything(root: Path, device: str) -> tuple[int, int]:
    """Read the big file through the page cache, then stat and read each small file:
    (requests, bytes) the device served meanwhile."""
    before = device_reads(device)
    with (root / "big").open("rb") as handle:
        while handle.read(MiB):
            pass
    for index in range(SMALL):
        path = root / "small" / f"f{index}"
        path.stat()
        path.read_bytes()
    after = device_reads(device)
    return after[0] - before[0], after[1] - before[1]


@pytest.mark.privileged
@pytest.mark.parametrize("fs", ["ext4", "xfs", "btrfs"])
def test_after_the_cache_drop_data_and_metadata_come_from_the_device(fs, lab: Lab):
    requires("losetup", f"mkfs.{fs}")
    target = make_target(TargetSpec(name=f"cold-{fs}", fs=fs, size=512 * MiB))
    session = lab.open_session()
    place = target.provision(session)
    try:
        assert place.path is not None
        (place.path / "big").write_bytes(os.urandom(32 * MiB))
        (place.path / "small").mkdir()
        for index in range(SMALL):
            (place.path / "small" / f"f{index}").write_bytes(os.urandom(4096))
        device = place.description.device
        # Warm: reads come from memory (the check can fail). Another test's cache drop
        # (a global one, beside this test under make test's workers) can empty the
        # cache between two passes: a few passes find one that stayed warm.
        for _ in range(5):
            read_everything(place.path, device)
            warm = read_everything(place.path, device)
            if warm[1] < MiB:
                break
        assert warm[1] < MiB, warm
        assert system.sync_and_drop_caches()
        requests, read = read_everything(place.path, device)
        assert read >= 32 * MiB + SMALL * 4096, read  # every byte of data from the device
        assert requests > SMALL, requests  # and metadata besides the small files' data
    finally:
        target.teardown(session, place)
        session.close()
