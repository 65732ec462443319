"""An image fslab removed is waited for until the disk gives its blocks back (host/
freeing.py): here a file removed while a descriptor still holds it, as the kernel holds
an image after its loop device stopped naming it. The lab's room read at once would be
short; read once the holder lets go, it has the file's blocks again."""

from __future__ import annotations

import os
import shutil
import threading
import time

from fslab.host import freeing
from fslab.run.lab_space import free_once_released

MiB = 1024 * 1024


def held_file(tmp_path, size=8 * MiB):
    path = tmp_path / "image"
    path.write_bytes(b"\1" * size)  # written, not sparse: its blocks are taken
    return path, os.open(path, os.O_RDONLY)


def test_a_removed_file_still_held_is_on_its_way_until_let_go(tmp_path):
    path, fd = held_file(tmp_path)
    try:
        freeing.remove(path)
        assert not path.exists()
        assert freeing.on_its_way(tmp_path)
        assert not freeing.on_its_way(tmp_path / "elsewhere")  # only under the lab named
    finally:
        os.close(fd)
    assert not freeing.on_its_way(tmp_path)
    freeing.remove(tmp_path / "never-there")  # nothing to remove: nothing remembered
    assert not freeing.on_its_way(tmp_path)


def test_the_labs_room_is_read_once_the_removed_image_is_given_back(tmp_path):
    path, fd = held_file(tmp_path)
    freeing.remove(path)
    free = shutil.disk_usage(tmp_path).free
    need = free + 4 * MiB  # fits only with the removed file's blocks back
    letting_go = threading.Timer(0.5, os.close, (fd,))
    letting_go.start()
    started = time.monotonic()
    try:
        assert free_once_released(tmp_path, need) >= need
    finally:
        letting_go.join()
    assert time.monotonic() - started >= 0.4  # it waited for the holder, not less
