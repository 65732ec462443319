"""A tune's configuration is one type from the space to tuned.toml (issue 63): the cell a
stage measures it as reads back to the same configuration, and its target and job
options are what tuned.toml and the typed lines set."""

from __future__ import annotations

from fslab.core.cell_keys import CellKey
from fslab.targets import TargetSpec
from fslab.tune.space import Configuration, space_of


def test_every_configuration_reads_back_from_the_cell_it_is_measured_as():
    space = space_of({"mount_options.atime": ["relatime", "noatime"],
                      "mkfs_options.inode": ["-I 256", "-I 128"], "iodepth": ["1", "4"]})
    seen = set()
    for config in space.every():
        chosen = Configuration(space, config)
        cell = chosen.cell("ext4", "randread")
        assert isinstance(cell, CellKey) and (cell.target, cell.job) == ("ext4", "randread")
        assert Configuration.of_row(space, dict(cell.levels)) == chosen
        seen.add(tuple(cell.levels))
    assert len(seen) == space.size == 8
    # a row without a factor's column is at its reference; a level outside the space: none
    assert Configuration.of_row(space, {"iodepth": "4"}) == Configuration(space, (0, 0, 1))
    assert Configuration.of_row(space, {"iodepth": "16"}) is None


def test_a_configuration_sets_up_its_target_and_the_jobs_options():
    space = space_of({"mount_options.atime": ["relatime", "noatime"], "iodepth": ["1", "4"]})
    chosen = Configuration(space, (1, 1))
    spec = chosen.target(TargetSpec(name="ext4", fs="ext4", size=1 << 30))
    assert "noatime" in spec.mount_options and "relatime" not in spec.mount_options
    assert chosen.job_options() == {"iodepth": "4"}
    assert chosen.levels == {"mount_options.atime": "noatime", "iodepth": "4"}
    reference = Configuration(space, space.reference)
    assert reference.job_options() == {"iodepth": "1"}
