"""The aging engine, its utilisation control, fragmentation probes and images — for real."""

import json
import os
import re
import subprocess

import pytest

from fslab.aging.age import age, run_dir
from fslab.aging.config import AgingConfig
from fslab.aging.engine import Engine
from fslab.aging.generator import OpGenerator
from fslab.probes.fiemap import NotMeasurable, extents, file_layout, layout_score
from fslab.probes.freespace import probe
from fslab.probes.usedspace import used_space_probe
from fslab.targets import TargetSpec, make_target
from tests.conftest import fslab_here, requires

MiB = 1024**2


def digest(config: AgingConfig, batches: int = 2) -> str:
    generator = OpGenerator(config)
    for _ in range(batches):
        generator.next_batch()
    return generator.digest


def test_same_seed_same_sequence_other_seed_other():
    for choice in ("uniform", "gaussian"):
        a = AgingConfig(seed=7, file_choice=choice, velocity=0.5)
        assert digest(a) == digest(AgingConfig(seed=7, file_choice=choice, velocity=0.5))
        assert digest(a) != digest(AgingConfig(seed=8, file_choice=choice, velocity=0.5))


def test_every_operation_acts_on_a_file_that_exists(tmp_path):
    """Issue 14: reads, writes, deletes and renames go to existing files, creates to free
    names: on a file system with room, at least 95 % of operations succeed (here all)."""
    config = AgingConfig(seed=3, ops=3000, max_files=300, size_max=64 * 1024)
    log = Engine(config, tmp_path / "w").run()
    assert log.ops_done == 3000
    assert len(log.latency_ns) + sum(log.failures.values()) == 3000
    assert len(log.latency_ns) >= 0.95 * 3000, log.failures
    assert not log.failures  # nothing fails on tmp's file system below its capacity
    names = {os.path.join(d, f) for d, _, fs in os.walk(tmp_path / "w") for f in fs}
    assert len(names) > 0
    again = Engine(AgingConfig(seed=3, ops=3000, max_files=300, size_max=64 * 1024),
                   tmp_path / "w2").run()
    assert again.digest == log.digest  # the planned sequence is the seed's
    assert list(again.op) == list(log.op)  # and so is what was done, on a healthy fs


def test_file_set_finds_the_nearest_existing_and_free_index():
    from fslab.aging.fileset import FileSet

    files = FileSet(10)
    assert files.near(5) is None and files.free_near(5) == 5
    for index in (2, 3, 8):
        files.add(index)
    assert files.near(5) == 3 and files.near(7) == 8 and files.near(0) == 2
    assert files.free_near(3) == 4 and files.free_near(2) == 1
    files.discard(3)
    assert files.near(4) == 2 and files.free_near(3) == 3
    for index in range(10):
        files.add(index)
    assert files.free_near(4) is None


@pytest.fixture
def mounted_fs(lab):
    made = []

    def make(fs: str, size: int = 256 * MiB):
        requires(f"mkfs.{fs}" if fs not in ("ntfs",) else "mkntfs")
        target = make_target(TargetSpec(name=f"age-{fs}", fs=fs, size=size))
        session = lab.open_session()
        mounted = target.provision(session)
        made.append((target, session, mounted))
        return mounted

    yield make
    for target, session, mounted in made:
        target.teardown(session, mounted)
        session.close()


@pytest.mark.privileged
def test_utilisation_holds_within_two_percent(mounted_fs):
    mounted = mounted_fs("ext4")
    config = AgingConfig(seed=1, ops=30000, max_files=4000, utilization=0.6,
                         size_max=4 * MiB, check_every=32)
    log = Engine(config, mounted.path / "aged").run()
    reached = [u for _, _, u in log.utilization if u >= 0.55]
    assert reached, "the run never approached the target"
    assert max(u for _, _, u in log.utilization) <= 0.6 + 0.02
    assert log.deleted_for_space > 0


@pytest.mark.privileged
def test_fiemap_layouts_of_known_files(mounted_fs):
    mounted = mounted_fs("ext4")
    a, b = mounted.path / "a", mounted.path / "b"
    with a.open("wb") as fa, b.open("wb") as fb:
        for _ in range(32):  # interleaved chunks, each forced to disk
            for handle in (fa, fb):
                handle.write(os.urandom(64 * 1024))
                handle.flush()
                os.fsync(handle.fileno())
    contiguous = mounted.path / "c"
    contiguous.write_bytes(os.urandom(4 * MiB))
    assert layout_score([file_layout(extents(contiguous))]) == 1.0
    interleaved = [file_layout(extents(p)) for p in (a, b)]
    assert all(f.extents > 1 for f in interleaved)
    assert layout_score(interleaved) < 1.0


