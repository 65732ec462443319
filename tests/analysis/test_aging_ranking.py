"""Does the ranking survive aging: the simulator's targets carry an age level in their
`effects`, so every interaction is known; whole campaigns through the API `fslab run`
calls check the table, its words, its interval's coverage and its false "the ranking
changes" (benchmarks/aging_ranking runs 200 of each)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from fslab import api
from fslab.analysis.factors.aging_ranking import (
    CHANGES,
    GAP,
    HEADING,
    HOLDS,
    SAME,
    decide,
)
from fslab.core.errors import UserError
from fslab.core.pair import EQUIVALENT, FASTER, SLOWER, UNRESOLVED
from fslab.plan.loading import resolve
from fslab.plan.schema import CampaignFile, Overrides

CONTRACT = ["workload", "metric", "a", "b", "age", "ratio_fresh", "ratio_fresh_ci_low",
            "ratio_fresh_ci_high", "ratio_aged", "ratio_aged_ci_low", "ratio_aged_ci_high",
            "interaction", "interaction_ci_low", "interaction_ci_high", "decision"]
LEVELS = ["fresh", "thesis-80", "thesis-99"]
# a is 1.25× b fresh; aged, a loses 0.8× (thesis-80) and 0.5× (thesis-99) of b: the
# ranking holds at 80 % (1.0×: a tie, the gap closes) and flips at 99 % (0.625×).
CROSSING = ({"age=thesis-80": 0.8, "age=thesis-99": 0.5}, {})
TRUTH = {"thesis-80": 0.8, "thesis-99": 0.5}


def aged_campaign(seed: int, effects: tuple[dict[str, float], dict[str, float]],
                  scale_a: float = 1.25, iterations: int = 6, cv: float = 0.08,
                  drift: float = 0.10, levels: list[str] | None = None, **extra):
    """A resolved simulator campaign: targets a (scale `scale_a`) and b, each with its age
    effects, swept over `levels` of age."""
    parsed = CampaignFile.model_validate({
        "name": "aging-sim", "iterations": iterations, "seed": seed, **extra,
        "sweep": {"age": levels or LEVELS},
        "target": [{"name": "a", "fs": "null", "scale": scale_a, "effects": effects[0]},
                   {"name": "b", "fs": "null", "scale": 1.0, "effects": effects[1]}],
        "workload": [{"preset": "null", "options": {"iops": 1000, "cv": cv,
                                                    "drift": drift}}]})
    return resolve(parsed, Overrides(), Path.cwd())


def answer(tmp_path: Path, campaign, name: str = "out") -> pd.DataFrame:
    from fslab.host.lab import Lab

    out = tmp_path / name
    api.run(campaign, out=out, lab=Lab(tmp_path / "lab"))
    return pd.read_csv(out / "stats" / "aging_ranking.csv")


def test_the_table_its_columns_and_its_words_come_first(tmp_path):
    table = answer(tmp_path, aged_campaign(3, CROSSING, iterations=8, cv=0.04, drift=0.05))
    assert list(table.columns[:len(CONTRACT)]) == CONTRACT
    assert table["age"].tolist() == ["thesis-80", "thesis-99"]  # the campaign's order
    assert set(table["a"]) == {"a"} and set(table["b"]) == {"b"}
    row = table.set_index("age").loc["thesis-99"]
    assert row["decision"] == CHANGES  # a ahead fresh, b ahead at 99 %
    assert row["interaction_ci_low"] <= 0.5 <= row["interaction_ci_high"]
    assert abs(row["interaction"] - row["ratio_aged"] / row["ratio_fresh"]) < 0.05
    pairs = pd.read_csv(tmp_path / "out" / "stats" / "pairwise.csv")
    fresh = pairs[(pairs["a"] == "a age=fresh") & (pairs["b"] == "b age=fresh")].iloc[0]
    assert row["ratio_fresh"] == pytest.approx(fresh["ratio"])  # the verdicts' own pair
    lines = (tmp_path / "out" / "stats" / "verdicts.txt").read_text().splitlines()
    assert lines[0] == HEADING
    assert "2 interactions" in lines[1]
    assert any(line.startswith("  w1 IOPS, a vs b at thesis-99: the ranking changes: a "
                               "ahead fresh, b ahead at thesis-99") for line in lines[:5])
    methods = pd.read_csv(tmp_path / "out" / "stats" / "methods.csv")
    assert "aging_ranking" in set(methods["step"])


def test_the_interval_covers_the_known_interaction(tmp_path):
    """A few campaigns here (benchmarks/aging_ranking: 200, coverage ≥ 93 %)."""
    covered = total = 0
    for seed in range(5):
        table = answer(tmp_path, aged_campaign(seed, CROSSING, iterations=5), f"c{seed}")
        for row in table.itertuples():
            total += 1
            covered += row.interaction_ci_low <= TRUTH[row.age] <= row.interaction_ci_high
    assert total == 10 and covered >= 9


def test_no_interaction_no_ranking_change(tmp_path):
    """Both file systems lose alike with age (0.7×): the interaction is 1, so 'the ranking
    changes' is a false claim; its adjusted test keeps it at 5 % (here none of 5)."""
    same = ({"age=thesis-80": 0.7, "age=thesis-99": 0.7},
            {"age=thesis-80": 0.7, "age=thesis-99": 0.7})
    decisions = []
    for seed in range(5):
        decisions += answer(tmp_path, aged_campaign(seed, same, scale_a=1.02),
                            f"n{seed}")["decision"].tolist()
    assert CHANGES not in decisions and len(decisions) == 10


