"""A failed run's kind comes from what failed (the exception, the tool's name, the errno),
never from a sentence: a refusing mkfs or mount keeps its own words apart."""

import errno

from fslab.core.errors import ToolError
from fslab.core.failures import (
    Failure,
    error_failure,
    failure_of,
    provision_failure,
)


def test_mkfs_or_mount_refusing_a_target_is_refused_with_its_words_anything_else_provision():
    mount = ToolError(["mount", "-t", "ext4", "-o", "data=journal,delalloc", "/dev/loop3",
                       "/mnt"], 32, "mount: wrong fs type\nkernel: EXT4-fs (loop3): can't "
                                    "mount with both data=journal and delalloc")
    kind, said = provision_failure(mount)
    assert kind == Failure.REFUSED and said == str(mount)
    assert "can't mount with both data=journal and delalloc" in said
    mkfs = ToolError(["/sbin/mkfs.xfs", "-l", "size=16m"], 1, "Log size must be at least 64MB.")
    assert provision_failure(mkfs) == (Failure.REFUSED, str(mkfs))
    assert provision_failure(ToolError(["losetup", "--find"], 1, "no free loop device")) == (
        Failure.PROVISION, "")
    assert provision_failure(OSError(errno.EACCES, "denied")) == (Failure.PROVISION, "")


def test_a_run_ending_in_an_exception_is_no_space_a_tool_or_an_error_by_its_type():
    assert error_failure(OSError(errno.ENOSPC, "No space left")) == Failure.NO_SPACE
    assert error_failure(ToolError(["fio"], 1, "fio: bad")) == Failure.TOOL
    assert error_failure(OSError(errno.EIO, "I/O error")) == Failure.ERROR


def test_a_finished_runs_kind_is_empty_when_it_measured_and_implied_by_its_status_else():
    assert failure_of("ok", "") == "" and failure_of("ok", "tool") == ""
    assert failure_of("failed", "timeout") == "timeout"
    assert failure_of("unsupported", "") == "unsupported"
    assert failure_of("failed", "") == "tool"  # a workload that failed without saying why