@pytest.mark.privileged
def test_free_space_histogram_sums_to_free_space(mounted_fs):
    mounted = mounted_fs("ext4")
    (mounted.path / "x").write_bytes(os.urandom(8 * MiB))
    os.sync()
    free = probe("ext4", mounted.description.device, str(mounted.path))
    stats = os.statvfs(mounted.path)
    assert free.free_bytes == stats.f_bfree * stats.f_frsize
    assert sum(h[3] for h in free.histogram) == free.free_bytes  # exact: byte counts
    assert free.largest_bytes > 0 and free.free_extents >= 1


@pytest.mark.privileged
def test_fuse_is_not_measurable_never_zero(mounted_fs):
    requires("ntfs-3g")
    mounted = mounted_fs("ntfs", 64 * MiB)
    (mounted.path / "aged").mkdir()
    (mounted.path / "aged" / "f0000001").write_bytes(b"x" * 8192)
    with pytest.raises(NotMeasurable):
        extents(mounted.path / "aged" / "f0000001")
    report = used_space_probe(mounted.path / "aged")
    assert report["measurable"] is False and "not measurable here" in report["reason"]


@pytest.mark.privileged
def test_age_then_image_restores_the_same_files_and_extents(tmp_path, lab):
    requires("mkfs.ext4", "losetup")
    out = tmp_path / "aged"
    record = age(TargetSpec(name="a", fs="ext4", size=256 * MiB),
                 AgingConfig(seed=5, ops=4000, max_files=500, size_max=1 * MiB,
                             utilization=0.7, probe_every=1000), out, lab)
    assert record.image is not None and record.image.kind == "sparse"
    snapshots = json.loads((run_dir(out) / "fragmentation.json").read_text())
    assert len(snapshots) >= 4 and snapshots[-1]["used"]["measurable"]
    # the aged files' sizes (issue 23): power-of-two buckets that hold every file
    sizes = record.file_sizes
    assert sum(b["files"] for b in sizes  # exact: file counts
               if b["to_bytes"]) == snapshots[-1]["used"]["files"]
    assert all(b["from_bytes"] <= b["bytes"] / b["files"] <= b["to_bytes"]
               for b in sizes if b["files"])
    assert max(b["from_bytes"] for b in sizes) <= 1 * MiB  # size_max
    assert json.loads((out / "image.json").read_text())["file_sizes"] == sizes
    image = out / record.image.path
    device = subprocess.run(["losetup", "--find", "--show", "--read-only", str(image)],
                            check=True, capture_output=True, text=True).stdout.strip()
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    try:
        subprocess.run(["mount", "-o", "ro,noload", device, str(mnt)], check=True)
        try:
            files = sorted(p.relative_to(mnt) for p in (mnt / "aged").rglob("f*"))
            assert len(files) == snapshots[-1]["used"]["files"] or files
            restored = used_space_probe(mnt / "aged")
            assert restored["extents_per_file"] == snapshots[-1]["used"]["extents_per_file"]
            assert restored["layout_score"] == pytest.approx(
                snapshots[-1]["used"]["layout_score"])
        finally:
            subprocess.run(["umount", str(mnt)], check=True)
    finally:
        subprocess.run(["losetup", "-d", device], check=True)


@pytest.mark.privileged
def test_btrfs_free_space_tree_probe(mounted_fs):
    mounted = mounted_fs("btrfs")
    (mounted.path / "x").write_bytes(os.urandom(8 * MiB))
    os.sync()
    free = probe("btrfs", mounted.description.device, str(mounted.path))
    assert free.not_measurable == "" and free.free_extents >= 1
    assert sum(h[3] for h in free.histogram) == free.free_bytes > 0  # exact: byte counts


