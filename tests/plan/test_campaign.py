"""Campaign files and flags resolve into one explicit campaign; mistakes are one line."""

from pathlib import Path

import pytest

from fslab.core.errors import UserError
from fslab.plan.loading import load_campaign
from fslab.plan.order import make_plan
from fslab.plan.schema import Overrides
from fslab.plan.workload_entries import build_workloads
from fslab.workloads.base import Where


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "campaign.toml"
    path.write_text(text)
    return path


def test_defaults_are_ext4_xfs_btrfs_direct5_five_iterations():
    campaign = load_campaign(None)
    assert [t.name for t in campaign.targets] == ["ext4", "xfs", "btrfs"]
    assert [w.name for w in build_workloads(campaign)] == [
        "randread", "randwrite", "seqread", "seqwrite", "mixed"]
    assert campaign.iterations == 5
    assert campaign.fresh == "iteration"
    # 1 GiB images, 4 jobs: the auto file size fits half the image.
    assert campaign.file_size * 4 <= campaign.image_size * 0.5


def test_toml_with_targets_options_and_job_file(tmp_path):
    (tmp_path / "mine.fio").write_text("[global]\nbs=8k\n[mine]\nrw=randwrite\nsize=8M\n")
    path = write(tmp_path, """
name = "study"
iterations = 4
runtime = "2s"
seed = 7
image_size = "2G"
file_size = "64M"

[[target]]
name = "xfs-nobarrier"
fs = "xfs"
mkfs_options = "-m crc=1"
mount_options = "noatime"

[[target]]
fs = "ext4"
image_size = "512M"

[[workload]]
preset = "basic5"
only = ["randread"]
options = { direct = 1 }

[[workload]]
job_file = "mine.fio"
""")
    campaign = load_campaign(path)
    assert campaign.runtime == 2 and campaign.seed == 7 and campaign.file_size == 64 * 1024**2
    xfs, ext4 = campaign.targets
    assert (xfs.name, xfs.fs, xfs.mkfs_options, xfs.mount_options) == (
        "xfs-nobarrier", "xfs", ("-m", "crc=1"), "noatime")
    assert ext4.size == 512 * 1024**2 and xfs.size == 2 * 1024**3
    randread, mine = build_workloads(campaign)
    job = randread.render(Where(Path("/mnt/x")))["job.fio"]
    assert "direct=1" in job and "numjobs=4" in job and "directory=/mnt/x" in job
    mine_job = mine.render(Where(Path("/mnt/y")))["job.fio"]
    assert mine_job.splitlines()[:2] == ["[global]", "directory=/mnt/y"]
    # The resolved campaign keeps the job file's text: it reproduces without the file.
    assert "rw=randwrite" in str(campaign.to_dict()["workload"][1]["job_text"])


def test_resolved_campaign_round_trips(tmp_path):
    import tomli_w

    campaign = load_campaign(None, Overrides(fs=["ext4", "dir:/tmp"], iterations=2, seed=3))
    saved = write(tmp_path, tomli_w.dumps(campaign.to_dict()))
    again = load_campaign(saved)
    assert again.to_dict() == campaign.to_dict()
    assert [r.run_id for r in make_plan(again).runs] == [r.run_id for r in make_plan(campaign).runs]


def test_order_is_shuffled_per_iteration_and_seeded():
    campaign = load_campaign(None, Overrides(seed=1, iterations=3))
    plan = make_plan(campaign)
    orders = [[r.run_id[5:] for r in plan.iteration(i)] for i in (1, 2, 3)]
    assert all(sorted(o) == sorted(orders[0]) for o in orders)  # same cells each iteration
    assert len({tuple(o) for o in orders}) > 1  # but not the same order
    other = make_plan(load_campaign(None, Overrides(seed=2, iterations=3)))
    assert [r.run_id for r in other.runs] != [r.run_id for r in plan.runs]
    again = make_plan(load_campaign(None, Overrides(seed=1, iterations=3)))
    assert [r.run_id for r in again.runs] == [r.run_id for r in plan.runs]


@pytest.mark.parametrize(("text", "message"), [
    ("iterations = [", "malformed TOML"),
    ("iteratons = 3", "iteratons: unknown key"),
    ("iterations = 0", "iterations"),
    ("[[target]]\nfs = \"reiserfs\"", "unknown file system 'reiserfs'"),
    ("image_size = \"12Q\"", "bad size '12Q'"),
    ("[[workload]]\npreset = \"nope\"", "unknown preset 'nope'"),
    ("[[workload]]\npreset = \"basic5\"\nonly = [\"zz\"]", "has no workload zz"),
    ("[[target]]\nfs = \"ext4\"\n[[target]]\nfs = \"ext4\"", "repeated: ext4"),
    ("[[workload]]\njob_file = \"missing.fio\"", "cannot read job file"),
])
def test_bad_campaigns_are_one_line_errors(tmp_path, text, message):
    with pytest.raises(UserError, match=message) as info:
        load_campaign(write(tmp_path, text))
    assert "\n" not in str(info.value).strip()


