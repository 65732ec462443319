"""`fslab pool` over simulator sittings with known truth (issue 51): sittings and hosts
recorded, pooled from directories and from the catalogue, by sitting and by host, the
refusals, and the forest plots in the report."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from fslab import api
from fslab.plan.loading import resolve
from fslab.plan.schema import CampaignFile, Overrides
from tests.cli.test_cli import assert_one_line_error
from tests.conftest import fslab_here
from tests.floats import close

CONTRACT = ["workload", "op", "metric", "primary", "a", "b", "k", "ratio", "ratio_ci_low",
            "ratio_ci_high", "next_low", "next_high", "tau", "i2", "decision",
            "next_decision"]


def sitting(tmp_path: Path, seed: int, host: str = "h1", targets=("a", "b"),
            sitting_sd: float = 0.05, jobs: int = 2, name: str = "sim", scale: float = 1.15,
            catalogue: Path | None = None) -> Path:
    """One sitting of a small simulator campaign (a 1.15× b) on simulated host `host`."""
    from fslab.host.lab import Lab

    parsed = CampaignFile.model_validate({
        "name": name, "iterations": 4, "seed": seed,
        "target": [{"name": t, "fs": "null", "scale": scale if t == "a" else 1.0}
                   for t in targets],
        "workload": [{"preset": "null", "options": {
            "jobs": jobs, "iops": 1000, "cv": 0.10, "drift": 0.05,
            "sitting": sitting_sd, "host": host}}]})
    out = tmp_path / f"{host}-{seed}"
    api.run(resolve(parsed, Overrides(), Path.cwd()), out=out, lab=Lab(tmp_path / "lab"),
            options=api.RunOptions(catalogue=catalogue))
    if catalogue is not None:
        api.history_add(catalogue, [out])
    return out


@pytest.fixture(scope="module")
def made(shared):
    """made(seed, **options): the sitting `sitting` makes (no catalogue), made once for
    the module's tests and read-only (tests/shared.py); with `copy_to`, a copy there to
    change."""
    def sitting_of(seed: int, copy_to: Path | None = None, **options) -> Path:
        key = ",".join([str(seed), *(f"{k}={v}" for k, v in sorted(options.items()))])

        def make(root: Path) -> Path:
            return sitting(root, seed, **options)

        return shared.copy(key, make, copy_to) if copy_to else shared.get(key, make)

    return sitting_of


def test_a_sitting_records_its_host_and_the_simulator_its_sitting_effect(tmp_path, made):
    first, second = made(1), made(2)
    environment = json.loads((first / "environment.json").read_text())
    assert environment["sitting"]["host"] == "h1"
    assert {"boot_id", "started", "kernel", "tools", "lab_disk"} <= set(environment["sitting"])
    ratios = [pd.read_csv(d / "stats" / "pairwise.csv").set_index("workload")["ratio"]
              for d in (first, second)]
    again = sitting(tmp_path / "again", 1)
    assert pd.read_csv(again / "stats" / "pairwise.csv").set_index("workload")["ratio"] \
        .equals(ratios[0])  # a sitting is its seed: the same seed, the same sitting
    assert not ratios[0].equals(ratios[1])


def test_pool_directories_writes_the_contract_and_decides_both_ways(tmp_path, made):
    dirs = [made(seed) for seed in (1, 2, 3)]
    out = tmp_path / "pooled"
    done = fslab_here("pool", *map(str, dirs), "--out", str(out))
    assert done.returncode == 0, done.stderr
    pooled = pd.read_csv(out / "stats" / "pooled.csv")
    assert list(pooled.columns[:len(CONTRACT)]) == CONTRACT
    assert len(pooled) == 2 and (pooled["k"] == 3).all()
    assert (pooled["alpha"] == 0.025).all() and (pooled["family"] == 2).all()
    assert set(pooled["decision"]) <= {"faster", "unresolved", "equivalent", "slower"}
    assert (pooled["next_low"] < pooled["ratio_ci_low"]).all()  # the next sitting is wider
    assert "on average" in done.stdout and "next sitting" in done.stdout
    forest = pd.read_csv(out / "stats" / "pooled_sittings.csv")
    assert len(forest) == 6
    page = api.report(out)
    html = page.read_text()
    assert html.count('data-chart="') == 2 and "next sitting" in html


def test_two_sittings_use_the_stated_prior_and_bad_input_is_refused(tmp_path, made):
    one, two = made(1), made(2)
    out = tmp_path / "pooled"
    assert_one_line_error(fslab_here("pool", str(one), "--out", str(out)),
                          "two or more sittings")
    other = made(3, targets=("a", "c"))
    assert_one_line_error(fslab_here("pool", str(one), str(other), "--out", str(out)),
                          "targets (a,b vs a,c)")
    jobs = made(4, jobs=3)
    assert_one_line_error(fslab_here("pool", str(one), str(jobs), "--out", str(out)),
                          "workloads (w1,w2 vs w1,w2,w3)")
    assert_one_line_error(fslab_here("pool", str(one), str(two), "--out", str(out),
                                     "--by", "host"), "two or more hosts")
    assert not out.exists()
    assert_one_line_error(fslab_here("pool", str(one), str(two), "--out", str(out),
                                     "--planned", "1"), "plan two or more sittings")
    done = fslab_here("pool", str(one), str(two), "--out", str(out))
    # no history: the stated prior with the two sittings' own spread, both intervals
    assert done.returncode == 0 and "the stated prior" in done.stdout
    pooled = pd.read_csv(out / "stats" / "pooled.csv")
    assert pooled["next_low"].notna().all() and (pooled["spread_source"] == "stated prior").all()
    assert (pooled["iterations"] == "4;4").all() and (pooled["next_iterations"] == 4).all()
    assert (pooled["planned"] == 6).all() and (pooled["level"] < pooled["alpha"]).all()


def test_a_sitting_given_twice_is_refused_before_anything_is_analysed(tmp_path, made):
    """The same directory twice (or a copy: the same campaign id) is one sitting: refused
    in one line, nothing written; a refusal comes before any sitting is analysed (E2,
    W8)."""
    import shutil

    one, two = made(1), made(2, copy_to=tmp_path / "two")
    out = tmp_path / "pooled"
    assert_one_line_error(fslab_here("pool", str(one), str(one), str(two), "--out", str(out)),
                          "are the same sitting")
    copy = tmp_path / "copy"
    shutil.copytree(one, copy)
    assert_one_line_error(fslab_here("pool", str(one), str(copy), "--out", str(out)),
                          "are the same sitting")
    assert not out.exists()
    shutil.rmtree(two / "stats")
    other = made(3, targets=("a", "c"))
    assert_one_line_error(fslab_here("pool", str(two), str(other), "--out", str(out)),
                          "targets (a,b vs a,c)")
    assert not (two / "stats").exists() and not out.exists()
    done = fslab_here("pool", str(one), str(two), str(made(4)), "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert not (two / "stats").exists()  # analysed in memory: nothing written into it


def test_sittings_combine_the_hosts_other_sittings_with_their_own(tmp_path):
    """Sittings pooled with the catalogue: the spread combines the host's other sittings
    (the ones pooled left out of it) with the sittings' own, and says so; with no other
    sitting the stated prior; sittings of two hosts borrow neither's history (E1, W10)."""
    catalogue = tmp_path / "catalogue"
    dirs = [sitting(tmp_path, seed, catalogue=catalogue) for seed in (1, 2)]
    out = tmp_path / "pooled"
    alone = fslab_here("pool", *map(str, dirs), "--catalogue", str(catalogue), "--out",
                       str(out))
    assert alone.returncode == 0, alone.stderr
    assert "No earlier sittings of one host beside these" in alone.stdout
    assert (pd.read_csv(out / "stats" / "pooled.csv")["spread_source"] == "stated prior").all()
    for seed in (3, 4, 5):
        sitting(tmp_path, seed, catalogue=catalogue)
    done = fslab_here("pool", *map(str, dirs), "--catalogue", str(catalogue), "--out",
                      str(out))
    assert done.returncode == 0, done.stderr
    pooled = pd.read_csv(out / "stats" / "pooled.csv")
    borrowed = pooled["spread_source"] == "history"
    assert borrowed.any() and (pooled.loc[borrowed, "tau_sittings"] == 3).all()
    assert pooled["history_tau"].notna().all() and pooled["q_p"].notna().all()
    assert (pooled["next_high"] > pooled["ratio_ci_high"]).all()
    assert "with this host's 3 earlier sittings" in done.stdout
    away = sitting(tmp_path, 6, host="h2", catalogue=catalogue)
    apart = fslab_here("pool", str(dirs[0]), str(away), "--catalogue", str(catalogue),
                       "--out", str(tmp_path / "apart"))
    assert apart.returncode == 0, apart.stderr
    assert (pd.read_csv(tmp_path / "apart" / "stats" / "pooled.csv")["spread_source"]
            == "stated prior").all()
    assert "host's 3 earlier sittings" not in apart.stdout


