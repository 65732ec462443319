"""The history: a catalogue of campaigns and the changes across them, on simulator
campaigns with known truth (a target that falls to 0.8× from version 1.9 on, one that
never changes), through the same commands a user types."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from fslab import api
from fslab.history import catalogue, writing
from fslab.history.changes import best_split, best_splits, detect, interval
from fslab.plan.loading import resolve
from fslab.plan.schema import CampaignFile, Overrides
from tests.conftest import fslab_here, requires

VERSIONS = [f"1.{i}" for i in range(1, 17)]


def versioned(version: str, scale_a: float, seed: int, tmp_path: Path, jobs: int = 1) -> Path:
    """One simulator campaign labelled version=VERSION: targets a (scale_a) and b (1)."""
    parsed = CampaignFile.model_validate({
        "name": "nightly", "iterations": 3, "seed": seed,
        "labels": {"version": version},
        "target": [{"name": "a", "fs": "null", "scale": scale_a},
                   {"name": "b", "fs": "null", "scale": 1.0}],
        "workload": [{"preset": "null",
                      "options": {"jobs": jobs, "iops": 1000, "cv": 0.05, "drift": 0.05}}]})
    out = tmp_path / f"v{version}"
    from fslab.host.lab import Lab

    api.run(resolve(parsed, Overrides(), Path.cwd()), out=out, lab=Lab(tmp_path / "lab"))
    return out


@pytest.fixture(scope="module")
def sixteen(shared) -> list[Path]:
    """Sixteen campaigns, versions 1.1 ... 1.16, target a at 0.8× from 1.9 on, made once
    for the module's tests (read-only: tests/shared.py)."""
    return [shared.get(v, lambda root, i=i, v=v: versioned(
        v, 0.8 if i >= 8 else 1.0, seed=100 + i, tmp_path=root)) for i, v in enumerate(VERSIONS)]


def test_changes_find_the_drop_and_nothing_else(sixteen, tmp_path):
    dirs = sixteen
    db = tmp_path / "catalogue"
    added = fslab_here("history", "add", *map(str, dirs), "--catalogue", str(db))
    assert added.returncode == 0, added.stderr
    found = fslab_here("history", "changes", "--by", "version", "--json", "--catalogue",
                       str(db))
    assert found.returncode == 1, found.stderr  # a regression: CI gates on this
    changes = json.loads(found.stdout)
    assert [(c["target"], c["before"], c["after"]) for c in changes] == [("a", "1.8", "1.9")]
    change = changes[0]
    assert change["ratio_ci_low"] <= 0.8 <= change["ratio_ci_high"]
    assert change["regression"] is True and change["p_value"] <= 0.05
    assert set(change) >= {"machine", "target", "workload", "op", "metric", "before", "after",
                           "ratio", "ratio_ci_low", "ratio_ci_high", "p_value", "regression"}
    text = fslab_here("history", "changes", "--by", "version", "--catalogue", str(db))
    assert "between version 1.8 and 1.9" in text.stdout
    since = fslab_here("history", "changes", "--by", "version", "--since", "1.10", "--json",
                       "--catalogue", str(db))
    assert since.returncode == 0 and json.loads(since.stdout) == []  # 1.9 < 1.10


def test_adding_twice_changes_nothing_and_a_moved_directory_is_the_same_campaign(sixteen,
                                                                                 tmp_path):
    dirs = sixteen
    db = tmp_path / "twice"
    first = writing.add(db, dirs[:3])
    before = catalogue.counts(db)
    again = writing.add(db, dirs[:3])
    assert catalogue.counts(db) == before
    assert [r.before for r in first] == [None] * 3
    assert [r.describe().startswith("already recorded") for r in again] == [True] * 3
    assert before["campaigns"] == 3 and before["runs"] > 0 and before["cells"] > 0
    moved = tmp_path / "elsewhere"
    import shutil

    shutil.copytree(dirs[0], moved)
    (found,) = writing.add(db, [moved])
    assert catalogue.counts(db) == before
    assert found.describe().startswith(f"found {found.identity.campaign_id}")
    paths = catalogue.query(db, "SELECT path FROM campaigns")["path"].tolist()
    assert str(moved.resolve()) in paths and str(dirs[0].resolve()) not in paths
    rows = catalogue.query(db, "SELECT count(*) AS n, count(DISTINCT campaign_id) AS c "
                               "FROM metrics")
    assert rows["n"].iloc[0] > 0 and rows["c"].iloc[0] == 3  # Parquet read where it lies
    listed = fslab_here("history", "list", "--catalogue", str(db))
    assert listed.returncode == 0 and "version=1.1" in listed.stdout