@pytest.mark.privileged
def test_fresh_vs_aged_campaign_reports_ratios(tmp_path, lab):
    requires("fio", "mkfs.ext4", "losetup")
    from fslab import api
    from fslab.plan.loading import load_campaign

    aged_dir = tmp_path / "aged"
    age(TargetSpec(name="a", fs="ext4", size=256 * MiB),
        AgingConfig(seed=9, ops=6000, max_files=800, size_max=512 * 1024, utilization=0.7),
        aged_dir, lab)
    report = api.report(aged_dir)
    assert "Latency of each operation over time" in report.read_text()
    campaign = tmp_path / "c.toml"
    campaign.write_text(f"""
iterations = 3
fresh = "run"
runtime = 1
file_size = "8M"
[[target]]
name = "ext4-aged"
fs = "ext4"
image = "{aged_dir / 'image.img'}"
[[target]]
name = "ext4-fresh"
fs = "ext4"
fresh_copy_of = "{aged_dir / 'image.img'}"
[[workload]]
preset = "agedfiles"
only = ["aged_readall", "aged_create"]
options = {{ count = 100 }}
[[workload]]
preset = "aged"
options = {{ nrfiles = 200 }}
""")
    result = api.run(load_campaign(campaign), out=tmp_path / "r", lab=lab)
    assert result.runner.failed == 0, api.runs(tmp_path / "r").to_dict("records")
    # A run ends with the whole analysis (issue 24): report renders it without analysing.
    ratios = (tmp_path / "r" / "stats" / "aged_vs_fresh.csv").read_text()
    assert "aged_readall,read,bw_bytes,higher,False,ext4-aged,ext4-fresh" in ratios
    assert "aged_readall,read,ops_per_s,higher,True,ext4-aged,ext4-fresh" in ratios
    assert "aged,write,iops" in ratios
    verdicts = (tmp_path / "r" / "stats" / "verdicts.txt").read_text()
    assert "ext4-aged vs ext4-fresh: aged/fresh" in verdicts


@pytest.mark.privileged
def test_zfs_free_space_from_zdb_metaslabs(tmp_path, lab):
    requires("zfs-fuse", "zpool", "zdb", "fio")
    record = age(TargetSpec(name="z", fs="zfs", size=256 * MiB),
                 AgingConfig(seed=2, ops=2000, max_files=300, size_max=256 * 1024),
                 tmp_path / "aged", lab, image="none")
    assert record.ops_done == 2000
    last = json.loads((run_dir(tmp_path / "aged") / "fragmentation.json").read_text())[-1]
    free = last["free"]
    assert free["not_measurable"] == "" and free["free_extents"] > 0
    assert sum(h[3] for h in free["histogram"]) == pytest.approx(free["free_bytes"], rel=0.01)
    assert last["used"]["measurable"] is False  # FUSE: no FIEMAP, said so


def test_mix_from_csv_and_toml_config(tmp_path):
    from fslab.aging.config import load_config, mix_from_csv
    from fslab.core.errors import UserError

    (tmp_path / "mix.csv").write_text("op,share\ncreate,3\nread,1\n")
    assert mix_from_csv(tmp_path / "mix.csv") == {"create": 3.0, "read": 1.0}
    (tmp_path / "a.toml").write_text(
        "[aging]\nseed = 4\nfile_choice = \"gaussian\"\nvelocity = 0.2\n"
        "[aging.mix]\ncreate = 1\nappend = 2\n")
    config = load_config(tmp_path / "a.toml")
    assert (config.seed, config.file_choice, config.mix) == (4, "gaussian",
                                                             {"create": 1, "append": 2})
    (tmp_path / "b.toml").write_text("[aging]\nsede = 4\n")
    with pytest.raises(UserError, match="unknown aging key sede"):
        load_config(tmp_path / "b.toml")
    with pytest.raises(UserError, match="unknown aging operation"):
        AgingConfig(mix={"explode": 1}).validate()


