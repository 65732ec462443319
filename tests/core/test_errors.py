"""A failed tool is named in one line that says why: the reason, not its usage text."""

from fslab.core.errors import ToolError
from tests.conftest import REPO

FIXTURES = REPO / "tests" / "fixtures" / "tools"


def test_a_tool_that_prints_its_usage_after_the_reason_is_named_by_the_reason():
    # captured: mkfs.xfs 6.1 -l size=16m on a 1 GiB image
    stderr = (FIXTURES / "mkfs.xfs-log-too-small.stderr").read_text()
    message = str(ToolError(["mkfs.xfs", "-l", "size=16m"], 1, stderr))
    assert message == "mkfs.xfs exited with 1: Log size must be at least 64MB."


def test_otherwise_its_last_lines_and_never_an_empty_reason():
    said = "mount: /mnt: wrong fs type, bad option\n       dmesg(1) may have more information\n"
    assert str(ToolError(["mount"], 32, said)) == (
        "mount exited with 32: mount: /mnt: wrong fs type, bad option "
        "dmesg(1) may have more information")
    assert str(ToolError(["tool"], 1, "usage: tool [-h]\n")).endswith("usage: tool [-h]")
    assert str(ToolError(["tool"], 1, "  \n")).endswith("no output")
