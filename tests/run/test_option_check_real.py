"""The option check before a campaign tells a level the file system does not know (the
campaign stops, naming that level) from a combination it refuses although it takes each
level (the campaign goes on, those cells fail with the kernel's reason, said once)."""

from __future__ import annotations

import pytest

from fslab import api
from fslab.core.errors import UserError
from fslab.host.lab import Lab
from fslab.plan.sweep import target_variants
from fslab.run.option_check import check_swept_options
from fslab.targets import make_target
from tests.conftest import requires


def variants(**factors: list[str]) -> dict:
    """Every combination of the factors' levels on a small ext4, as a sweep makes them."""
    campaign = api.load_campaign(None, api.Overrides(fs=["ext4"], image_size="256M",
                                                     sweeps=factors))
    return {spec.name: make_target(spec) for spec in target_variants(campaign)}


@pytest.mark.privileged
def test_a_combination_ext4_refuses_is_said_once_with_the_kernels_reason(lab: Lab):
    requires("mkfs.ext4", "losetup")
    notes = check_swept_options(variants(**{
        "mount_options.journal": ["data=ordered", "data=journal"],
        "mount_options.alloc": ["nodelalloc", "delalloc"]}), lab)
    (note,) = notes
    assert "data=journal" in note and "delalloc" in note and "not together" in note
    assert "can't mount with both data=journal and delalloc" in note  # the kernel's words


@pytest.mark.privileged
def test_a_level_ext4_does_not_know_is_named_alone_beside_other_factors(lab: Lab):
    requires("mkfs.ext4", "losetup")
    with pytest.raises(UserError) as caught:
        check_swept_options(variants(**{
            "mount_options.atime": ["relatime", "noatime"],
            "mount_options.other": ["nodiscard", "nosuch"]}), lab)
    text = str(caught.value)
    assert "does not take mount_options.other=nosuch (" in text and "\n" not in text


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