def test_query_is_read_only_and_errors_are_one_line(sixteen, tmp_path):
    dirs = sixteen
    db = tmp_path / "q"
    writing.add(db, dirs[:1])
    ok = fslab_here("history", "query", "SELECT key, value FROM labels WHERE key = 'version'",
                    "--json", "--catalogue", str(db))
    assert ok.returncode == 0 and json.loads(ok.stdout) == [{"key": "version", "value": "1.1"}]
    for bad in ("DELETE FROM campaigns", "SELEC nonsense"):
        done = fslab_here("history", "query", bad, "--catalogue", str(db))
        assert done.returncode == 2 and "Traceback" not in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert catalogue.counts(db)["campaigns"] == 1
    missing = fslab_here("history", "list", "--catalogue", str(tmp_path / "none"))
    assert missing.returncode == 2 and "history add" in missing.stderr


def test_an_unchanged_set_exits_zero(sixteen, tmp_path):
    dirs = sixteen
    db = tmp_path / "steady"
    writing.add(db, dirs[:8])  # 1.1 ... 1.8: nothing changed yet
    done = fslab_here("history", "changes", "--by", "version", "--catalogue", str(db))
    assert done.returncode == 0, done.stdout
    assert "0 change(s)" in done.stdout


def test_history_report_renders_in_chromium_with_the_change_marked(sixteen, tmp_path):
    from tests.ingest.test_import_report import chromium

    requires("chromium", root=False)
    dirs = sixteen
    db = tmp_path / "r"
    writing.add(db, dirs)
    page = tmp_path / "history.html"
    done = fslab_here("history", "report", "--by", "version", "--catalogue", str(db),
                      "--out", str(page))
    assert done.returncode == 0, done.stderr
    html = page.read_text()
    assert html.index("Regressions") < html.index("Series that changed")
    assert "between version 1.8 and 1.9" in html
    assert "1 series without a change" in html  # b, folded
    dom = chromium(page, tmp_path)
    assert re.search(r'data-charts-rendered="1"', dom), dom[-2000:]
    assert re.search(r'data-js-errors="0"', dom)
    assert 'class="main-svg"' in dom  # Plotly drew it
    assert re.search(r'annotation-text[^>]*>change 0\.\d\d×', dom)  # the change, marked


def test_the_split_finder_equals_ruptures():
    """best_split is ruptures' Binseg answer (L2 cost, one-point segments allowed),
    computed in O(k): held to ruptures itself over a randomised sweep."""
    import ruptures

    rng = np.random.default_rng(5)
    for _ in range(300):
        k = int(rng.integers(3, 60))
        means = rng.normal(0, 1, k) + np.where(np.arange(k) >= rng.integers(1, k),
                                               rng.normal(0, 2), 0.0)
        expected = ruptures.Binseg(model="l2", min_size=1, jump=1).fit(
            means.reshape(-1, 1)).predict(n_bkps=1)[0]
        assert best_split(means) == expected
        assert best_splits(means[None, :])[0] == expected


def test_benjamini_hochberg_equals_statsmodels():
    from statsmodels.stats.multitest import multipletests

    from fslab.history.changes import benjamini_hochberg

    rng = np.random.default_rng(6)
    for _ in range(300):
        p = rng.uniform(0, 1, int(rng.integers(1, 40))) ** rng.uniform(0.3, 3)
        p[rng.random(len(p)) < 0.1] = 1.0  # ties
        assert benjamini_hochberg(list(p)) == pytest.approx(
            list(multipletests(p, method="fdr_bh")[1]), rel=1e-12, abs=1e-15)


