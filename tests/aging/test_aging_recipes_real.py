"""Aging that ages (issue 14), for real: operations that count, recipes, stop rules, and a
cold scan that sees the difference between an aged tree and a fresh copy of it."""

import json

import pandas as pd
import pytest

from fslab import api
from fslab.aging.age import age, run_dir
from fslab.aging.config import AgingConfig
from fslab.analysis.pairs.model import NOT_ESTIMABLE
from fslab.plan.loading import load_campaign
from fslab.targets import TargetSpec
from tests.conftest import fslab_here, requires

MiB = 1024**2


@pytest.mark.privileged
def test_operations_succeed_on_a_fresh_file_system_below_its_target(tmp_path, lab):
    requires("mkfs.ext4", "losetup")
    record = age(TargetSpec(name="a", fs="ext4", size=256 * MiB),
                 AgingConfig(seed=7, ops=5000, utilization=0.8, size_max=1 * MiB),
                 tmp_path / "aged", lab, image="none")
    assert record.ops_attempted == 5000
    assert record.ops_succeeded >= 0.95 * 5000, record.failures
    assert record.ops_succeeded + record.ops_failed == 5000
    assert record.ops_per_s == pytest.approx(record.ops_succeeded / record.seconds)


@pytest.mark.privileged
def test_age_on_tmpfs_works_and_says_there_is_no_image(tmp_path):
    requires()
    result = fslab_here("age", "--fs", "tmpfs", "--size", "64M", "--ops", "2000",
                        "--recipe", "mix", "--out", str(tmp_path / "t"),
                        "--lab", str(tmp_path / "lab"))
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert "2000 operations attempted, 2000 succeeded, 0 failed" in " ".join(
        result.stdout.split())
    assert "No image kept" in result.stdout


@pytest.mark.privileged
def test_written_and_plateau_stop_rules_are_recorded(tmp_path, lab):
    requires("mkfs.ext4", "losetup")
    spec = TargetSpec(name="w", fs="ext4", size=128 * MiB)
    record = age(spec, AgingConfig(seed=2, ops=None, written=0.5, utilization=0.6,
                                   size_max=1 * MiB), tmp_path / "written", lab,
                 image="none")
    assert record.stopped_by == "written 0.5× the capacity"
    capacity = 128 * MiB
    assert 0.4 * capacity <= record.bytes_written <= 0.8 * capacity
    record = age(spec, AgingConfig(seed=2, ops=None, recipe="versioned", tree_files=300,
                                   fill=0.3, plateau=0.5, probe_every=50, written=4),
                 tmp_path / "plateau", lab, image="none")
    assert record.stopped_by.startswith("plateau"), record.stopped_by
    probes = json.loads((run_dir(tmp_path / "plateau") / "fragmentation.json").read_text())
    assert len(probes) >= 4 and probes[-1]["used"]["measurable"]