@pytest.mark.privileged
@pytest.mark.parametrize("fs", ["ext4", "xfs", "btrfs"])
def test_kept_images_of_every_kind_restore_as_targets(tmp_path, lab, fs):
    """zstd and metadata images of an aged file system, used as a target's image, give
    back the layout its sparse image gives: the same files with the same extents (and on
    ext4 the very extents of the last probe before unmounting; xfs and btrfs settle
    delayed allocations at unmount)."""
    requires(f"mkfs.{fs}", "losetup", "zstd", "e2image", "xfs_mdrestore", "btrfs-image")
    from fslab.core.errors import UserError
    from fslab.plan.target_entries import TargetEntry, target_spec
    from fslab.targets.images import keep

    out = tmp_path / "aged"
    record = age(TargetSpec(name="a", fs=fs, size=320 * MiB),
                 AgingConfig(seed=3, ops=3000, max_files=400, size_max=512 * 1024,
                             utilization=0.7), out, lab)
    assert record.image is not None
    sparse = out / record.image.path
    about = json.loads((out / "image.json").read_text())
    assert about["image"]["fs_bytes"] == 320 * MiB
    assert f'image = "{sparse.resolve()}"' in about["as_target"]
    images = {"sparse": sparse}
    device = subprocess.run(["losetup", "--find", "--show", "--read-only", str(sparse)],
                            check=True, capture_output=True, text=True).stdout.strip()
    try:
        for kind in ("zstd", "metadata"):
            directory = tmp_path / kind
            directory.mkdir()
            kept = keep(sparse, device, fs, directory, kind)
            (directory / "image.json").write_text(json.dumps({"image": kept.to_json(), "fs": fs}))
            images[kind] = directory / kept.path
    finally:
        subprocess.run(["losetup", "-d", device], check=True)
    assert images["zstd"].stat().st_size < sparse.stat().st_blocks * 512 * 0.7

    probes = {}
    for kind, image in images.items():
        spec = target_spec(TargetEntry(name=f"r-{kind}", fs=fs, image=str(image)),
                            64 * MiB, set())
        assert spec.size == 320 * MiB, kind  # from image.json, not the kept file's size
        target = make_target(spec)
        session = lab.open_session()
        mounted = target.provision(session)
        try:
            assert mounted.path is not None
            probes[kind] = used_space_probe(mounted.path / "aged")
        finally:
            target.teardown(session, mounted)
            session.close()
    assert probes["sparse"]["files"] > 100
    for kind in ("zstd", "metadata"):
        assert probes[kind]["extents_per_file"] == probes["sparse"]["extents_per_file"], kind
        assert probes[kind]["layout_score"] == probes["sparse"]["layout_score"], kind
    if fs == "ext4":
        last = json.loads((run_dir(out) / "fragmentation.json").read_text())[-1]["used"]
        assert probes["metadata"]["extents_per_file"] == last["extents_per_file"]
    with pytest.raises(UserError, match=f"holds {fs}"):
        target_spec(TargetEntry(name="w", fs="ext2", image=str(images["zstd"])),
                     64 * MiB, set())


@pytest.mark.privileged
def test_compare_and_report_across_aging_runs(tmp_path, lab):
    """Two real aging runs (50 % vs 90 % utilisation) are results directories: `fslab
    compare` gives per-operation latency ratios with intervals (over their sections) and
    the end state, naming what differs in the setup; `fslab analyze` writes the same
    stats/ tables as for a campaign; `fslab report A B` puts both side by side through the
    one report every results directory gets, and it renders."""
    requires("mkfs.ext4", "losetup", "chromium")
    from fslab import api
    from fslab.analysis.step import steps, table_files
    from tests.ingest.test_import_report import chromium

    runs = {}
    for share in (0.5, 0.9):
        out = tmp_path / f"u{int(share * 100)}"
        age(TargetSpec(name="a", fs="ext4", size=256 * MiB),
            AgingConfig(seed=4, ops=4000, max_files=600, size_max=1 * MiB,
                        utilization=share, probe_every=1000), out, lab, image="none")
        runs[share] = out
    written = {p.name for p in (runs[0.5] / "stats").iterdir()}
    # the tables a step writes only when it has rows (a sweep's, a zfs pool's, a study's …)
    optional = {name for step in steps() for name in step.optional}
    assert {name for key, name in table_files().items() if key not in optional
            } <= written  # the run ends with its analysis, as a campaign's does
    api.analyze(runs[0.5])
    assert {p.name for p in (runs[0.5] / "stats").iterdir()} == written
    summary = api.load(runs[0.5])
    assert {"op_lat_p50_ns", "op_lat_mean_ns", "file_layout_score", "free_extents",
            "used_share", "ops_per_s"} <= set(summary["metric"])
    cells, differences = api.compare(runs[0.5], runs[0.9], 0.02)
    assert ("aging utilization", "0.5", "0.9") in differences
    medians = cells[cells["metric"] == "op_lat_p50_ns"]
    assert len(medians) >= 3 and (medians["n_base"] == 20).all()
    assert (medians["ratio_ci_low"] < medians["ratio"]).all()
    assert (medians["ratio"] < medians["ratio_ci_high"]).all()
    assert set(cells["decision"]) <= {"improved", "regressed", "same", "unresolved", ""}
    assert {"file_layout_score", "free_extents"} <= set(cells["metric"])
    layout = cells[cells["metric"] == "file_layout_score"].iloc[0]
    assert layout["n_base"] == 1 and layout["note"].startswith("no interval")

    shown = fslab_here("compare", str(runs[0.5]), str(runs[0.9]))
    assert shown.returncode in (0, 1) and "op_lat_p50_ns" in shown.stdout, shown.stderr

    page = tmp_path / "both.html"
    made = fslab_here("report", str(runs[0.5]), str(runs[0.9]), "-o", str(page))
    assert made.returncode == 0, made.stderr
    html = page.read_text()
    assert "u50" in html and "u90" in html and "Share of files in one piece" in html
    assert "Latency of each operation over time" in html and "Aging runs" in html
    dom = chromium(page, tmp_path)
    rendered = int(re.search(r'data-charts-rendered="(\d+)"', dom).group(1))
    assert re.search(r'data-js-errors="0"', dom) and rendered == html.count('data-chart="')
    assert rendered >= 6
    said: list[str] = []
    single = api.report(runs[0.9], say=said.append)
    assert said == [] and "Latency per operation" in single.read_text()
    bad = fslab_here("report", str(runs[0.5]), str(tmp_path / "nothing"))
    assert bad.returncode == 2 and "not an fslab results directory" in bad.stderr
    stamp = json.loads((runs[0.9] / "format.json").read_text())
    (runs[0.9] / "format.json").write_text(json.dumps({**stamp, "format": 99}))
    for command in (["compare", str(runs[0.5]), str(runs[0.9])], ["report", str(runs[0.9])]):
        newer = fslab_here(*command)
        assert newer.returncode == 2 and "newer fslab (results format 99" in newer.stderr
        assert "Traceback" not in newer.stderr


