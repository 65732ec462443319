"""A tune killed with SIGKILL in the middle of its race and resumed with --resume ends
with the answer an uninterrupted tune of the same seed gives (issue 38 item 7): every
decision is a function of what is on disk."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import pandas as pd

from tests.conftest import FSLAB, REPO, fslab_here

CAMPAIGN = """name = "resume"
seed = 21
ceiling = false
[[target]]
name = "sim"
fs = "null"
effects = { "noatime" = 1.25, "commit=60" = 1.1, "-I 128" = 0.85 }
[[workload]]
preset = "null"
options = { cv = 0.10, sleep = 0.04 }
[tune]
"mount_options.atime" = ["relatime", "noatime"]
"mount_options.commit" = ["commit=5", "commit=60"]
"mkfs_options.inode" = ["-I 256", "-I 128"]
"mount_options.acl" = ["noacl", "acl"]
max_runs = 100
margin = "3%"
"""


def runs_in(stage: Path) -> int:
    runs = stage / "runs"
    return sum(1 for e in runs.iterdir() if (e / "run.json").exists()) if runs.is_dir() else 0


def test_a_tune_killed_mid_race_resumes_to_the_same_answer(tmp_path):
    campaign = tmp_path / "tune.toml"
    campaign.write_text(CAMPAIGN)
    whole = fslab_here("tune", str(campaign), "--out", str(tmp_path / "whole"), "--lab",
                       str(tmp_path / "lab1"))
    assert whole.returncode == 0, whole.stderr
    killed = tmp_path / "killed"
    tuner = subprocess.Popen([*FSLAB, "tune", str(campaign), "--out", str(killed), "--lab",
                              str(tmp_path / "lab2")], cwd=REPO, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while runs_in(killed / "race") < 6 and tuner.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert tuner.poll() is None, "the tune ended before it could be killed mid-race"
    tuner.send_signal(signal.SIGKILL)
    tuner.wait()
    assert not (killed / "stats" / "tune.csv").exists()
    resumed = fslab_here("tune", "--resume", "--out", str(killed), "--lab",
                         str(tmp_path / "lab2"))
    assert resumed.returncode == 0, resumed.stderr
    for table in ("tune.csv", "tune_set.csv", "tune_options.csv"):
        a = pd.read_csv(tmp_path / "whole" / "stats" / table, keep_default_na=False)
        b = pd.read_csv(killed / "stats" / table, keep_default_na=False)
        # the same answer; the machine's seconds are the only figures that may differ
        pd.testing.assert_frame_equal(a.drop(columns="machine_s", errors="ignore"),
                                      b.drop(columns="machine_s", errors="ignore"))
    assert whole.stdout.splitlines()[0] == resumed.stdout.splitlines()[0]  # the answer
