"""`fslab run --preset NAME --as-published`: the study's own scale and protocol, each value
with its place in the study, what this machine cannot do named, the rest still planned."""

import pytest
import tomli_w

from fslab.plan.loading import load_campaign
from fslab.plan.schema import Overrides
from tests.conftest import fslab_here


def published(preset, **flags):
    return load_campaign(None, Overrides(preset=preset, as_published=True, **flags))


def dry_run(*args):
    result = fslab_here("run", *args, "--as-published", "--dry-run")
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout.split("Run order")[0]


def test_basic5_at_the_published_scale():
    text = dry_run("--preset", "basic5")
    assert "runtime 60 s per job; file size 1 GiB per job" in text
    assert "× 10 iterations" in text and "published scale" in text
    assert "filesystems: btrfs, ext4, xfs, zfs [study:" in text
    assert "Time measuring: 3 h 20 min over 200 fio runs" in text
    campaign = published("basic5")
    assert [t.fs for t in campaign.targets] == ["btrfs", "ext4", "xfs", "zfs"]
    assert (campaign.rounds, campaign.ceiling, campaign.scale) == (1, False, "published")
    assert min(t.size for t in campaign.targets) >= 4 * 1024**3  # 4 jobs × 1 GiB fit


@pytest.mark.parametrize(("preset", "expected"), [
    ("server6", ["runtime 600 s per job", "file size 10 GiB", "seqread size: 100G [study",
                 "filesystems: btrfs, xfs, zfs [study", "not here: hpc:",
                 "zfs layout: raidz1 [study", "zfs primarycache: ['all', 'none'] [study",
                 "Factor zfs.primarycache (target zfs): all, none", "not kernel OpenZFS"]),
    ("randrw16k", ["runtime 600 s", "file size 1 GiB",
                   "md-raid1-ext4, md-raid1-xfs, zfs-mirror [study", "(a cap: no"]),
    ("randrw128k", ["runtime 600 s", "file size 1 GiB", "--direct=0 --size=16G"]),
    ("bonnie", ["file_size: 2xRAM [study", "files_k: 16 [study", "bonnie++ 1.98"]),
    ("smallfiles", ["count: 100000 [study", "perl script"]),
    ("files", ["small_count: 500 [study", "large_count: 250 [study", "tool: dd [study",
               "flush: none [study", "fat32, ext2, ext4, ntfs, xfs [study", "not a USB stick"]),
    ("aged", ["runtime 600 s", "filesystems: xfs, ext4 [study", "fresh: run [study",
              "fstrim"]),
])
def test_each_study_preset_shows_its_studys_values(preset, expected):
    text = dry_run("--preset", preset)
    for fragment in expected:
        assert fragment in text, (preset, fragment)


def test_the_studys_tool_settings_reach_the_workloads():
    from fslab.plan.workload_entries import build_workloads

    server = {w.name: w for w in build_workloads(published("server6"))}
    assert server["seqread"].options["size"] == "100G"
    assert server["randread"].global_options["size"] == "10240M"
    bonnie = build_workloads(published("bonnie"))[0]
    assert bonnie.files_k == 16 and bonnie.file_size > 2 * 1024**3
    files = build_workloads(published("files"))
    assert {(w.tool, w.flush, w.count) for w in files} == {("dd", "none", 500),
                                                          ("dd", "none", 250)}


def test_a_users_flags_still_win_and_a_saved_campaign_keeps_them(tmp_path):
    campaign = published("basic5", iterations=2, fs=["ext4"], runtime="5")
    assert (campaign.iterations, campaign.runtime) == (2, 5)
    assert [t.fs for t in campaign.targets] == ["ext4"]
    saved = tmp_path / "campaign.toml"
    saved.write_text(tomli_w.dumps(campaign.to_dict()))
    again = load_campaign(saved)
    assert (again.iterations, again.runtime, again.scale) == (2, 5, "published")
    assert [t.fs for t in again.targets] == ["ext4"]


def test_fslabs_own_presets_have_no_published_scale():
    result = fslab_here("run", "--preset", "scan", "--as-published", "--dry-run")
    assert result.returncode == 2
    assert "scan is fslab's own: it has no published scale" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