def test_pool_from_the_catalogue_and_by_host(tmp_path):
    catalogue = tmp_path / "catalogue"
    dirs = [sitting(tmp_path, seed, host=f"h{seed}", sitting_sd=0.02) for seed in (1, 2, 3)]
    dirs.append(sitting(tmp_path, 4, host="h1", sitting_sd=0.02))
    api.history_add(catalogue, dirs)
    campaigns = api.history_query(catalogue, "SELECT sitting, host, plan, campaign_id "
                                             "FROM campaigns ORDER BY host")
    assert list(campaigns["host"]) == ["h1", "h1", "h2", "h3"]
    assert campaigns["plan"].nunique() == 1
    assert (campaigns["sitting"] == campaigns["campaign_id"]).all()
    out = tmp_path / "fleet"
    done = fslab_here("pool", "--catalogue", str(catalogue), "--campaign", "sim", "--by",
                      "host", "--out", str(out))
    assert done.returncode == 0, done.stderr
    pooled = pd.read_csv(out / "stats" / "pooled.csv")
    assert (pooled["k"] == 3).all() and (pooled["by"] == "host").all()
    assert "next machine" in done.stdout
    on_one = fslab_here("pool", "--catalogue", str(catalogue), "--campaign", "sim", "--host",
                        "h1", "--out", str(tmp_path / "h1"))
    assert on_one.returncode == 0, on_one.stderr
    assert (pd.read_csv(tmp_path / "h1" / "stats" / "pooled.csv")["k"] == 2).all()
    assert_one_line_error(fslab_here("pool", "--catalogue", str(catalogue), "--campaign",
                                     "nope", "--out", str(tmp_path / "x")), "no campaign")