def test_change_points_keep_their_error_rate_and_cover_the_truth():
    """Simulated series with known truth (log scale, 3 iterations per campaign, CV 5 %,
    a campaign-level spread of 2 %): with no change, at most about 1 in 20 series shows
    one; a 0.8× step is found where it is, and its interval covers 0.8 about 95 % of the
    time."""
    rng = np.random.default_rng(11)
    sd, between = 0.05, 0.02

    def series(step: float, at: int = 8, k: int = 16) -> list[np.ndarray]:
        shift = [math.log(step) if i >= at else 0.0 for i in range(k)]
        return [rng.normal(shift[i] + rng.normal(0, between), sd, 3) for i in range(k)]

    null = detect([series(1.0) for _ in range(200)], seed=1)
    false = sum(bool(found) for found in null) / len(null)
    assert false <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / 200), false  # BH over 200 series
    alone = [bool(detect([series(1.0)], seed=i)[0]) for i in range(200)]
    assert np.mean(alone) <= 0.05 + 2 * math.sqrt(0.05 * 0.95 / 200)  # each on its own
    covered = located = 0
    for i in range(200):
        found = detect([series(0.8)], seed=i)[0]
        first = next((c for c in found if c.index == 8), None)
        located += first is not None
        covered += bool(first and first.ratio_ci_low <= 0.8 <= first.ratio_ci_high)
    assert located >= 190
    assert 0.90 <= covered / located <= 0.99


def test_an_interval_that_overflows_is_infinite_not_a_traceback():
    ratio, low, high = interval([np.array([0.0, 1.0]), np.array([900.0, 1000.0])], (0, 1),
                                (1, 2))
    assert math.isinf(ratio) or math.isinf(high)
    assert low >= 0


def test_run_labels_the_campaign_and_adds_it_to_the_catalogue(tmp_path):
    from tests.conftest import fslab_cmd

    db = tmp_path / "c"
    done = fslab_cmd("run", "--fs", "null", "--preset", "null", "--iterations", "2",
                     "--label", "kernel=6.12.3", "--label", "commit=abc123",
                     "--catalogue", str(db), "--out", str(tmp_path / "r"),
                     "--lab", str(tmp_path / "lab"))
    assert done.returncode == 0, done.stderr
    labels = catalogue.query(db, "SELECT key, value FROM labels")
    mine = dict(zip(labels["key"], labels["value"], strict=True))
    assert mine["kernel"] == "6.12.3" and mine["commit"] == "abc123"  # the user's win
    assert {"host", "cpu_model", "disk_model", "fslab", "tool.fio"} <= set(mine)
    assert 'commit = "abc123"' in (tmp_path / "r" / "campaign.toml").read_text()
    bad = fslab_cmd("run", "--fs", "null", "--preset", "null", "--label", "oops",
                    "--dry-run")
    assert bad.returncode == 2 and "KEY=VALUE" in bad.stderr


def test_a_shared_directory_holds_one_history_for_several_machines(sixteen, tmp_path):
    """Two machines write results and one catalogue into one shared directory (an NFS
    mount in practice): each machine's series stays its own unless asked otherwise."""
    import shutil

    dirs = sixteen
    shared = tmp_path / "shared"
    for source in dirs[4:12]:  # versions 1.5 ... 1.12 on machine two
        copy = shared / "m2" / source.name
        shutil.copytree(source, copy)
        env = json.loads((copy / "environment.json").read_text())
        env["host"] = "second-machine"
        (copy / "environment.json").write_text(json.dumps(env))
    for source in dirs[:10]:
        shutil.copytree(source, shared / "m1" / source.name)
    db = shared / "catalogue"
    writing.add(db, sorted((shared / "m1").iterdir()))
    writing.add(db, sorted((shared / "m2").iterdir()))
    assert catalogue.counts(db)["campaigns"] == 18
    found = json.loads(fslab_here("history", "changes", "--by", "version", "--json",
                                  "--catalogue", str(db)).stdout)
    here = json.loads((dirs[0] / "environment.json").read_text())["host"]
    assert sorted((c["machine"], c["before"], c["after"]) for c in found) == sorted([
        (here, "1.8", "1.9"), ("second-machine", "1.8", "1.9")])
    merged = json.loads(fslab_here("history", "changes", "--by", "version", "--json",
                                   "--across-machines", "--catalogue", str(db)).stdout)
    assert [(c["machine"], c["before"], c["after"]) for c in merged] == [
        ("several", "1.8", "1.9")]
    rows = catalogue.query(db, "SELECT count(DISTINCT campaign_id) AS c FROM metrics")
    assert rows["c"].iloc[0] == 18  # every machine's Parquet read where it lies
