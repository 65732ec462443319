"""Age as a factor of a real campaign: ext4 and xfs, fresh and aged in the same rounds,
each iteration aging its own file systems (tiny agings, 1 s runs), the interaction
decided and worded first, a level too short to reach its utilisation failing its runs
with the kind `aging` while the campaign goes on, the figures in Chromium; and
age_reuse, which ages once and says what its intervals hold for."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest

from fslab import api
from fslab.analysis.factors.aging_answers import DECISIONS, HEADING
from fslab.plan.loading import resolve
from fslab.plan.schema import CampaignFile, Overrides
from tests.conftest import fslab_here, requires

CONTRACT = ["workload", "metric", "a", "b", "age", "ratio_fresh", "ratio_fresh_ci_low",
            "ratio_fresh_ci_high", "ratio_aged", "ratio_aged_ci_low", "ratio_aged_ci_high",
            "interaction", "interaction_ci_low", "interaction_ci_high", "decision"]
# thesis-80's settings but 5 % of the capacity: it is reached in under a thousand
# operations; `short` cannot reach 90 % in 300.
TINY = {"thesis-80": {"utilization": 0.05, "low_water": 0.04, "ops_per_gib": 6_000,
                      "probes": 3},
        "short": {"recipe": "mix", "utilization": 0.9, "ops": 300, "probes": 2}}


def campaign(tmp_path, targets, levels, iterations, **extra):
    parsed = CampaignFile.model_validate({
        "name": "age-real", "iterations": iterations, "runtime": 1, "seed": 4,
        "image_size": "320M", "file_size": "8M", "ceiling": False,
        "sweep": {"age": levels}, "age_levels": TINY, **extra,
        "target": [{"fs": fs} for fs in targets],
        "workload": [{"preset": "direct5", "only": ["randread"]}]})
    return resolve(parsed, Overrides(), tmp_path)


@pytest.mark.privileged
def test_ext4_and_xfs_fresh_and_aged_the_interaction_decided(tmp_path, lab):
    requires("fio", "mkfs.ext4", "mkfs.xfs", "losetup", "e2freefrag", "xfs_spaceman",
             "chromium")
    out = tmp_path / "out"
    result = api.run(campaign(tmp_path, ["ext4", "xfs"], ["fresh", "thesis-80", "short"], 3),
                     out=out, lab=lab)
    assert (result.runner.ok, result.runner.failed) == (12, 6)  # `short` fails, not the rest
    records = {p.parent.name: json.loads(p.read_text()) for p in (out / "runs").glob("*/run.json")}
    short = [r for r in records.values() if r["levels"].get("age") == "short"]
    assert {r["failure"] for r in short} == {"aging"}
    assert "short of its target of 90%" in short[0]["reason"]
    aged = records["i002-ext4_age-thesis-80-randread"]
    assert aged["steps"]["age"] > 0  # aging time is machine time
    assert sum(aged["steps"].values()) >= aged["steps"]["age"]
    assert aged["workload_metadata"]["aging"]["level"] == "thesis-80"
    assert aged["target_description"]["aging"]["used_max"] >= 0.045
    seeds = {r["target_description"]["aging"]["seed"] for r in records.values()
             if r["levels"].get("age") == "thesis-80" and r["iteration"] == 2}
    assert len(seeds) == 1  # both file systems of an iteration get the same operations
    kept = json.loads((out / "aged" / "xfs_age-thesis-80" / "i003" / "aging.json").read_text())
    assert kept["parameters"]["utilization"]["source"] == "campaign"
    assert kept["parameters"]["file_choice"]["source"] == "study"
    table = pd.read_csv(out / "stats" / "aging_ranking.csv")
    assert list(table.columns[:len(CONTRACT)]) == CONTRACT
    assert table[["workload", "metric", "a", "b", "age"]].values.tolist() == [
        ["randread", "iops", "ext4", "xfs", "thesis-80"]]  # `short` has no values: no row
    row = table.iloc[0]
    assert row["decision"] in DECISIONS and row["n"] == 3
    assert row["interaction_ci_low"] <= row["interaction"] <= row["interaction_ci_high"]
    lines = (out / "stats" / "verdicts.txt").read_text().splitlines()
    assert lines[0] == HEADING
    assert re.match(r"  randread IOPS, ext4 vs xfs at thesis-80: (the ranking|the gap|the "
                    r"same|unresolved)", lines[2])
    assert any(line.startswith("  ext4 age=short: not measured in 3 iterations (failure kind "
                               "aging): ") and "short of its target of 90%" in line
               for line in lines[:8])
    assert any("HDDs and SSDs" in line for line in lines[:10])
    trend = pd.read_csv(out / "stats" / "aging_trend.csv")
    assert set(trend["method"]) == {"t over the agings' Theil–Sen slopes"}
    assert set(trend["agings"]) >= {3}
    from tests.ingest.test_import_report import chromium

    page = api.report(out)
    html = page.read_text()
    assert "free space over the aging" in html and "fresh and aged" in html
    dom = chromium(page, tmp_path)
    assert 'data-js-errors="0"' in dom and 'data-labels-clipped="0"' in dom
    assert int(re.search(r'data-charts-rendered="(\d+)"', dom).group(1)) == html.count(
        'class="chart"')


@pytest.mark.privileged
def test_age_reuse_ages_once_and_says_so(tmp_path, lab):
    requires("fio", "mkfs.ext4", "losetup")
    out = tmp_path / "out"
    result = api.run(campaign(tmp_path, ["ext4"], ["fresh", "thesis-80"], 2,
                              age_reuse=True), out=out, lab=lab)
    assert (result.runner.ok, result.runner.failed) == (4, 0)
    assert (out / "aged" / "ext4_age-thesis-80" / "image.img").exists()
    assert not list((out / "aged" / "ext4_age-thesis-80").glob("i00*"))  # aged once
    record = json.loads((out / "runs" / "i002-ext4_age-thesis-80-randread" / "run.json")
                        .read_text())
    assert record["target_description"]["aging"]["reused"] is True
    assert record["target_description"]["state"] == "aged"
    verdicts = (out / "stats" / "verdicts.txt").read_text()
    assert "Aged images reused (age_reuse = true)" in verdicts


@pytest.mark.privileged
def test_age_as_published_lists_every_parameter_with_its_source(tmp_path, lab):
    """`fslab age --as-published` (here with a few operations: the full run is about 100,000
    per GiB) keeps the thesis's metadata image and lists every parameter with its source."""
    requires("mkfs.ext4", "losetup", "e2freefrag", "e2image")
    out = tmp_path / "aged"
    result = fslab_here("age", "--as-published", "--fs", "ext4", "--size", "256M", "--ops",
                        "2000", "--out", str(out), "--lab", str(lab.root))
    assert result.returncode == 0, result.stderr
    assert "As published: the aging thesis's aging at 80% utilisation" in result.stdout
    assert "not here: the thesis aged HDDs and SSDs" in " ".join(result.stdout.split())
    record = json.loads((out / "runs" / "aging" / "aging.json").read_text())
    listed = record["parameters"]
    assert {p["source"] for p in listed.values()} == {"study", "fslab's choice", "campaign"}
    assert listed["ops"] == {"value": 2000, "source": "campaign", "why": "--ops given"}
    assert listed["file_choice"]["source"] == "study" and listed["image"]["value"] == "metadata"
    assert record["config"]["file_choice"] == "gaussian" and (out / "image.meta").exists()
