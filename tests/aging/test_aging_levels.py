"""Aging levels: the thesis's values are the thesis's (each value tagged study is its own,
with the place), a level scales to the file system it ages, every parameter of an aging
is listed with its source, and a short aging says why."""

from __future__ import annotations

import dataclasses
import json

import pytest

from fslab.aging.config import AgingConfig
from fslab.aging.flags import AgingFlags, aging_request
from fslab.aging.levels import level_config, parameters
from fslab.aging.per_place import NOT_REACHED, OUT_OF_SPACE, reached
from fslab.core.aging_record import AgingRecord
from fslab.core.errors import UserError
from fslab.targets import TargetSpec
from fslab.workloads.aging_levels import LEVELS, campaign_level
from fslab.workloads.provenance import STUDY

GiB = 1024**3
# What the thesis itself says (Petrovič 2017; the section beside each): a value a level
# tags "study" must be one of these.
THESIS = {
    "recipe": "mix",  # 5.1: fs-drift ages the file system
    "file_choice": "gaussian",  # 4.4, 6.1
    "center": 0.0,  # 4.4: "the center at index 0"
    "sizes": "lognormal",  # 4.4.1
    "utilization": {"thesis-80": 0.8, "thesis-99": 0.99},  # 7.4
    "files_per_gib": 10_000,  # 5.1: files × mean size above the space (mean ~212 KB)
    "probes": 20,  # 5.3: probes at the worker's pauses (the count is fslab's, said so)
    "fstrim_at_probes": True,  # 5.3, 7.7
}


@pytest.mark.parametrize("name", ["thesis-80", "thesis-99"])
def test_every_value_tagged_study_is_the_thesiss(name):
    level = LEVELS[name]
    tagged = {key for key, param in level.settings.items() if param.source.kind == STUDY}
    assert tagged == set(THESIS)
    for key in tagged:
        expected = THESIS[key]
        expected = expected[name] if isinstance(expected, dict) else expected
        assert level.settings[key].value == expected, key
        assert level.settings[key].source.where.startswith("section"), key
    assert level.study == "aging-thesis" and level.cannot


def test_a_level_scales_to_the_file_system_and_lists_every_parameter():
    level = LEVELS["thesis-80"]
    config = level_config(level, GiB // 2, seed=7)
    assert (config.ops, config.max_files, config.probe_every, config.fstrim_every) == (
        50_000, 5_000, 2_500, 2_500)
    assert (config.utilization, config.low_water, config.seed) == (0.8, 0.77, 7)
    listed = parameters(level, config)
    assert set(listed) >= {f.name for f in dataclasses.fields(AgingConfig)} - {
        "ops", "max_files", "probe_every", "fstrim_every"}
    assert listed["ops_per_gib"]["here"] == "ops = 50000"
    assert listed["utilization"] == {"value": 0.8, "source": "study", "study": "aging-thesis",
                                     "cite": listed["utilization"]["cite"],
                                     "where": "section 7.4: medium file system utilisation "
                                              "(80%)"}
    assert listed["io_size"]["source"] == "fslab's choice"
    json.dumps(listed)  # aging.json takes it as it is


def test_the_campaign_changes_a_level_and_says_so():
    level = campaign_level("thesis-99", {"ops_per_gib": 20_000})
    assert level.settings["ops_per_gib"].source.kind == "campaign"
    assert level.settings["utilization"].value == 0.99
    own = campaign_level("churn", {"recipe": "mix", "utilization": 0.5, "ops": 100})
    assert own.values()["recipe"] == "mix" and own.study is None
    with pytest.raises(UserError, match="give it a stop"):
        level_config(campaign_level("endless", {"recipe": "mix"}), GiB, 1)
    with pytest.raises(UserError, match="fresh is no aging"):
        campaign_level("fresh", {"ops": 1})


def test_as_published_takes_the_thesiss_settings_and_the_flags_over_them():
    spec = TargetSpec(name="ext4", fs="ext4", size=GiB)
    request = aging_request(AgingFlags(as_published=True), spec, None)
    assert request.config.utilization == 0.8 and request.config.file_choice == "gaussian"
    assert request.image == "metadata" and request.parameters is not None
    assert request.parameters["image"]["source"] == "study"
    assert "lazy_itable_init=0" in request.parameters["mkfs_options"]["value"]
    high = aging_request(AgingFlags(as_published=True, utilization=0.99, ops=500), spec,
                         "sparse")
    assert (high.config.utilization, high.config.ops, high.image) == (0.99, 500, "sparse")
    assert high.parameters is not None and high.parameters["ops"]["source"] == "campaign"
    with pytest.raises(UserError) as caught:
        aging_request(AgingFlags(as_published=True, recipe="mix"), spec, None)
    assert "\n" not in str(caught.value)


def test_a_short_aging_says_why():
    config = AgingConfig(utilization=0.99)
    full = AgingRecord(used_max=0.982, deleted_for_space=0, out_of_space=30,
                       stopped_by="ops")
    assert reached(full, config)[0] == OUT_OF_SPACE
    assert ("cannot reach its target of 99% of the space root can write: out of space at "
            "98.2%") in reached(full, config)[1]
    assert reached(dataclasses.replace(full, out_of_space=0), config)[0] == NOT_REACHED
    within = dataclasses.replace(full, used_max=0.988)  # within half a point
    assert reached(within, config) == ("", "")
    assert reached(dataclasses.replace(full, deleted_for_space=3), config) == ("", "")
    assert reached(full, AgingConfig()) == ("", "")  # no utilisation to reach
    ends = AgingConfig(utilization=0.99, finish_full=True)  # judged where it ended
    assert reached(dataclasses.replace(full, used_max=0.99, used_end=0.97, deleted_for_space=3),
                   ends)[0] == OUT_OF_SPACE
    assert reached(dataclasses.replace(full, used_end=0.989), ends) == ("", "")


def test_fslab_presets_lists_the_levels_with_their_sources():
    from fslab.plan.listings import presets_json

    levels = json.loads(presets_json())["age_levels"]
    assert list(levels) == ["fresh", "interleaved", "versioned", "mix", "thesis-80",
                            "thesis-99", "large-80"]
    thesis = levels["thesis-99"]
    assert thesis["study"] == "aging-thesis" and thesis["cannot_here"]
    assert thesis["settings"]["utilization"]["source"] == "study"
    assert thesis["settings"]["mix"]["source"] == "fslab's choice"
