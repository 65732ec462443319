"""A target's SSD state before measuring (issue 61): `precondition = "fill"` writes the
whole loop image twice and keeps mkfs from discarding it again; "trim" discards it all;
the default does nothing and says so; run.json records which."""

import json
import os
from pathlib import Path

import pytest

from fslab import api
from fslab.core.errors import UserError
from fslab.plan.loading import load_campaign
from fslab.targets import TargetSpec, make_target
from tests.conftest import leftovers, requires

MiB = 1024**2


def image_of(device: str) -> Path:
    name = Path(device).name
    return Path(Path(f"/sys/block/{name}/loop/backing_file").read_text().strip())


@pytest.mark.privileged
@pytest.mark.parametrize(("how", "allocated"), [("fill", True), ("none", False),
                                                ("trim", False)])
def test_a_filled_image_stays_written_and_a_trimmed_or_default_one_sparse(lab, how,
                                                                          allocated):
    requires("mkfs.xfs", "losetup", "fio", "blkdiscard")
    spec = TargetSpec(name=f"p-{how}", fs="xfs", size=320 * MiB,
                      options={} if how == "none" else {"precondition": how})
    target = make_target(spec)
    target.check()
    session = lab.open_session()
    mounted = target.provision(session)
    try:
        image = image_of(mounted.description.to_json()["device"])
        used = os.stat(image).st_blocks * 512
        # filled: every block written (mkfs -K kept it); otherwise mkfs discarded the
        # image back to holes but for its metadata (a few MiB on 320 MiB)
        assert (used >= 0.99 * spec.size) if allocated else (used < 0.25 * spec.size), used
        state = mounted.description.to_json()["precondition"]
        assert state["how"] == how
        if how == "fill":
            assert state["bytes"] == spec.size and "-K" in \
                mounted.description.to_json()["mkfs_command"]
    finally:
        target.teardown(session, mounted)
        session.close()
    assert not leftovers(lab.root)


def test_an_unknown_precondition_is_one_line():
    with pytest.raises(UserError, match="precondition = 'purge': use one of none, fill"):
        make_target(TargetSpec(name="x", fs="ext4", size=64 * MiB,
                               options={"precondition": "purge"}))


@pytest.mark.privileged
def test_precondition_fill_on_an_image_target_runs_and_run_json_records_it(tmp_path, lab):
    requires("mkfs.ext4", "losetup", "fio")
    (tmp_path / "c.toml").write_text(
        'name = "pc"\niterations = 1\nruntime = 1\nimage_size = "128M"\nceiling = false\n'
        '[[target]]\nname = "filled"\nfs = "ext4"\nprecondition = "fill"\n'
        '[[workload]]\npreset = "direct5"\nonly = ["randread"]\n')
    out = tmp_path / "r"
    result = api.run(load_campaign(tmp_path / "c.toml"), out=out, lab=lab)
    assert result.runner.failed == 0
    record = json.loads((out / "runs" / "i001-filled-randread" / "run.json").read_text())
    state = record["target_description"]["precondition"]
    assert state["how"] == "fill" and state["bytes"] == 128 * MiB
    assert 'precondition = "fill"' in (out / "campaign.toml").read_text()
