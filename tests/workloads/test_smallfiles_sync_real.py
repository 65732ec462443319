"""smallfiles' primary rate counts the sync after each phase (issue 60 item 2): a file
system whose sync is slow ranks first before the sync and last with it.

The slow sync is real: ext4 on a loop device whose writes are capped for everyone by a
cgroup v1 blkio rule at the root (the kernel's writeback threads flush a sync's dirty
pages; a rule in a cgroup of the writer's binds only what it submits itself: PLATFORM.md).
Beside it, ext4 mounted `sync` pays for every file as it writes it, so its sync after the
phase has nothing left to do.
"""

import contextlib
import os
from pathlib import Path

import pytest

from fslab.host.lab import Session
from fslab.parsers.raw_files import DirFiles
from fslab.parsers.registry import parse_run
from fslab.targets import TargetSpec, make_target
from fslab.workloads.base import Where
from fslab.workloads.smallfiles import SmallFilesWorkload
from tests.conftest import requires

ROOT_RULE = Path("/sys/fs/cgroup/blkio/blkio.throttle.write_bps_device")
CAP = 128 * 1024  # bytes/s: a 4 KiB file's data takes 31 ms to reach the disk
FILES = 200


@contextlib.contextmanager
def writes_capped(device: str):
    """Every write to `device` capped at CAP bytes/s (writeback included), then freed."""
    rdev = os.stat(device).st_rdev
    numbers = f"{os.major(rdev)}:{os.minor(rdev)}"
    ROOT_RULE.write_text(f"{numbers} {CAP}\n")
    try:
        yield
    finally:
        ROOT_RULE.write_text(f"{numbers} 0\n")


def phase_rates(session: Session, spec: TargetSpec, tmp_path: Path, capped: bool):
    target = make_target(spec)
    place = target.provision(session)
    try:
        run_dir = tmp_path / spec.name
        run_dir.mkdir()
        workload = SmallFilesWorkload("smallfiles_4k", FILES, 4096, 50)
        device = place.description.device
        with writes_capped(device) if capped else contextlib.nullcontext():
            assert workload.run(Where(place.path), run_dir).status == "ok"
    finally:
        target.teardown(session, place)
    parsed = parse_run(DirFiles(run_dir))
    return {(m.op, m.metric): m.value for m in parsed.measurements}


@pytest.mark.privileged
def test_a_slow_sync_turns_the_small_file_ranking_around(tmp_path, lab):
    requires("mkfs.ext4", "losetup")
    if not ROOT_RULE.exists():
        pytest.skip("no cgroup v1 blkio controller to cap a loop device's writes")
    session = lab.open_session()
    try:
        slow_sync = phase_rates(session, TargetSpec("ext4-slow-disk", "ext4",
                                                    size=256 * 1024**2), tmp_path, True)
        synchronous = phase_rates(session, TargetSpec("ext4-sync", "ext4",
                                                      size=256 * 1024**2,
                                                      mount_options="sync"), tmp_path, False)
    finally:
        session.close()
    primary = SmallFilesWorkload("x").primary_metric
    assert primary == "ops_per_s"
    write = ("write", "ops_per_s_before_sync")
    # before the sync, the page cache makes the capped disk's ext4 the faster by far ...
    assert slow_sync[write] > 3 * synchronous[write], (slow_sync, synchronous)
    # ... but its sync has FILES × 4 KiB to push through 128 KiB/s: at least 6 s
    assert slow_sync[("write", "sync_seconds")] > FILES * 4096 / CAP
    # and with the sync counted (the primary metric) the order turns round
    assert synchronous[("write", primary)] > 1.5 * slow_sync[("write", primary)]
    for rates in (slow_sync, synchronous):
        assert FILES / rates[("write", primary)] == pytest.approx(
            FILES / rates[write] + rates[("write", "sync_seconds")])