def test_job_file_writing_outside_target_is_refused(tmp_path):
    (tmp_path / "evil.fio").write_text("[evil]\nrw=write\nfilename=/dev/sda\n")
    campaign = load_campaign(write(tmp_path, "[[workload]]\njob_file = \"evil.fio\""))
    with pytest.raises(UserError, match="points outside the target"):
        build_workloads(campaign)


def test_workload_filter_flag():
    campaign = load_campaign(None, Overrides(workloads=["randread", "seqwrite"]))
    assert [w.name for w in build_workloads(campaign)] == ["randread", "seqwrite"]


def test_resume_accepts_the_original_command_and_refuses_only_conflicts(tmp_path):
    from fslab.plan.resume import progress_line, resume_campaign
    from fslab.results.store import ResultsDir

    flags = Overrides(fs=["ext4"], workloads=["randread"], iterations=2, runtime="2")
    (tmp_path / "c.toml").write_text('iterations = 2\n[[target]]\nfs = "ext4"\n'
                                     '[[workload]]\npreset = "direct5"\nonly = ["randread"]\n')
    out = tmp_path / "r"
    original = load_campaign(None, flags)  # no seed given: one is drawn and saved
    ResultsDir.create(out).write_campaign(original.to_dict())
    assert resume_campaign(out, None, flags).seed == original.seed  # as typed: fine
    assert resume_campaign(out, tmp_path / "c.toml").seed == original.seed
    assert resume_campaign(out, None, Overrides(iterations=3)).iterations == 3  # extends
    # A bare --resume keeps the saved iterations: every flag left out is None (a default of
    # False once read as "given" and extended 2 iterations to the default 5).
    assert resume_campaign(out, None, Overrides()).iterations == 2
    assert all(value is None for value in vars(Overrides()).values())
    with pytest.raises(UserError) as error:
        resume_campaign(out, None, Overrides(runtime="9", fs=["xfs"]))
    message = str(error.value)
    assert "runtime: saved 2, given 9" in message and "target: saved ext4, given xfs" in message
    run_dir = ResultsDir.open(out).fresh_run_dir("i001-ext4-randread")
    (run_dir / "run.json").write_text('{"run_id": "i001-ext4-randread"}')
    assert progress_line(original, out) == (
        "1 of 2 runs done; continuing with iteration 2, run 1 (i002-ext4-randread)")


def test_the_suite_registry_is_checked_at_load():
    import dataclasses

    from fslab.workloads.suites import _checked, get_suite

    scan = get_suite("scan")
    assert _checked({"scan": scan}) == {"scan": scan}
    for bad in (dataclasses.replace(scan, numjobs={}),
                dataclasses.replace(scan, parameters={"a/b": scan.parameters["scan"]},
                                     numjobs={"a/b": 1}),
                dataclasses.replace(scan, numjobs={"scan": 0})):
        with pytest.raises(AssertionError):
            _checked({"scan": bad})


@pytest.mark.parametrize("fresh, refused", [("iteration", True), ("campaign", True),
                                            ("run", False)])
def test_two_targets_on_one_device_are_refused_before_anything_is_made(tmp_path, fresh,
                                                                        refused):
    """Every target's file system stays mounted through its iteration, so two targets
    cannot share a device, however its path is spelled; fresh = "run" makes one at a
    time. (The devices are not confirmed: that problem is said beside, as a dry run
    says every problem.)"""
    from fslab.plan.preflight import prepare

    (tmp_path / "sdz").symlink_to("/dev/sdz-not-here")
    path = write(tmp_path, f"""
fresh = "{fresh}"
[[target]]
fs = "ext4"
device = "/dev/sdz-not-here"
[[target]]
fs = "xfs"
device = "{tmp_path / 'sdz'}"
""")
    problems: list[str] = []
    prepare(load_campaign(path), problems=problems)
    shared = [p for p in problems if "both name" in p]
    assert len(shared) == int(refused)
    if refused:
        assert shared[0].startswith("targets ext4 and xfs both name ")
        assert "a device of its own" in shared[0]
    assert sum("--confirm-device" in p for p in problems) == 2
