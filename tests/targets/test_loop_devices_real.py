"""No free loop device (issue 62): the nodes fslab may use limited to ones this test holds
itself ($FSLAB_LOOP_DEVICES; other processes on the machine keep every other node), the
campaign stops in one line naming how many nodes it may use and which are held, with
nothing formatted and nothing left; --resume finishes it once a node is free. A node
another process holds is passed over, never detached."""

import contextlib
import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from fslab.core.errors import Shortage
from fslab.host import loops
from tests.conftest import fslab_cmd, leftovers, requires


@contextlib.contextmanager
def held_nodes(where: Path, count: int) -> Iterator[list[tuple[str, Path]]]:
    """`count` loop devices this test attaches to images of its own (another process's
    nodes, as fslab sees them), detached afterwards: only these, never another's."""
    held: list[tuple[str, Path]] = []
    try:
        for number in range(count):
            image = where / f"other-{number}.img"
            with image.open("wb") as handle:
                handle.truncate(8 * 1024**2)
            node = subprocess.run(["losetup", "--find", "--show", str(image)],
                                  capture_output=True, text=True, check=True).stdout.strip()
            held.append((node, image))
        yield held
    finally:
        for node, image in held:
            if loops.holder(node) == str(image):
                subprocess.run(["losetup", "-d", node], check=False)


@pytest.mark.privileged
def test_no_free_loop_device_stops_in_one_line_and_resume_finishes(tmp_path, lab):
    requires("fio", "mkfs.ext4", "losetup")
    with held_nodes(tmp_path, 2) as held:
        nodes = [node for node, _ in held]
        args = ["run", "--fs", "ext4", "--workloads", "randread", "--iterations", "2",
                "--runtime", "1", "--size", "256M", "--file-size", "16M", "--seed", "4",
                "--rounds", "1", "--no-ceiling", "--out", str(tmp_path / "r"), "--lab",
                str(lab.root)]
        env = {**os.environ, loops.LOOP_DEVICES: ",".join(nodes)}
        stopped = fslab_cmd(*args, env=env)
        assert stopped.returncode == 2, stopped.stdout + stopped.stderr
        assert "Traceback" not in stopped.stderr
        errors = [line for line in stopped.stderr.splitlines() if "error" in line]
        assert len(errors) == 1, stopped.stderr
        line = errors[0]
        assert "no free loop device" in line and "2 nodes allowed" in line, line
        assert all(f"{node} by {image}" in line for node, image in held), line
        assert "losetup -d" in line and "--resume" in line and "nothing was formatted" in line
        # nothing formatted, nothing left, another's nodes untouched
        assert not list((tmp_path / "r" / "runs").glob("*/run.json"))
        assert not leftovers(lab.root) and not list(lab.sessions())
        assert [loops.holder(node) for node in nodes] == [str(image) for _, image in held]
        for _, image in held:
            assert image.read_bytes() == b"\0" * (8 * 1024**2)
        resumed = fslab_cmd(*args, "--resume")  # the limit lifted: any node will do
        assert resumed.returncode == 0, resumed.stderr
        assert "0 of 2 runs done" in resumed.stdout
        records = [json.loads(p.read_text())
                   for p in (tmp_path / "r" / "runs").glob("*/run.json")]
        assert sorted(r["run_id"] for r in records) == ["i001-ext4-randread",
                                                         "i002-ext4-randread"]
        assert all(r["status"] == "ok" for r in records)
        assert [loops.holder(node) for node in nodes] == [str(image) for _, image in held]
    assert not leftovers(lab.root)


@pytest.mark.privileged
def test_a_node_another_process_holds_is_passed_over_not_taken(tmp_path, monkeypatch):
    """The first allowed node is another's (bound before fslab tries it, as when it is
    taken between finding and attaching): the kernel says busy, fslab takes the next,
    and the other's image stays bound to it."""
    requires("losetup")
    mine = tmp_path / "mine.img"
    with mine.open("wb") as handle:
        handle.truncate(8 * 1024**2)
    with held_nodes(tmp_path, 2) as held:
        (other, image), (spare, _) = held
        monkeypatch.setenv(loops.LOOP_DEVICES, f"{other},{spare}")
        subprocess.run(["losetup", "-d", spare], check=True)  # free: fslab may take it
        device = loops.attach(mine, direct_io=True)
        try:
            assert device == spare and loops.holder(device) == str(mine)
            assert loops.holder(other) == str(image)  # never taken from its holder
            (tmp_path / "another.img").write_bytes(b"\0" * 4096)
            with pytest.raises(Shortage, match="2 nodes allowed"):
                loops.attach(tmp_path / "another.img", direct_io=False)  # both held now
        finally:
            if loops.holder(device) == str(mine):
                subprocess.run(["losetup", "-d", device], check=True)
        assert loops.holder(other) == str(image)


@pytest.mark.privileged
def test_an_image_removed_while_its_loop_device_holds_it_is_seen_as_being_released(tmp_path):
    """The lab's room waits for such images (run/lab_space.free_once_released): a loop
    device bound to a file deleted under the lab is found, one under another folder is
    not, and none once it is detached."""
    requires("losetup")
    with held_nodes(tmp_path, 1) as held:
        (node, image), = held
        image.unlink()
        assert loops.releasing(tmp_path) == [node]
        assert loops.releasing(tmp_path / "elsewhere") == []
        subprocess.run(["losetup", "-d", node], check=True)
    assert loops.releasing(tmp_path) == []
