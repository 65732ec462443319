"""Real sweeps: fio options measured in the same rounds, mount options each on its own
fresh file system (tried once before the campaign), the three published factorial
designs (examples/) at a small scale, and the report's scaling chart in Chromium."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from fslab import api
from fslab.core.errors import UserError
from fslab.plan.loading import load_campaign
from fslab.plan.schema import Overrides
from tests.conftest import REPO, requires


def small(**changes) -> Overrides:
    # no raw-device ceiling: these check sweeps, and the ceiling's own tests are elsewhere
    base = dict(iterations=2, runtime="1", image_size="512M", seed=5, ceiling=False)
    return Overrides(**{**base, **changes})


@pytest.mark.privileged
def test_iodepth_sweep_end_to_end_with_effects_best_and_the_scaling_chart(tmp_path, lab):
    """The issue's campaign: ext4 and xfs, randread, libaio, iodepth 1 and 8."""
    requires("fio", "mkfs.ext4", "mkfs.xfs", "losetup", "chromium")
    campaign = load_campaign(None, small(fs=["ext4", "xfs"], workloads=["randread"],
                                         sweeps={"ioengine": ["libaio"],
                                                 "iodepth": ["1", "8"]}))
    out = tmp_path / "out"
    result = api.run(campaign, out=out, lab=lab)
    assert (result.runner.ok, result.runner.failed) == (8, 0)
    metrics = pd.read_parquet(out / "metrics.parquet")
    assert set(metrics["iodepth"]) == {"1", "8"}
    record = json.loads((out / "runs" / "i001-ext4-randread_iodepth-8" / "run.json").read_text())
    assert record["levels"] == {"iodepth": "8"}
    job = (out / "runs" / "i001-ext4-randread_iodepth-8" / "slice.fio").read_text()
    assert "iodepth=8" in job and "ioengine=libaio" in job and "[randread]" in job
    # both levels and both file systems took turns in the same rounds
    slices = record["workload_metadata"]["slices"]["runs"]
    assert max(s["position"] for s in slices) >= 3
    effects = pd.read_csv(out / "stats" / "effects.csv")
    row = effects[(effects["factor"] == "iodepth") & (effects["level"].astype(str) == "8")]
    assert len(row) == 1 and row["reference"].astype(str).iloc[0] == "1"
    assert 0 < row["ratio_ci_low"].iloc[0] <= row["ratio"].iloc[0] <= row["ratio_ci_high"].iloc[0]
    assert row["ratio"].iloc[0] > 1.2  # eight I/Os in flight per job beat one
    best = pd.read_csv(out / "stats" / "best.csv")
    assert best.loc[best["role"] == "best", "workload"].tolist() == ["randread"]
    verdicts = (out / "stats" / "verdicts.txt").read_text()
    assert re.search(r"randread: best (ext4|xfs) iodepth=\d", verdicts)
    assert "iodepth 1→8: " in verdicts
    page = api.report(out)
    html = page.read_text()
    assert "IOPS and p99 latency against iodepth" in html and "fio 3." in html
    from tests.ingest.test_import_report import chromium

    dom = chromium(page, tmp_path)
    assert 'data-js-errors="0"' in dom
    rendered = int(re.search(r'data-charts-rendered="(\d+)"', dom).group(1))
    assert rendered == html.count('class="chart"')


@pytest.mark.privileged
def test_a_mount_option_ext4_does_not_know_is_dropped_and_the_sweep_goes_on(tmp_path, lab):
    """Issue 62: the level is named with the kernel's words, its runs recorded as
    refused (never made), the others measured."""
    requires("mkfs.ext4", "losetup", "fio")
    campaign = load_campaign(None, small(fs=["ext4"], workloads=["randread"], rounds=1,
                                         sweeps={"mount_options": ["noatime", "nosuch"]}))
    out = tmp_path / "out"
    result = api.run(campaign, out=out, lab=lab)
    runs = api.runs(out).set_index("run_id")
    refused = runs[runs.failure == "refused"]
    assert sorted(refused.index) == ["i001-ext4_mount_options-nosuch-randread",
                                     "i002-ext4_mount_options-nosuch-randread"]
    assert all(r.startswith("ext4 refuses mount_options=nosuch (") for r in refused.reason)
    assert (runs[runs.failure != "refused"].status == "ok").sum() == 2
    assert any("ext4 refuses mount_options=nosuch" in w for w in result.runner.warnings)


