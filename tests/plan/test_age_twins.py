"""The fresh twin inside the age sweep, as planned: an aged level gets a twin when a
workload reads the aged tree; that workload runs on aged levels and their twins, the
others on fresh and aged levels; a workload that reads a tree no target will hold is
refused in one line before anything is formatted; fstrim is a factor of the targets."""

from __future__ import annotations

from pathlib import Path

import pytest

from fslab.core.errors import UserError
from fslab.plan.loading import resolve
from fslab.plan.order import make_plan
from fslab.plan.preflight import prepare
from fslab.plan.schema import CampaignFile, Overrides
from fslab.run.aging_places import fstrim_factor, partner_name, twin_of


def plan_of(workloads, levels=("fresh", "thesis-80", "thesis-99"), **extra):
    parsed = CampaignFile.model_validate({
        "name": "twins", "iterations": 2, "runtime": 1, "seed": 1, "image_size": "512M",
        "ceiling": False, "sweep": {"age": list(levels), **extra.pop("sweep", {})},
        "target": [{"fs": "ext4"}, {"fs": "xfs"}], "workload": workloads, **extra})
    return make_plan(resolve(parsed, Overrides(), Path.cwd()))


def cells(plan) -> set[tuple[str, str]]:
    return {(run.target.name, run.workload.name) for run in plan.iteration(1)}


def test_a_workload_that_reads_the_tree_runs_on_aged_levels_and_their_twins():
    plan = plan_of([{"preset": "scan"}, {"preset": "aged", "only": ["aged"]}])
    names = [t.name for t in plan.targets]
    assert names == ["ext4 age=fresh", "ext4 age=thesis-80", "ext4 age=thesis-99",
                     "ext4 age=twin-thesis-80", "ext4 age=twin-thesis-99",
                     "xfs age=fresh", "xfs age=thesis-80", "xfs age=thesis-99",
                     "xfs age=twin-thesis-80", "xfs age=twin-thesis-99"]
    ran = cells(plan)
    for fs in ("ext4", "xfs"):
        assert {w for t, w in ran if t == f"{fs} age=fresh"} == {"aged"}
        assert {w for t, w in ran if t == f"{fs} age=twin-thesis-99"} == {"scan"}
        assert {w for t, w in ran if t == f"{fs} age=thesis-80"} == {"aged", "scan"}
    assert len(ran) == 2 * (1 + 2 + 2 + 2) and len(plan.cells) == len(ran)
    twin = next(t for t in plan.targets if t.name == "xfs age=twin-thesis-80")
    aged = next(t for t in plan.targets if t.name == "xfs age=thesis-80")
    assert twin_of(twin) == "thesis-80" and twin_of(aged) == ""
    assert partner_name(twin) == aged.name and partner_name(aged) == twin.name
    assert (twin.fs, twin.size, twin.mkfs_options, twin.mount_options) == (
        aged.fs, aged.size, aged.mkfs_options, aged.mount_options)


def test_without_a_tree_workload_or_fresh_there_is_no_twin():
    assert not [t for t in plan_of([{"preset": "aged", "only": ["aged"]}]).targets
                if "twin" in t.name]
    plan = plan_of([{"preset": "scan"}], levels=("thesis-80", "thesis-99"))
    assert [t.name for t in plan.targets if t.base == "ext4"] == [
        "ext4 age=thesis-80", "ext4 age=thesis-99"]


def test_a_tree_workload_with_no_tree_is_refused_in_one_line():
    parsed = CampaignFile.model_validate({
        "name": "no-tree", "iterations": 1, "image_size": "512M", "ceiling": False,
        "target": [{"fs": "ext4"}], "workload": [{"preset": "scan"}]})
    with pytest.raises(UserError) as caught:
        prepare(resolve(parsed, Overrides(), Path.cwd()))
    said = str(caught.value)
    assert "workload scan reads the aged tree, but target ext4 is a fresh file system" \
        in said and "sweep age = " in said and "\n" not in said


def test_a_campaign_cannot_name_a_twin_level():
    with pytest.raises(UserError) as caught:
        plan_of([{"preset": "scan"}], levels=("fresh", "twin-thesis-80"))
    assert "is the fresh twin fslab makes of thesis-80" in str(caught.value)


def test_fstrim_is_a_factor_of_the_targets():
    plan = plan_of([{"preset": "aged", "only": ["aged"]}], levels=("fresh", "thesis-99"),
                   sweep={"fstrim": [True, False]})
    found = {t.name: fstrim_factor(t) for t in plan.targets if t.base == "xfs"}
    assert found == {"xfs age=fresh fstrim=1": True, "xfs age=fresh fstrim=0": False,
                     "xfs age=thesis-99 fstrim=1": True, "xfs age=thesis-99 fstrim=0": False}
    with pytest.raises(UserError) as caught:
        plan_of([{"preset": "aged", "only": ["aged"]}], sweep={"fstrim": ["maybe", "no"]})
    assert "neither true nor false" in str(caught.value)


def test_the_fstrim_factor_overrides_the_levels_trims():
    from fslab.aging.levels import level_config, parameters, with_fstrim
    from fslab.workloads.aging_levels import LEVELS

    level = LEVELS["thesis-99"]
    config = level_config(level, 512 * 1024**2, seed=1)
    assert config.fstrim_every == config.probe_every
    off = with_fstrim(config, False)
    assert off.fstrim_every is None and off.fstrim_seconds is None
    assert parameters(level, off, False)["fstrim_at_probes"]["source"] == "campaign"
    assert with_fstrim(config, None) is config
    mix = level_config(LEVELS["mix"], 512 * 1024**2, seed=1)
    assert mix.fstrim_every is None and with_fstrim(mix, True).fstrim_every == \
        mix.probe_every


def test_the_command_line_refuses_a_tree_workload_without_a_tree(tmp_path):
    from tests.cli.test_cli import assert_one_line_error
    from tests.conftest import fslab_here

    assert_one_line_error(fslab_here("run", "--fs", "ext4", "--preset", "scan", "--out",
                                     str(tmp_path / "out"), "--lab", str(tmp_path / "lab")),
                          "workload scan reads the aged tree")
    assert not (tmp_path / "out").exists()
