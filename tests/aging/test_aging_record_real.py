"""A campaign's aged place is summarised from the aging in memory (aging/per_place.py),
not by parsing the files it just wrote: what it hands on is what the parse stage reads
from those files (import, reparse), the record and the figures alike."""

from __future__ import annotations

import json

import pytest

from fslab.aging.per_place import age_place
from fslab.parsers.aging_kind import AGING, recorded
from fslab.parsers.raw_files import DirFiles
from fslab.targets import TargetSpec, make_target
from fslab.workloads.aging_levels import campaign_level
from tests.conftest import requires
from tests.floats import close

MiB = 1024**2
# thesis-80's settings at 5 % of the capacity: reached in a few hundred operations
TINY = {"utilization": 0.05, "low_water": 0.04, "ops_per_gib": 6_000, "probes": 3}


@pytest.mark.privileged
def test_the_record_handed_on_is_the_one_its_files_hold(tmp_path, lab):
    requires("mkfs.ext4", "losetup")
    spec = TargetSpec(name="a", fs="ext4", size=128 * MiB)
    target = make_target(spec)
    session = lab.open_session()
    place = target.provision(session)
    try:
        aged = age_place(place, campaign_level("thesis-80", TINY), spec.size, 4,
                         tmp_path / "aged")
    finally:
        target.teardown(session, place)
        session.close()
    record = aged.record
    assert record.ops_done > 0 and record.last_fragmentation is not None
    assert record.parameters and record.target.fs == "ext4"
    files = DirFiles(tmp_path / "aged")
    assert close(recorded(files), record)  # aging.json: the record handed on
    parsed = AGING.parse(files).metadata["aging"]
    assert close(parsed, dict(aged.figures))  # the figures, without parsing them
    assert len(aged.figures["free_space"]) >= 2  # the probes are in them
    probes = json.loads((tmp_path / "aged" / "fragmentation.json").read_text())
    assert close(probes[-1], record.last_fragmentation)
    described = aged.to_json()
    assert described["ops"] == record.ops_done and described["level"] == "thesis-80"
    assert described["stopped_by"] == record.stopped_by and not aged.short
    text = (tmp_path / "aged" / "aging.json").read_text()
    again = json.dumps(recorded(files).to_json(), indent=2, default=str) + "\n"
    assert again == text  # aging.json read and written again: the same file
