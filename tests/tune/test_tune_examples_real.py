"""The tune examples (examples/tune-*.toml) make their file systems: every combination of
their mkfs options at the example's own size (mkfs levels interact with each other and
with the size: an XFS log must fit in one allocation group), and every mount level once
through the option check a tune runs first. A shipped example that mkfs refuses is a user's
first tune ending in an error."""

from __future__ import annotations

import dataclasses
import itertools

import pytest

from fslab import api
from fslab.host.lab import Lab
from fslab.plan.target_factors import with_level
from fslab.run.option_check import check_swept_options
from fslab.targets import make_target
from tests.conftest import REPO, requires

EXAMPLES = sorted(REPO.glob("examples/tune-*.toml"))


@pytest.mark.privileged
@pytest.mark.parametrize("example", EXAMPLES, ids=lambda path: path.stem)
def test_a_tune_example_makes_every_file_system_it_asks_for(example, lab: Lab):
    campaign = api.load_campaign(example, api.Overrides())
    (spec,) = campaign.targets
    requires(f"mkfs.{spec.fs}", "losetup")
    mkfs = {name: levels for name, levels in campaign.tune.items()
            if isinstance(levels, list) and name.startswith("mkfs_options.")}
    mount = {name: levels for name, levels in campaign.tune.items()
             if isinstance(levels, list) and name.startswith("mount_options.")}
    assert mkfs and mount, campaign.tune
    session = lab.open_session()
    try:
        for number, combination in enumerate(itertools.product(*mkfs.values())):
            variant = spec
            for name, level in zip(mkfs, combination, strict=True):
                variant = with_level(variant, name, level)
            target = make_target(dataclasses.replace(variant, name=f"combination-{number}"))
            mounted = target.provision(session)  # mkfs and mount: a ToolError fails here
            target.teardown(session, mounted)
    finally:
        session.close()
    variants = {}
    for name, levels in mount.items():
        for level in levels:
            variant = with_level(spec, name, level)
            variants[f"{name}={level}"] = make_target(variant)
    checked = check_swept_options(variants, lab, {spec.name: spec})
    assert checked.notes == () and checked.refused == {}  # one level each: no combination
