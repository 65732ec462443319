"""The command line: user mistakes are one line and a non-zero exit, never a traceback."""

import json
import os

import pytest

from tests.conftest import fslab_cmd, fslab_here


def assert_one_line_error(proc, fragment):
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("fslab: error:") and fragment in lines[0], lines[0]
    assert "Traceback" not in proc.stdout + proc.stderr


def test_malformed_toml(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("iterations = [1,\n")
    assert_one_line_error(fslab_here("run", str(bad)), "malformed TOML")


@pytest.mark.parametrize(("args", "fragment"), [
    (["--fs", "reiserfs"], "unknown file system 'reiserfs'"),
    (["--size", "12Q"], "bad size '12Q'"),
    (["--file-size", "lots"], "bad size 'lots'"),
    (["--preset", "nope"], "unknown preset 'nope'"),
    (["--workloads", "fly"], "has no workload fly"),
    (["--runtime", "0"], "bad duration"),
    (["--iterations", "0"], "--iterations must be at least 1"),
    (["--size", "512M", "--file-size", "300M"], "needs 1.17 GiB"),
])
def test_bad_flags(tmp_path, args, fragment):
    assert_one_line_error(fslab_here("run", *args, "--out", str(tmp_path / "o")), fragment)
    assert not (tmp_path / "o").exists()


def test_missing_campaign_file_and_results_dir(tmp_path):
    assert_one_line_error(fslab_here("run", str(tmp_path / "none.toml")), "cannot read campaign")
    assert_one_line_error(fslab_here("analyze", str(tmp_path)), "not an fslab results directory")
    assert_one_line_error(fslab_here("run", "--resume"), "--resume needs --out")


def test_fio_missing(tmp_path):
    proc = fslab_cmd("run", "--fs", f"dir:{tmp_path}", "--out", str(tmp_path / "o"),
                     env={**os.environ, "PATH": "/nonexistent"})
    assert_one_line_error(proc, "fio not found: apt-get install fio")


def test_not_root(monkeypatch):
    from fslab import api
    from fslab.core.errors import UserError
    from fslab.host import system
    from fslab.plan.loading import load_campaign
    from fslab.plan.schema import Overrides

    monkeypatch.setattr(system, "is_root", lambda: False)
    campaign = load_campaign(None, Overrides(fs=["xfs"]))
    with pytest.raises(UserError, match=r"target xfs \(xfs\) needs root .* dir:PATH"):
        api.prepare(campaign)


def test_dry_run_prints_plan_and_job_files_and_touches_nothing(tmp_path):
    out, lab_dir = tmp_path / "o", tmp_path / "lab"
    proc = fslab_here("run", "--dry-run", "--fs", f"ext4,dir:{tmp_path}", "--workloads",
                     "randread,mixed", "--iterations", "2", "--seed", "9", "--out", str(out),
                     "--lab", str(lab_dir))
    assert proc.returncode == 0, proc.stderr  # CI runs it as root, with fio
    text = proc.stdout
    assert "2 targets × 2 workloads × 2 iterations = 8 runs" in text
    assert "seed 9" in text
    assert "rw=randrw" in text and "rwmixread=70" in text and "numjobs=4" in text
    assert "lazy_itable_init=0,lazy_journal_init=0" in text
    assert not out.exists() and not lab_dir.exists()


def test_dry_run_with_no_arguments_measures_the_file_system_not_the_cache():
    """Issue 12: the default is loop direct I/O and fio direct=1, with a ramp."""
    proc = fslab_here("run", "--dry-run", "--lab", "/nonexistent-fslab-lab")
    assert proc.returncode == 0, proc.stderr
    assert "loop_direct_io: True" in proc.stdout
    jobs = proc.stdout.split("── ")[1:]
    assert len(jobs) == 5 and all("direct=1" in job and "ramp_time=1" in job for job in jobs)
    assert "preset direct5" in proc.stdout


def table_rows(text: str) -> dict[str, list[str]]:
    """First cell -> cells, for every row of rich's box tables in `text`."""
    rows: dict[str, list[str]] = {}
    for line in text.splitlines():
        if line.startswith("│"):
            cells = [c.strip() for c in line.strip("│").split("│")]
            if cells[0]:
                rows[cells[0]] = cells
    return rows


def test_targets_lists_every_kind_and_why_not():
    proc = fslab_here("targets")
    assert proc.returncode == 0
    rows = table_rows(proc.stdout)
    for name in ("ext2", "ext3", "ext4", "xfs", "btrfs", "zfs", "ntfs", "exfat", "fat32",
                 "tmpfs", "raw", "zfs-mirror", "btrfs-raid1", "md-raid1-ext4", "md-raid1-xfs"):
        assert name in rows, name  # a row of its own, not a substring of another
        here = rows[name][-1]
        assert here.startswith("yes") or (here.startswith("no: ") and len(here) > 8), here
    if not os.path.exists("/proc/mdstat"):  # this machine kind has no md
        assert "md RAID" in rows["md-raid1-ext4"][-1]
    assert "[[target]]" in proc.stdout


def test_targets_says_where_a_file_system_is_made_and_what_that_measures():
    """The device kind is a target option, not a name for --fs: `fslab targets` lists it
    beside the image, each with what it measures and what it formats."""
    proc = fslab_here("targets")
    assert proc.returncode == 0
    rows: dict[str, list[str]] = {}  # a wrapped cell's lines joined
    last = ""
    for line in proc.stdout[proc.stdout.index("Where ext2"):].splitlines():
        if line.startswith("│"):
            cells = [c.strip() for c in line.strip("│").split("│")]
            last = cells[0] or last
            rows[last] = [" ".join(filter(None, pair)) for pair in
                          zip(rows.get(last, [""] * len(cells)), cells, strict=True)]
    assert set(rows) == {"image", "device"}
    assert "--lab DIR" in rows["image"][1] and "under a file" in rows["image"][2]
    assert "only the images" in rows["image"][3]
    assert 'device = "/dev/sdX"' in rows["device"][1]
    assert "--confirm-device /dev/sdX" in rows["device"][1]
    assert "the device itself" in rows["device"][2] and "all its data" in rows["device"][3]


def test_presets_lists_basic5():
    proc = fslab_cmd("presets", env={**os.environ, "COLUMNS": "250"})
    assert proc.returncode == 0
    basic5 = proc.stdout[proc.stdout.index("basic5:"):proc.stdout.index("server6:")]
    rows = table_rows(basic5)
    assert set(rows) == {"randread", "randwrite", "seqread", "seqwrite", "mixed"}
    params = json.loads(fslab_cmd("presets", "--json").stdout)["presets"]["basic5"]["jobs"]
    assert set(params) == set(rows)
    for job, key, value in (("randread", "ioengine", "sync"), ("randread", "numjobs", 4),
                            ("mixed", "rwmixread", 70)):
        assert params[job][key]["value"] == value
        assert params[job][key]["source"] == "study"
        assert params[job][key]["study"] == "desktop-fio"
    assert params["seqwrite"]["direct"] == {"value": "0 (buffered)", "source": "fio default",
                                            "why": "the study states none"}


def test_without_a_terminal_each_finished_run_is_one_line(tmp_path):
    """A CI log, nohup, `make run > log`: one line per finished run with its headline
    value and the time left, instead of nothing until the end."""
    done = fslab_cmd("run", "--fs", "null", "--preset", "null", "--iterations", "3",
                     "--out", str(tmp_path / "r"), "--lab", str(tmp_path / "lab"))
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("[")]
    assert len(lines) == 3, done.stderr
    assert lines[0].startswith("[1/3] iteration 1 null w1: read ") and "IOPS" in lines[0]
    assert "elapsed, about" in lines[-1] and lines[-1].startswith("[3/3] iteration 3")