@pytest.mark.privileged
def test_forest_plots_render_in_chromium(tmp_path, made):
    from tests.conftest import requires
    from tests.ingest.test_import_report import chromium

    requires("chromium", root=False)
    dirs = [made(seed) for seed in (1, 2, 3)]
    api.pool_dirs(dirs, tmp_path / "pooled")
    page = api.report(tmp_path / "pooled")
    dom = chromium(page, tmp_path)
    assert 'data-js-errors="0"' in dom
    assert int(re.search(r'data-charts-rendered="(\d+)"', dom).group(1)) == 2
    for label in ("sitting 1", "sitting 3", "pooled: on average", "next sitting"):
        assert label in dom


def test_a_catalogue_written_before_sittings_reads_each_campaign_as_its_own_sitting(tmp_path,
                                                                                   made):
    import duckdb

    catalogue = tmp_path / "catalogue"
    api.history_add(catalogue, [made(1)])
    (table,) = catalogue.glob("parts/*/campaigns.parquet")
    old = duckdb.connect()
    old.execute(f"COPY (SELECT * EXCLUDE (sitting, host, plan) FROM read_parquet('{table}')) "
                f"TO '{table}.old' (FORMAT parquet)")
    Path(f"{table}.old").replace(table)
    found = api.history_query(catalogue, "SELECT campaign_id, sitting, host, machine, plan "
                                         "FROM campaigns")
    assert found["sitting"].iloc[0] == found["campaign_id"].iloc[0]
    assert found["host"].iloc[0] == found["machine"].iloc[0]
    assert found["plan"].isna().all()