@pytest.mark.privileged
def test_an_aging_directory_of_the_old_format_is_upgraded_in_place(tmp_path, lab):
    """An aging directory written before aging runs were results directories (aging
    format 2: its files at the top) is read by report, compare and analyze: upgraded in
    place, nothing of it removed; a newer aging format is refused in one line."""
    requires("mkfs.ext4", "losetup")
    import shutil

    from fslab import api

    new = tmp_path / "new"
    age(TargetSpec(name="ext4", fs="ext4", size=128 * MiB),  # old ones named it by its fs
        AgingConfig(seed=2, ops=1500, max_files=300, size_max=256 * 1024), new, lab,
        image="none")
    old = tmp_path / "old"
    old.mkdir()
    for name in ("oplog.parquet", "utilization.csv", "fragmentation.json"):
        shutil.copy(run_dir(new) / name, old / name)
    record = json.loads((run_dir(new) / "aging.json").read_text())
    (old / "aging.json").write_text(json.dumps({**record, "format": 2}))
    report = api.report(old)
    assert "Aging runs" in report.read_text()
    assert (old / "aging.json").exists() and (old / "format.json").exists()
    upgraded = {name: (old / name).stat().st_mtime_ns
                for name in ("format.json", "metrics.parquet", "campaign.toml")}
    api.load(old)  # opened again: read, not upgraded a second time
    assert upgraded == {name: (old / name).stat().st_mtime_ns for name in upgraded}
    same = api.compare(new, old).cells
    latency = same[same["metric"] == "op_lat_p50_ns"]
    assert len(latency) >= 3 and ((latency["ratio"] - 1).abs() < 1e-12).all()
    newer = tmp_path / "newer"
    newer.mkdir()
    (newer / "aging.json").write_text(json.dumps({**record, "format": 99}))
    refused = fslab_here("report", str(newer))
    assert refused.returncode == 2 and "newer fslab (aging format 99" in refused.stderr


@pytest.mark.privileged
def test_room_is_made_as_root_sees_the_space(mounted_fs):
    """The aging writes as root and so do the runs: room is made until root can write
    what the runs need (and a tenth more), read from the file system after each batch —
    ext4's 5 % root reserve is root's and is not freed too (counted from a non-root
    user's space, it was, and ext4's runs began 7 points emptier than xfs's)."""
    from fslab.aging.room import ROOM_MARGIN, make_room
    from fslab.host.space import root_space
    from fslab.workloads.agedfiles import AGED_TREE

    mounted = mounted_fs("ext4", 128 * MiB)
    tree = mounted.path / AGED_TREE
    tree.mkdir()
    chunk = b"\0" * MiB
    for index in range(200):  # until the disk is full, reserve and all
        try:
            (tree / f"f{index:03d}").write_bytes(chunk)
        except OSError:
            break
    stats = os.statvfs(mounted.path)
    assert stats.f_bavail == 0 < stats.f_bfree  # full for a non-root user, not for root
    full = root_space(mounted.path)
    assert full is not None and full.free < MiB and full.fill > 0.99
    need = 8 * MiB
    released = make_room(mounted.path, need, seed=1)
    after = root_space(mounted.path)
    assert after is not None and after.free >= need * ROOM_MARGIN
    # what was deleted is about what root needed: the reserve (6 MiB here) stays
    assert released["bytes"] < need * ROOM_MARGIN + 2 * MiB
    stats = os.statvfs(mounted.path)
    assert stats.f_bavail * stats.f_frsize < need  # what a non-root user may write: less