def test_the_rule_takes_every_branch():
    assert decide(SLOWER, FASTER, SLOWER) == CHANGES
    assert decide(SLOWER, FASTER, EQUIVALENT) == CHANGES  # a ahead, then the same
    assert decide(FASTER, FASTER, FASTER) == GAP
    assert decide(FASTER, FASTER, UNRESOLVED) == GAP  # the order aged not known
    assert decide(EQUIVALENT, UNRESOLVED, UNRESOLVED) == SAME
    assert decide(UNRESOLVED, SLOWER, SLOWER) == HOLDS
    assert decide(UNRESOLVED, EQUIVALENT, EQUIVALENT) == HOLDS
    assert decide(UNRESOLVED, FASTER, SLOWER) == UNRESOLVED  # not claimed without the test
    assert decide(UNRESOLVED, FASTER, UNRESOLVED) == UNRESOLVED


def test_an_unknown_level_or_recipe_is_one_line():
    with pytest.raises(UserError) as caught:
        aged_campaign(1, CROSSING, levels=["fresh", "thesis-50"])
    assert "unknown level 'thesis-50'" in str(caught.value) and "\n" not in str(caught.value)
    with pytest.raises(UserError) as caught:
        aged_campaign(1, CROSSING, levels=["fresh", "mine"],
                      age_levels={"mine": {"recipe": "defrag"}})
    assert "unknown aging recipe 'defrag'" in str(caught.value)
    with pytest.raises(UserError) as caught:
        aged_campaign(1, CROSSING, age_levels={"thesis-80": {"colour": 1}})
    assert "unknown aging setting colour" in str(caught.value)


def test_the_level_keys_are_the_aging_configs():
    import dataclasses

    from fslab.aging.config import AgingConfig
    from fslab.workloads.aging_levels import CONFIG_KEYS

    assert {field.name for field in dataclasses.fields(AgingConfig)} == CONFIG_KEYS


def test_the_labels_say_what_the_agings_were():
    from types import SimpleNamespace

    from fslab.analysis.factors.aging_ranking import aging_labels
    from fslab.core.campaign_settings import CampaignSettings

    hdd = "the thesis aged HDDs and SSDs (section 7.1)"
    full = {"level": "thesis-99", "short": "out of space", "used_max": 0.982,
            "utilization": 0.99, "released": {"files": 9, "bytes": 1, "used_after": 0.87},
            "not_here": [hdd]}

    def record(target, iteration, aging=None, failure=""):
        return SimpleNamespace(target=target, iteration=iteration, failure=failure,
                               target_description={"aging": aging} if aging else {})

    records = [record("ext4 age=thesis-99", 1, full),
               record("ext4 age=thesis-99", 2, {**full, "used_max": 0.979}),
               record("xfs age=thesis-80", 1, {"level": "thesis-80", "not_here": [hdd]}),
               record("xfs age=mix", 1, failure="aging")]
    lines = aging_labels(records, CampaignSettings.from_table({"age_reuse": True}))
    assert lines[0].startswith("Aged images reused (age_reuse = true)")
    assert ("ext4 age=thesis-99 ran out of space before its target utilisation of 99% in 2 "
            "agings (at 97.9%–98.2% used)") in lines[1]
    assert lines[2].startswith("xfs age=mix: the aging stopped short of its level's "
                               "utilisation in 1 iteration;")
    assert "its runs began at 87% used" in lines[3]
    assert lines[4] == f"thesis-99, thesis-80: {hdd}" and len(lines) == 5
    once = aging_labels(records[:1], CampaignSettings.from_table({"fresh": "campaign"}))
    assert once[0].startswith("One file system per target × level for the whole campaign")


def test_the_command_line_refuses_an_unknown_level_in_one_line(tmp_path):
    from tests.cli.test_cli import assert_one_line_error
    from tests.conftest import fslab_here

    assert_one_line_error(fslab_here("run", "--fs", "ext4,xfs", "--sweep",
                                     "age=fresh,thesis-50", "--dry-run"),
                          "unknown level 'thesis-50'")
    campaign = tmp_path / "c.toml"
    campaign.write_text('[sweep]\nage = ["fresh", "mine"]\n[age_levels.mine]\n'
                        'recipe = "defrag"\n[[target]]\nfs = "ext4"\n')
    assert_one_line_error(fslab_here("run", str(campaign), "--dry-run"),
                          "unknown aging recipe 'defrag'")
    assert not (tmp_path / "results").exists()


def test_the_progress_line_says_the_aging():
    from types import SimpleNamespace

    from fslab.core.run_parts import WorkloadMetadata
    from fslab.run.aging_places import aging_text

    aged = SimpleNamespace(workload_metadata=WorkloadMetadata(more={"aging": {
        "level": "thesis-80", "seconds": 12.34, "used_max": 0.804}}))
    assert aging_text(aged) == "; aged to thesis-80 in 12.3 s, 80.4% used"
    assert aging_text(SimpleNamespace(workload_metadata=WorkloadMetadata())) == ""
    assert aging_text(None) == ""
