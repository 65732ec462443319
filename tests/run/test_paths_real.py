"""Paths the tools can read (issue 62): option values holding ':', ' ', '=', ',' and '/'
(btrfs's `compress=zstd:1`, a mount level of several options, one of them `subvol=/`, an
mkfs level with a space) are measured, every one: the paths fslab makes for them (images, mount
points, fio's directory=) hold none of those characters or escape them as fio asks, and
the configuration is in each run's record."""

import json
import re

import pytest

from fslab import api
from fslab.plan.loading import load_campaign
from tests.conftest import leftovers, requires

CAMPAIGN = """name = "paths"
iterations = 1
runtime = 2
rounds = 2
image_size = "512M"
file_size = "16M"
seed = 6
ceiling = false
[[target]]
fs = "btrfs"
[sweep]
"mount_options.compress" = ["compress=no,commit=30,subvol=/", "compress=zstd:1,noatime"]
"mkfs_options.nodesize" = ["-n 16k", "-n 32k"]
[[workload]]
preset = "direct5"
only = ["randread"]
"""
SAFE = re.compile(r"[A-Za-z0-9_.+/-]+")  # a path's characters no tool reads otherwise


@pytest.mark.privileged
def test_values_with_colons_spaces_commas_and_slashes_are_all_measured(tmp_path, lab):
    requires("fio", "mkfs.btrfs", "losetup")
    (tmp_path / "c.toml").write_text(CAMPAIGN)
    out = tmp_path / "r"
    result = api.run(load_campaign(tmp_path / "c.toml"), out=out, lab=lab)
    records = [json.loads(p.read_text()) for p in out.glob("runs/*/run.json")]
    assert len(records) == 4
    assert all(r["status"] == "ok" for r in records), [
        (r["target"], r["workload"], r["reason"]) for r in records if r["status"] != "ok"]
    assert result.runner.failed == 0
    zstd = [r for r in records
            if r["levels"]["mount_options.compress"] == "compress=zstd:1,noatime"]
    assert len(zstd) == 2
    assert {r["levels"]["mkfs_options.nodesize"] for r in records} == {"-n 16k", "-n 32k"}
    for record in records:
        description = record["target_description"]
        assert "compress=zstd:1" in description["mount_options"] or \
            "compress=zstd:1" not in record["target"]  # the configuration, as mounted
        image = description["loop"]["backing_file"]
        assert SAFE.fullmatch(image), image
        job = (out / "runs" / record["run_id"] / "job.fio").read_text()
        directory = re.search(r"^directory=(.*)$", job, re.M).group(1)
        assert SAFE.fullmatch(directory.replace("\\:", "")), directory
        assert str(lab.root) in directory
    assert not leftovers(lab.root)