def test_a_sitting_recorded_in_a_catalogue_says_whether_it_holds_on_a_repeat(tmp_path):
    catalogue = tmp_path / "catalogue"
    first = sitting(tmp_path, 1, scale=1.5, catalogue=catalogue)
    said = (first / "stats" / "verdicts.txt").read_text()
    assert "no two sittings of one campaign on h1" in said and "--again" in said
    assert (pd.read_csv(first / "stats" / "pairwise.csv")["repeat_sittings"] == 0).all()
    for seed in (2, 3):
        sitting(tmp_path, seed, scale=1.5, catalogue=catalogue)
    last = sitting(tmp_path, 4, scale=1.5, catalogue=catalogue)
    pairwise = pd.read_csv(last / "stats" / "pairwise.csv")
    assert (pairwise["repeat_sittings"] == 3).all()
    assert (pairwise["repeat_low"] < pairwise["ratio_ci_low"]).all()
    assert (pairwise["repeat_high"] > pairwise["ratio_ci_high"]).all()
    said = (last / "stats" / "verdicts.txt").read_text()
    assert said.count("a / b on a repeat") == 2
    listed = fslab_here("history", "list", "--catalogue", str(catalogue))
    assert "h1: a sitting's ratio moves ±" in listed.stdout and "from 4 sittings" in listed.stdout
    assert "  w1: ±" in listed.stdout and "  w2: ±" in listed.stdout  # each workload's own


def test_run_again_adds_sittings_and_pools_them_into_the_directory(tmp_path, made):
    import tomllib

    first = made(1, copy_to=tmp_path / "first")
    for number in (2, 3):
        done = fslab_here("run", "--again", str(first), "--lab", str(tmp_path / "lab"))
        assert done.returncode == 0, done.stderr
        assert (first / "sittings" / str(number) / "stats" / "pairwise.csv").exists()
    assert "Pooled 3 sittings of sim" in done.stdout
    pooled = pd.read_csv(first / "stats" / "pooled.csv")
    assert (pooled["k"] == 3).all() and pooled["next_low"].notna().all()
    seeds = {tomllib.loads((d / "campaign.toml").read_text())["seed"]
             for d in (first, first / "sittings" / "2", first / "sittings" / "3")}
    assert len(seeds) == 3  # a new seed, so new draws: a new sitting
    assert "Over 3 sittings: the answer" in api.report(first).read_text()
    assert_one_line_error(fslab_here("run", "--again", str(first), "--out", str(tmp_path)),
                          "--again DIR runs DIR's own campaign")
    # what would change the plan is refused, not ignored (E7)
    for flag in (["--iterations", "3"], ["--fs", "ext4"], ["--workloads", "w1"],
                 ["--runtime", "2"], ["--until-ci", "5"]):
        assert_one_line_error(fslab_here("run", "--again", str(first), *flag),
                              f"--again repeats {first}'s plan: drop {flag[0]}")
    assert not (first / "sittings" / "4").exists()


def test_the_repeat_interval_through_the_catalogue_against_known_truth(tmp_path):
    """The repeat path end to end (B2): five sittings of a simulator campaign recorded in
    a catalogue (each target's level moves by S = 0.10 per sitting: a ratio's τ is 0.14),
    a sixth started with --catalogue reads its host's spread as it starts
    (environment.json), and its repeat intervals hold a seventh sitting's estimates."""
    from fslab.results.store import ResultsDir

    catalogue = tmp_path / "catalogue"
    for seed in range(1, 6):
        sitting(tmp_path, seed, sitting_sd=0.10, jobs=4, catalogue=catalogue)
    today = sitting(tmp_path, 6, sitting_sd=0.10, jobs=4, catalogue=catalogue)
    following = sitting(tmp_path / "next", 7, sitting_sd=0.10, jobs=4)
    spread = ResultsDir.open(today).environment().sitting.spread
    assert spread.sittings == 5 and set(spread.workloads) == {"w1", "w2", "w3", "w4"}
    assert 0.07 < spread.tau < 0.25  # the truth: √2 × 0.10
    pairs = pd.read_csv(today / "stats" / "pairwise.csv").set_index("workload")
    estimates = pd.read_csv(following / "stats" / "pairwise.csv").set_index("workload")
    assert (pairs["repeat_sittings"] == 5).all()
    held = ((pairs["repeat_low"] <= estimates["ratio"])
            & (estimates["ratio"] <= pairs["repeat_high"]))
    assert held.sum() >= 3, pd.concat([pairs[["repeat_low", "repeat_high"]],
                                       estimates["ratio"]], axis=1)
    # each sitting's pairs were derived once, beside the parts, and read back the same
    from fslab.history.identity import campaign_id
    from fslab.history.sittings import history_spread

    derived = sorted((catalogue / "derived" / "sitting_pairs").glob("*.parquet"))
    assert len(derived) == 5
    # the fit's pairs at the start, the derived table's now: one spread, two ways
    assert close(history_spread(catalogue, "h1", leave_out={campaign_id(today)}), spread)
    assert sorted((catalogue / "derived" / "sitting_pairs").glob("*.parquet")) == derived


