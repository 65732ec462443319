"""Many machines, one history (issue 40): a catalogue is a directory of immutable parts
renamed into place, so writers never wait on each other and readers never on writers,
a killed writer leaves nothing half-visible, and a single-file catalogue of an earlier
fslab still reads. Real `fslab` processes, as a fleet of CI machines would run them."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import duckdb
import pytest

from fslab.history import catalogue, parts, writing
from tests.conftest import FSLAB, REPO, fslab_cmd, fslab_here
from tests.history.test_history import versioned


def simulated_campaigns(tmp_path: Path, count: int) -> list[Path]:
    return [versioned(f"1.{i}", 1.0, seed=500 + i, tmp_path=tmp_path) for i in range(count)]


def test_sixteen_campaigns_record_at_once_while_readers_read(tmp_path):
    """16 `fslab run --catalogue DIR` at once (the simulator) while `history changes` and
    `history query` run in a loop: every campaign recorded, no error in any process."""
    shared = tmp_path / "catalogue"
    writers = [subprocess.Popen(
        [*FSLAB, "run", "--fs", "null", "--preset", "null", "--iterations", "2",
         "--label", f"build={i}", "--catalogue", str(shared), "--out",
         str(tmp_path / f"r{i}"), "--lab", str(tmp_path / f"lab{i}")],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for i in range(16)]
    reads = []
    while any(w.poll() is None for w in writers):
        if parts.is_catalogue_dir(shared):
            reads.append(fslab_cmd("history", "changes", "--by", "build", "--catalogue",
                                   str(shared)))
            reads.append(fslab_cmd("history", "query", "SELECT count(*) AS n FROM runs",
                                   "--catalogue", str(shared)))
        else:
            time.sleep(0.2)
    outputs = [w.communicate() for w in writers]
    for writer, (out, err) in zip(writers, outputs, strict=True):
        assert writer.returncode == 0, err
        assert "not recorded" not in err and "Catalogue" in out
    assert len(reads) >= 2
    for read in reads:  # changes exits 1 on a regression it found: not an error
        assert read.returncode in (0, 1) and "Error" not in read.stderr, read.stderr
        assert "Traceback" not in read.stderr
    found = catalogue.query(shared, "SELECT count(DISTINCT campaign_id) AS c FROM campaigns")
    assert int(found["c"].iloc[0]) == 16
    labels = catalogue.query(shared, "SELECT value FROM labels WHERE key = 'build'")
    assert sorted(labels["value"].astype(int)) == list(range(16))


def test_a_killed_writer_costs_nothing_and_adding_again_completes_it(tmp_path):
    """`fslab history add` killed with SIGKILL at five points of its work: the catalogue
    reads after each, with that campaign absent or complete; the next writer clears the
    leftovers and adding again makes it complete; the counts are exact."""
    (first, second) = simulated_campaigns(tmp_path, 2)
    shared = tmp_path / "catalogue"
    writing.add(shared, [first])
    expected = catalogue.counts(shared)
    timing = tmp_path / "timing"
    started = time.monotonic()
    done = fslab_cmd("history", "add", str(second), "--catalogue", str(timing))
    whole = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    complete = catalogue.counts(timing)
    for fraction in (0.3, 0.5, 0.7, 0.85, 0.95):
        writer = subprocess.Popen([*FSLAB, "history", "add", str(second), "--catalogue",
                                   str(shared)], cwd=REPO, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        time.sleep(whole * fraction)
        writer.send_signal(signal.SIGKILL)
        writer.wait()
        now = catalogue.counts(shared)  # readable after every kill
        has_second = now != expected
        assert now == ({k: expected[k] + complete[k] for k in now} if has_second
                       else expected), (fraction, now)
    writing.add(shared, [second])
    assert catalogue.counts(shared) == {k: expected[k] + complete[k] for k in expected}
    assert not [p for p in shared.iterdir() if p.name.startswith(parts.TMP_PREFIX)
                and not p.name.startswith(f"{parts.TMP_PREFIX}catalogue")]


def test_a_leftover_of_a_live_writer_is_kept_and_of_a_dead_one_cleared(tmp_path):
    root = tmp_path / "catalogue"
    parts.create(root)
    live = root / f"{parts.TMP_PREFIX}{parts.new_version()}"
    live.mkdir()
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        version = parts.new_version().split("-")
        version[2] = str(sleeper.pid)
        other = root / f"{parts.TMP_PREFIX}{'-'.join(version)}"
        other.mkdir()
        assert parts.clear_leftovers(root) == []  # both writers may still be writing
    finally:
        sleeper.kill()
        sleeper.wait()
    assert parts.clear_leftovers(root) == [other.name]
    assert live.exists()  # this very process: alive


def test_removing_replacing_and_compacting_keep_every_count_exact(tmp_path, monkeypatch):
    dirs = simulated_campaigns(tmp_path, 3)
    shared = tmp_path / "catalogue"
    for directory in dirs:
        writing.add(shared, [directory])
    three = catalogue.counts(shared)
    writing.add(shared, dirs[:2], labels={"run": "again"})  # new versions, same rows
    assert catalogue.counts(shared) == {**three, "labels": three["labels"] + 2}
    again = catalogue.query(shared, "SELECT count(*) AS n FROM labels WHERE key = 'run'")
    assert int(again["n"].iloc[0]) == 2
    campaign = str(catalogue.campaigns(shared)["campaign_id"].iloc[0])
    removed = fslab_here("history", "remove", campaign, "--catalogue", str(shared))
    assert removed.returncode == 0, removed.stderr
    two = catalogue.counts(shared)
    assert two["campaigns"] == 2 and two["runs"] == three["runs"] * 2 // 3
    assert two["cells"] == three["cells"] * 2 // 3
    ids = set(catalogue.query(shared, "SELECT DISTINCT campaign_id FROM labels")["campaign_id"])
    assert campaign not in ids and len(ids) == 2
    unknown = fslab_here("history", "remove", "nosuchid", "--catalogue", str(shared))
    assert unknown.returncode == 2 and len(unknown.stderr.strip().splitlines()) == 1
    monkeypatch.setattr(parts, "GRACE_S", 0.0)  # superseded parts may go at once
    before, kept = writing.compact(shared)
    assert kept == 2 and before >= 6
    assert catalogue.counts(shared) == two
    assert len(parts.parts(shared)) == 1  # everything else was superseded
    writing.add(shared, dirs)  # the removed one comes back, complete (labels as first)
    assert catalogue.counts(shared) == three


def test_a_single_file_catalogue_of_an_earlier_fslab_reads_and_migrates(tmp_path):
    """A .duckdb catalogue (tables campaigns, labels, runs, cells in one file) is read as
    it is by every reading command; adding to it says, in one line, how to migrate it;
    `fslab history migrate` copies it into a directory catalogue."""
    dirs = simulated_campaigns(tmp_path, 2)
    modern = tmp_path / "modern"
    writing.add(modern, dirs)
    legacy = tmp_path / "old.duckdb"
    with catalogue.connect(modern) as db:
        tables = {t: db.execute(f"SELECT * FROM {t}").df() for t in catalogue.TABLES}
    old = duckdb.connect(str(legacy))
    for name, frame in tables.items():
        old.register("frame", frame)
        old.execute(f"CREATE TABLE {name} AS SELECT * FROM frame")
        old.unregister("frame")
    old.close()
    assert catalogue.counts(legacy) == catalogue.counts(modern)
    listed = fslab_here("history", "list", "--catalogue", str(legacy))
    assert listed.returncode == 0 and "nightly" in listed.stdout
    changes = fslab_here("history", "changes", "--by", "version", "--json", "--catalogue",
                         str(legacy))
    assert changes.returncode == 0 and json.loads(changes.stdout) == []
    refused = fslab_here("history", "add", str(dirs[0]), "--catalogue", str(legacy))
    assert refused.returncode == 2 and "history migrate" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    moved = fslab_here("history", "migrate", str(legacy), str(tmp_path / "new"))
    assert moved.returncode == 0 and "copied 2 campaigns" in moved.stdout
    assert catalogue.counts(tmp_path / "new") == catalogue.counts(modern)


def test_a_campaign_never_fails_for_its_catalogue(tmp_path):
    """A catalogue that cannot be written (a file where its directory should be): the
    campaign's results stand, one line says how to record it later, exit as the run."""
    blocker = tmp_path / "blocked"
    blocker.write_text("not a catalogue")
    os.chmod(blocker, 0o444)
    done = fslab_cmd("run", "--fs", "null", "--preset", "null", "--iterations", "2",
                     "--catalogue", str(blocker / "inside"), "--out", str(tmp_path / "r"),
                     "--lab", str(tmp_path / "lab"))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "r" / "stats" / "verdicts.txt").exists()
    said = [line for line in done.stderr.splitlines() if "not recorded" in line]
    assert len(said) == 1 and f"fslab history add {tmp_path / 'r'}" in said[0]
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("bad", ["file", "stranger"])
def test_what_is_not_a_catalogue_is_refused_in_one_line(tmp_path, bad):
    where = tmp_path / "x"
    if bad == "file":
        where.write_text("hello")  # not a DuckDB database
    else:
        where.mkdir()
        (where / "mine.txt").write_text("someone's files")
    done = fslab_here("history", "list", "--catalogue", str(where))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
