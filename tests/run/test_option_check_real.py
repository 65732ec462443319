"""The option check before a campaign blames a refusal where it belongs (issue 62): a
level the file system refuses alone is named, with the kernel's words, and every
configuration holding it dropped; a combination it refuses although it takes each level
is "this combination"; the campaign goes on with the rest, and stops in one line only
when no configuration of a target mounts."""

from __future__ import annotations

import pytest

from fslab import api
from fslab.core.errors import UserError
from fslab.host.lab import Lab
from fslab.plan.sweep import target_variants
from fslab.run.option_check import Checked, check_swept_options
from fslab.targets import make_target
from tests.conftest import requires


def checked(lab: Lab, fs: str = "ext4", size: str = "256M", **factors: list[str]
            ) -> Checked:
    """The check of every combination of the factors' levels, as a sweep makes them."""
    campaign = api.load_campaign(None, api.Overrides(fs=[fs], image_size=size,
                                                     sweeps=factors))
    targets = {spec.name: make_target(spec) for spec in target_variants(campaign)}
    return check_swept_options(targets, lab, {t.name: t for t in campaign.targets})


@pytest.mark.privileged
def test_a_combination_ext4_refuses_is_said_once_with_the_kernels_reason(lab: Lab):
    requires("mkfs.ext4", "losetup")
    found = checked(lab, **{"mount_options.journal": ["data=ordered", "data=journal"],
                       "mount_options.alloc": ["nodelalloc", "delalloc"]})
    (note,) = found.notes
    assert "data=journal" in note and "delalloc" in note and "not together" in note
    assert "can't mount with both data=journal and delalloc" in note  # the kernel's words
    (name, why), = found.refused.items()
    assert "data=journal" in name and "=delalloc" in name
    assert why.reason.startswith("ext4 refuses this combination") and "\n" not in why.reason


@pytest.mark.privileged
def test_a_level_ext4_does_not_know_is_named_and_dropped_and_the_rest_goes_on(lab: Lab):
    requires("mkfs.ext4", "losetup")
    found = checked(lab, **{"mount_options.atime": ["relatime", "noatime"],
                       "mount_options.other": ["nodiscard", "nosuch"]})
    assert len(found.refused) == 2 and all("other=nosuch" in n for n in found.refused)
    for why in found.refused.values():
        assert why.reason.startswith("ext4 refuses mount_options.other=nosuch (")
        assert "\n" not in why.reason
    (note,) = found.notes
    assert "mount_options.other=nosuch" in note and "the 2 configurations" in note


@pytest.mark.privileged
def test_btrfs_space_cache_v1_is_blamed_not_compress(lab: Lab):
    """Issue 62: compress=zstd:1 beside space_cache=v1 was refused naming compress; the
    kernel refuses space_cache=v1 (a free-space tree cannot be turned off), alone."""
    requires("mkfs.btrfs", "losetup")
    found = checked(lab, "btrfs", "512M", **{
        "mount_options.compress": ["compress=no", "compress=zstd:1"],
        "mount_options.space_cache": ["space_cache=v2", "space_cache=v1"]})
    assert sorted(found.refused) == sorted(n for n in found.refused if "=space_cache=v1" in n)
    assert len(found.refused) == 2
    for why in found.refused.values():
        assert why.reason.startswith("btrfs refuses mount_options.space_cache=space_cache=v1")
        assert "compress" not in why.reason
    (note,) = found.notes
    assert "space_cache=v1" in note and "compress" not in note


@pytest.mark.privileged
def test_no_configuration_that_mounts_stops_in_one_line(lab: Lab):
    requires("mkfs.ext4", "losetup")
    with pytest.raises(UserError) as caught:
        checked(lab, **{"mount_options.other": ["nosuch", "nosuch2"]})
    text = str(caught.value)
    assert "no configuration mounts" in text and "nosuch2" in text and "\n" not in text


@pytest.mark.privileged
def test_a_run_on_a_target_the_kernel_refuses_fails_as_refused_with_the_kernels_words(
        lab: Lab, tmp_path):
    """The kind is a field and the kernel's line is kept apart (tool_said): a reader shows
    it without taking the reason apart."""
    requires("mkfs.ext4", "losetup", "fio")
    (tmp_path / "c.toml").write_text(
        'name = "refused"\niterations = 1\nruntime = 1\nimage_size = "256M"\n'
        'file_size = "8M"\nseed = 3\nceiling = false\n'
        '[[target]]\nfs = "ext4"\nmount_options = "data=journal,delalloc"\n'
        '[[workload]]\npreset = "direct5"\nonly = ["randread"]\n')
    result = api.run(api.load_campaign(tmp_path / "c.toml", api.Overrides()),
                     out=tmp_path / "out", lab=lab)
    runs = api.runs(tmp_path / "out")
    assert result.runner.failed == 1 and runs["failure"].tolist() == ["refused"]
    said = runs["tool_said"].iloc[0]
    assert said.startswith("mount exited with ")
    assert "can't mount with both data=journal and delalloc" in said
    assert said in runs["reason"].iloc[0]  # the reason, for people, still says it all