def test_compare_counts_the_hosts_spread_between_sittings(tmp_path):
    """`fslab compare --catalogue C`: the change is judged against how far a level moves
    between two sittings on the host (history/sittings.level_spread of the catalogue's
    sittings, the two compared left out), and the words say so (issue 58 item 10)."""
    catalogue = tmp_path / "catalogue"
    for seed in (1, 2, 3, 4):
        sitting(tmp_path, seed, catalogue=catalogue)
    base, new = sitting(tmp_path / "b", 5), sitting(tmp_path / "n", 6)
    done = fslab_here("compare", str(base), str(new), "--catalogue", str(catalogue),
                      "--json")
    assert done.returncode in (0, 1), done.stderr
    cells = pd.DataFrame(json.loads(done.stdout))
    assert (cells["spread_sittings"] == 4).all()
    assert (cells["ratio_ci_low"] < cells["within_ci_low"]).all()
    said = fslab_here("compare", str(base), str(new), "--catalogue", str(catalogue))
    assert "from 4 earlier sittings in the catalogue" in " ".join(said.stdout.split())


@pytest.mark.privileged
def test_a_directory_with_sittings_opens_on_the_pooled_answer_in_chromium(tmp_path):
    """Issue 58 item 11, in a real browser: the report of a directory with sittings opens
    on the pooled verdicts and their forest plots, the first sitting's own answer after
    them labelled as one sitting, without the line its verdicts wrote before the later
    sittings existed; sittings that vary no more than their noise get a bound for τ,
    never '±0.0 %'."""
    from tests.conftest import requires
    from tests.ingest.test_import_report import chromium

    requires("chromium", root=False)
    catalogue = tmp_path / "catalogue"
    first = sitting(tmp_path, 1, sitting_sd=0.0, catalogue=catalogue)
    assert "no two sittings of one campaign" in (first / "stats" / "verdicts.txt").read_text()
    for _ in (2, 3):
        done = fslab_here("run", "--again", str(first), "--lab", str(tmp_path / "lab"),
                          "--catalogue", str(catalogue))
        assert done.returncode == 0, done.stderr
    pooled = pd.read_csv(first / "stats" / "pooled.csv")
    assert (pooled["k"] == 3).all() and (pooled["iterations"] == "4;4;4").all()
    page = api.report(first)
    html = page.read_text()
    dom = chromium(page, tmp_path)
    assert 'data-js-errors="0"' in dom
    rendered = int(re.search(r'data-charts-rendered="(\d+)"', dom).group(1))
    assert rendered == html.count('data-chart="')
    pooled_at, alone_at = dom.index("Over 3 sittings: the answer"), dom.index("Sitting 1 alone")
    assert pooled_at < alone_at
    assert dom.count("pooled: on average") >= 2  # a forest plot per question, drawn
    assert dom.index("pooled: on average") < alone_at
    assert "nothing says yet whether these answers hold" not in dom
    assert "±0.0 %" not in dom
    if (pooled["tau"] == 0).any():
        assert "vary no more than their own noise" in dom