@pytest.mark.privileged
def test_interleaved_tree_scans_slower_than_a_fresh_copy_of_it(tmp_path, lab):
    requires("mkfs.ext4", "losetup", "fio")
    record = age(TargetSpec(name="i", fs="ext4", size=256 * MiB),
                 AgingConfig(seed=1, ops=None, recipe="interleaved", tree_files=400,
                             fill=0.25), tmp_path / "aged", lab)
    assert record.stopped_by == "recipe complete"
    assert record.ops_failed == 0 and len(record.op_sequence_sha256) == 64
    image = tmp_path / "aged" / "image.img"
    campaign = tmp_path / "c.toml"
    campaign.write_text(
        f'iterations = 3\nseed = 1\n[[target]]\nname = "aged"\nfs = "ext4"\n'
        f'image = "{image}"\n[[target]]\nname = "fresh"\nfs = "ext4"\n'
        f'fresh_copy_of = "{image}"\n[[workload]]\npreset = "scan"\n')
    result = api.run(load_campaign(campaign), out=tmp_path / "r", lab=lab)
    assert result.runner.failed == 0, api.runs(tmp_path / "r").to_dict("records")
    api.analyze(tmp_path / "r")
    metrics = api.load(tmp_path / "r")
    scans = metrics.pivot_table(index="target", columns="metric", values="value")
    # the same files on both sides, every byte read; laid out very differently
    assert scans.loc["aged", "io_bytes"] == scans.loc["fresh", "io_bytes"] > 0
    assert scans.loc["aged", "layout_score"] < 0.5 < scans.loc["fresh", "layout_score"]
    ages = pd.read_csv(tmp_path / "r" / "stats" / "aged_vs_fresh.csv")
    row = ages[(ages.metric == "layout_score")].iloc[0]
    # the aged image's layout is the same in every iteration; the fresh copy's nearly so:
    # either a clear difference, or no spread at all to test ("not estimable"), never
    # "no detectable difference" at a ratio this far from 1. The ratio was 0.119 in six
    # runs on a quiet host and 0.506 once in make test (the same operations, flushed at
    # other moments on a busy host: the aged score just under 0.5); the scores' bound above
    # is the claim, the ratio follows from it
    assert (row.aged, row.fresh) == ("aged", "fresh") and row.ratio < 0.75
    assert row.verdict in ("aged is worse", NOT_ESTIMABLE), row.verdict


@pytest.mark.privileged
@pytest.mark.parametrize("fs", ["raw", "md-raid1-ext4", "xfs"])
def test_age_refuses_in_one_line_what_it_cannot_age(tmp_path, fs):
    requires()
    result = fslab_here("age", "--fs", fs, "--size", "128M", "--ops", "10", "--out",
                        str(tmp_path / "o"), "--lab", str(tmp_path / "lab"))
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode == 2 and len(lines) == 1, result.stderr
    assert lines[0].startswith("fslab: error: ") and "Traceback" not in result.stderr


@pytest.mark.privileged
def test_a_campaign_ages_a_target_then_measures_it_against_a_fresh_copy(tmp_path, lab):
    requires("mkfs.ext4", "losetup", "fio")
    campaign = tmp_path / "c.toml"
    campaign.write_text(
        'iterations = 3\nseed = 3\nimage_size = "256M"\n'
        '[[target]]\nname = "aged"\nfs = "ext4"\n'
        'age = { recipe = "interleaved", tree_files = 300, fill = 0.2, seed = 4 }\n'
        '[[target]]\nname = "fresh"\nfs = "ext4"\nfresh_copy_of = "aged"\n'
        '[[workload]]\npreset = "scan"\n')
    out = tmp_path / "r"
    result = api.run(load_campaign(campaign), out=out, lab=lab)
    assert result.runner.failed == 0, api.runs(out).to_dict("records")
    aging = json.loads((run_dir(out / "aged" / "aged") / "aging.json").read_text())
    assert aging["stopped_by"] == "recipe complete" and aging["ops_failed"] == 0
    assert (out / "aged" / "aged" / "image.img").exists()
    api.analyze(out)
    ages = pd.read_csv(out / "stats" / "aged_vs_fresh.csv")
    row = ages[ages.metric == "layout_score"].iloc[0]
    # the aged image's layout is the same in every iteration; the fresh copy's nearly so:
    # either a clear difference, or no spread at all to test ("not estimable"), never
    # "no detectable difference" at a ratio this far from 1. The ratio was 0.119 in six
    # runs on a quiet host and 0.506 once in make test (the same operations, flushed at
    # other moments on a busy host: the aged score just under 0.5); the scores' bound above
    # is the claim, the ratio follows from it
    assert (row.aged, row.fresh) == ("aged", "fresh") and row.ratio < 0.75
    assert row.verdict in ("aged is worse", NOT_ESTIMABLE), row.verdict
    saved = (out / "campaign.toml").read_text()
    assert 'fresh_copy_of = "aged"' in saved and "recipe = \"interleaved\"" in saved