@pytest.mark.privileged
def test_a_sweep_no_level_of_which_mounts_stops_before_the_campaign(tmp_path, lab):
    requires("mkfs.ext4", "losetup", "fio")
    campaign = load_campaign(None, small(fs=["ext4"], workloads=["randread"],
                                         sweeps={"mount_options": ["nosuch", "nosuch2"]}))
    out = tmp_path / "out"
    with pytest.raises(UserError) as caught:
        api.run(campaign, out=out, lab=lab)
    text = str(caught.value)
    assert "target ext4: no configuration mounts" in text and "nosuch2" in text
    assert "\n" not in text
    assert not out.exists()  # nothing of the campaign was made


@pytest.mark.privileged
def test_mount_options_each_get_their_own_file_system(tmp_path, lab):
    requires("mkfs.ext4", "losetup", "fio")
    campaign = load_campaign(None, small(fs=["ext4"], workloads=["randread"], rounds=1,
                                         sweeps={"mount_options": ["noatime", "relatime"]}))
    out = tmp_path / "out"
    result = api.run(campaign, out=out, lab=lab)
    assert result.runner.failed == 0
    runs = api.runs(out)
    assert set(runs["target"]) == {"ext4 mount_options=noatime", "ext4 mount_options=relatime"}
    for target, option in (("noatime", "noatime"), ("relatime", "relatime")):
        record = json.loads((out / "runs" / f"i001-ext4_mount_options-{target}-randread"
                             / "run.json").read_text())
        assert option in str(record["target_description"])
        assert record["levels"] == {"mount_options": option}
    assert "mount_options" in pd.read_csv(out / "stats" / "summary.csv")


def example(name: str, **changes) -> object:
    return load_campaign(REPO / "examples" / f"{name}.toml", small(**changes))


@pytest.mark.privileged
def test_the_queue_depth_curve_example(tmp_path, lab):
    requires("fio", "mkfs.ext4", "losetup")
    campaign = example("queue-depth", fs=["ext4"], sweeps={"iodepth": ["1", "4", "16"]})
    out = tmp_path / "qd"
    assert api.run(campaign, out=out, lab=lab).runner.failed == 0
    effects = pd.read_csv(out / "stats" / "effects.csv")
    assert effects["level"].astype(str).tolist() == ["4", "16"]
    assert ((effects["ratio_ci_low"] <= effects["ratio"])
            & (effects["ratio"] <= effects["ratio_ci_high"])).all()
    # sixteen I/Os in flight beat one by far; a middle level at two 1 s iterations beside
    # three other test workers can land either side of 1 (CI once saw 0.84 at iodepth 4
    # with 2.84 at 16), so only the deep end is asserted
    deepest = effects[effects["level"].astype(str) == "16"].iloc[0]
    assert deepest["ratio"] > 1.5


@pytest.mark.privileged
def test_the_raid1_block_size_example(tmp_path, lab):
    requires("fio", "mkfs.ext4", "mkfs.xfs", "losetup", "zpool", "zfs-fuse")
    campaign = example("raid1-blocksize", file_size="16M", workloads=["randrw"])
    out = tmp_path / "raid1"
    result = api.run(campaign, out=out, lab=lab)
    assert result.runner.failed == 0
    effects = pd.read_csv(out / "stats" / "effects.csv")
    row = effects[effects["factor"] == "bs"].iloc[0]
    assert str(row["level"]) == "128k" and row["targets"] == "ext4, xfs, zfs-mirror"
    summary = pd.read_csv(out / "stats" / "summary.csv")
    assert set(summary["bs"].dropna()) == {"16k", "128k"}


@pytest.mark.privileged
def test_the_raid1_examples_small_file_verdict_counts_the_sync(tmp_path, lab):
    """Issue 60 item 2: the example's small-file verdict ranks files/s with the sync after
    each phase (ops_per_s); the rate before it is kept beside, exploratory."""
    requires("mkfs.ext4", "mkfs.xfs", "losetup")
    text = (REPO / "examples" / "raid1-blocksize.toml").read_text()
    assert 'bs = ["16k", "128k"]' in text
    file = tmp_path / "raid1.toml"  # the small files alone: no fio job to take the bs sweep
    file.write_text(text.replace('bs = ["16k", "128k"]', ""))
    campaign = load_campaign(file, small(fs=["ext4", "xfs"], workloads=["smallfiles_4k"]))
    out = tmp_path / "raid1"
    assert api.run(campaign, out=out, lab=lab).runner.failed == 0
    headline = pd.read_csv(out / "stats" / "headline.csv")
    assert set(headline["metric"]) == {"ops_per_s"}
    assert set(headline["op"]) == {"write", "rewrite", "read", "delete"}
    summary = pd.read_csv(out / "stats" / "summary.csv")
    rows = summary[summary["workload"] == "smallfiles_4k"].set_index(["target", "op", "metric"])
    for target in ("ext4", "xfs"):
        with_sync = rows.loc[(target, "write", "ops_per_s"), "mean"]
        before = rows.loc[(target, "write", "ops_per_s_before_sync"), "mean"]
        assert with_sync < before  # the sync takes time: the rate with it is lower
    verdicts = (out / "stats" / "verdicts.txt").read_text()
    assert "write operations/s" in verdicts


@pytest.mark.privileged
def test_the_zfs_primary_cache_example(tmp_path, lab):
    requires("fio", "mkfs.btrfs", "losetup", "zpool", "zfs-fuse")
    campaign = example("zfs-primarycache", workloads=["randread"], file_size="32M")
    out = tmp_path / "zfs"
    result = api.run(campaign, out=out, lab=lab)
    assert result.runner.failed == 0
    runs = api.runs(out)
    assert {"zfs zfs.primarycache=all", "zfs zfs.primarycache=none", "btrfs"} == set(
        runs["target"])
    described = json.loads((out / "environment.json").read_text())["targets"]
    assert described["zfs zfs.primarycache=none"]["properties"] == {"primarycache": "none"}
    effects = pd.read_csv(out / "stats" / "effects.csv")
    row = effects[effects["factor"] == "zfs.primarycache"].iloc[0]
    assert row["targets"] == "zfs" and row["model"].startswith("between")
    assert Path(out / "stats" / "best.csv").exists()


@pytest.mark.privileged
def test_a_mount_option_sweep_reads_by_its_options_and_no_label_is_clipped(tmp_path, lab):
    """Issue 39 item 2: every cell is ext4 and only a mount option varies, so verdicts,
    tables and charts say data=journal, not ext4 mount_options=data=journal; the report
    renders in Chromium with no tick label or title cut off at its chart's edge."""
    requires("mkfs.ext4", "losetup", "fio", "chromium")
    campaign = load_campaign(None, small(fs=["ext4"], workloads=["randread"],
                                         sweeps={"mount_options": ["data=ordered",
                                                                   "data=journal"]}))
    out = tmp_path / "out"
    api.run(campaign, out=out, lab=lab)
    verdicts = (out / "stats" / "verdicts.txt").read_text()
    ranking = re.search(r"IOPS \(2 iterations\): (\S+) [?=>] (\S+)", verdicts)
    assert ranking is not None, verdicts
    assert {ranking.group(1), ranking.group(2)} == {"data=ordered", "data=journal"}
    assert "mount_options=" not in verdicts  # no full name, anywhere
    metrics = pd.read_parquet(out / "metrics.parquet")
    assert set(metrics["target_base"]) == {"ext4"} and set(metrics["job"]) == {"randread"}
    assert set(metrics["mount_options"]) == {"data=ordered", "data=journal"}
    page = api.report(out)
    from tests.ingest.test_import_report import chromium

    dom = chromium(page, tmp_path)
    assert 'data-js-errors="0"' in dom
    clipped = re.search(r'data-labels-clipped="(\d+)"', dom)
    assert clipped is not None and clipped.group(1) == "0", re.search(
        r'data-clipped-labels="([^"]*)"', dom)
