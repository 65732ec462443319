"""`fslab tune` (issue 38) on the simulator with known option effects: the space and its
refusals, the designs, the race's looks, the answer and what the user takes away; the
error rates over hundreds of spaces are benchmarks/tune_vs_search's."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fslab import api
from fslab.core.errors import UserError
from fslab.host.lab import Lab
from fslab.plan.campaign import CampaignFile, Overrides, resolve
from fslab.tune.decide import race_look
from fslab.tune.design import race_candidates, screen_design
from fslab.tune.race import run_race
from fslab.tune.request import Request
from fslab.tune.space import parse_bound, space_of
from fslab.tune.unsafe import check_space
from tests.conftest import fslab_here

EFFECTS = {"noatime": 1.25, "commit=60": 1.1, "noatime+commit=60": 0.95, "-I 128": 0.85}
FACTORS = {"mount_options.atime": ["relatime", "noatime", "lazytime"],
           "mount_options.commit": ["commit=5", "commit=60"],
           "mkfs_options.inode": ["-I 256", "-I 128"],
           "mount_options.acl": ["noacl", "acl"]}


def simulator(seed: int, effects: dict[str, float] = EFFECTS, sleep: float = 0.0) -> object:
    options = {"cv": 0.10, **({"sleep": sleep} if sleep else {})}
    parsed = CampaignFile.model_validate({
        "name": "sim", "seed": seed, "ceiling": False,
        "target": [{"name": "sim", "fs": "null", "effects": effects}],
        "workload": [{"preset": "null", "options": options}]})
    return resolve(parsed, Overrides(), Path.cwd())


def test_a_space_is_its_factors_with_the_reference_first_and_refuses_nonsense():
    space = space_of(FACTORS)
    assert space.size == 24 and space.reference == (0, 0, 0, 0)
    assert space.describe((1, 1, 0, 0)) == "noatime, commit=60"
    assert space.describe(space.reference) == "the reference"
    with pytest.raises(UserError, match="two levels or more"):
        space_of({"iodepth": ["1"]})
    with pytest.raises(UserError, match="cannot name a factor"):
        space_of({"mount_options.a.b": ["x", "y"]})
    bound = parse_bound("p99_clat<=2ms")
    assert (bound.metric, bound.at_most, bound.value) == ("clat_p99_ns", True, 2e6)
    assert bound.broken_by(2.5e6, 3e6) and not bound.broken_by(1.5e6, 2.5e6)
    with pytest.raises(UserError, match="METRIC<=VALUE"):
        parse_bound("p99 below 2ms")


def test_unsafe_options_are_refused_in_one_line_unless_allowed():
    levels = {"mount_options.barrier": ["barrier", "nobarrier"]}
    with pytest.raises(UserError) as caught:
        check_space(levels, ["ext4"], allowed=False)
    assert "nobarrier" in str(caught.value) and "\n" not in str(caught.value)
    assert "--allow-unsafe" in str(caught.value)
    notes = check_space(levels, ["ext4"], allowed=True)
    assert len(notes) == 1 and "docs.kernel.org" in notes[0]
    assert check_space({"zfs.sync": ["standard", "disabled"]}, ["zfs"], True)
    assert check_space({"fsync": ["1", "0"]}, ["ext4"], True)  # the job drops its fsync
    assert not check_space({"fsync": ["0", "1"]}, ["ext4"], False)  # adds one: safe
    assert not check_space({"mount_options.atime": ["relatime", "noatime"]}, ["ext4"], False)
    done = fslab_here("tune", "--fs", "ext4", "--workloads", "randwrite", "--factor",
                      "mount_options.barrier=barrier,nobarrier", "--dry-run")
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    allowed = fslab_here("tune", "--fs", "ext4", "--workloads", "randwrite", "--factor",
                         "mount_options.barrier=barrier,nobarrier", "--allow-unsafe",
                         "--dry-run")
    assert allowed.returncode == 0 and "nobarrier is unsafe" in allowed.stdout


def test_the_screen_is_a_resolution_iv_fraction_with_the_reference():
    """Six two-level factors in 16 configurations (a quarter): every main effect's column
    orthogonal to every two-factor interaction's (resolution IV), the reference among
    them; mixed levels by a generalized subset design."""
    rows = screen_design([2] * 6, 40, 2)
    assert len(rows) == 16 and rows[0] == (0,) * 6
    signs = np.array(rows) * 2 - 1
    for i, (j, k) in itertools.product(range(6), itertools.combinations(range(6), 2)):
        assert abs(float(signs[:, i] @ (signs[:, j] * signs[:, k]))) == 0
    mixed = screen_design([3, 3, 2, 2, 2], 40, 2)
    assert (0,) * 5 in mixed and len(mixed) * 2 <= 40 and len(mixed) >= 2 * 8
    assert len(set(mixed)) == len(mixed)


def test_race_candidates_are_the_kept_factors_or_the_models_best():
    levels = [2, 2, 2, 2]
    every = race_candidates(levels, [0, 2], {})
    assert len(every) == 4 and every[0] == (0, 0, 0, 0) and (1, 0, 1, 0) in every
    predicted = {c: float(sum(c)) for c in itertools.product(*(range(n) for n in levels))}
    few = race_candidates(levels, [0, 1, 2, 3], predicted, maximum=4)
    assert few[0] == (0, 0, 0, 0) and few[1] == (1, 1, 1, 1) and len(few) == 4


def test_a_look_drops_what_is_clearly_behind_and_keeps_what_it_cannot_tell():
    rng = np.random.default_rng(3)
    rounds = range(1, 7)
    groups = {(0,): {i: 1000 * math.exp(rng.normal(0, 0.02)) for i in rounds},
              (1,): {i: 1500 * math.exp(rng.normal(0, 0.02)) for i in rounds},
              (2,): {i: 1490 * math.exp(rng.normal(0, 0.02)) for i in rounds}}
    look = race_look(1, groups, "higher", 0.10)
    assert look.best in {(1,), (2,)} and (0,) in look.dropped
    assert (1,) not in look.dropped and (2,) not in look.dropped
    assert look.alpha == pytest.approx(0.025)  # look 1 spends α/2
    assert "below the best at look 1" in look.dropped[(0,)]
    tight = {c: v for c, v in groups.items() if c != (0,)}
    assert race_look(2, tight, "higher", 0.10).all_same  # 1.5 k and 1.49 k: the same


def test_a_configuration_the_file_system_refuses_is_dropped_after_its_first_round():
    """ext4 will not mount data=journal with delalloc: that candidate's runs fail, and
    the race drops it at once (look 0, the kernel's words) instead of paying for it
    every round; the others race on."""
    space = space_of({"mount_options.journal": ["data=ordered", "data=journal"],
                      "mount_options.alloc": ["nodelalloc", "delalloc"]})
    rng = np.random.default_rng(5)
    truth = {(0, 0): 1000.0, (1, 0): 1600.0, (0, 1): 1010.0}
    asked: list[list] = []

    def measure(alive, rounds):
        asked.append(list(alive))
        return {c: {i: truth[c] * math.exp(rng.normal(0, 0.03)) for i in range(1, rounds + 1)}
                for c in alive if c in truth}

    why = "refused: the kernel: can't mount with both data=journal and delalloc"
    race = run_race(space, space.every(), "higher", 0.10, 3, measure, lambda alive, a: {},
                    lambda runs: True, unmeasured=lambda: {(1, 1): why})
    assert race.dropped[(1, 1)] == (0, why)
    assert (1, 1) in asked[0] and all((1, 1) not in alive for alive in asked[1:])
    assert race.winner == (1, 0)


def test_a_candidate_with_nothing_measured_is_never_the_best():
    """Values missing for one candidate (its metric absent, its runs lost) leave the
    looks to what was measured: a candidate without values is neither best nor winner."""
    space = space_of({"iodepth": ["1", "4", "16"]})
    rng = np.random.default_rng(7)
    truth = {(0,): 1000.0, (1,): 1500.0}

    def measure(alive, rounds):
        return {c: {i: truth[c] * math.exp(rng.normal(0, 0.03)) for i in range(1, rounds + 1)}
                for c in alive if c in truth}

    race = run_race(space, [(2,), (0,), (1,)], "higher", 0.10, 3, measure,
                    lambda alive, a: {}, lambda runs: True, max_rounds=6)
    assert all(look.best == (1,) for look in race.looks) and race.winner == (1,)


def test_a_tune_finds_the_best_configuration_and_says_what_to_type(tmp_path):
    """A simulated space (noatime 1.25×, commit=60 1.1×, both 0.95× together, -I 128
    0.85×, acl nothing): the true best is noatime with commit=60 (1.31×); the winner is
    within 3 % of it, confirmed on fresh data, with the lines a person types."""
    request = Request(FACTORS, 0.03, max_runs=60)
    lines = api.tune(simulator(11), request, tmp_path / "tune", lab=Lab(tmp_path / "lab"))
    table = pd.read_csv(tmp_path / "tune" / "stats" / "tune.csv", keep_default_na=False)
    for column in [*FACTORS, "stage", "iterations", "ratio", "ratio_ci_low",
                   "ratio_ci_high", "dropped_at", "reason", "status", "decision"]:
        assert column in table.columns, column
    assert set(table["stage"]) <= {"screen", "race", "confirm"} and "confirm" in set(
        table["stage"])
    winner = table[(table["stage"] == "confirm") & (table["status"] == "winner")]
    assert len(winner) == 1
    chosen = winner.iloc[0]
    truth = 1.25 if chosen["mount_options.atime"] == "noatime" else 1.0
    truth *= 1.1 if chosen["mount_options.commit"] == "commit=60" else 1.0
    truth *= 0.95 if truth > 1.3 else 1.0
    truth *= 0.85 if chosen["mkfs_options.inode"] == "-I 128" else 1.0
    assert truth >= 0.97 * 1.25 * 1.1 * 0.95
    assert chosen["decision"] == "faster"
    assert float(chosen["ratio_ci_low"]) <= truth <= float(chosen["ratio_ci_high"])
    said = "\n".join(lines)
    assert "better than the reference (95 % CI" in said
    assert "mount -o " in said and "noatime" in said
    tuned = (tmp_path / "tune" / "stats" / "tuned.toml").read_text()
    assert 'name = "sim-tuned"' in tuned and "noatime" in tuned and "[tune]" not in tuned
    assert 'name = "sim-reference"' in tuned  # run again: the winner beside the reference
    assert (tmp_path / "tune" / "tune.html").stat().st_size > 1000
    again = fslab_here("run", str(tmp_path / "tune" / "stats" / "tuned.toml"),
                       "--iterations", "2", "--dry-run")
    assert again.returncode == 0, again.stderr


def test_where_nothing_matters_no_winner_is_called(tmp_path):
    request = Request(FACTORS, 0.05, max_runs=60)
    api.tune(simulator(12, effects={}), request, tmp_path / "tune", lab=Lab(tmp_path / "lab"))
    table = pd.read_csv(tmp_path / "tune" / "stats" / "tune.csv", keep_default_na=False)
    confirm = table[table["stage"] == "confirm"]
    winner = confirm[confirm["status"] == "winner"].iloc[0]
    assert all(winner[name] == levels[0] for name, levels in FACTORS.items())
    assert "faster" not in set(confirm["decision"])


def test_a_budget_too_small_is_refused_in_one_line(tmp_path):
    request = Request({f"mount_options.f{k}": ["a", "b"] for k in range(8)}, 0.05,
                      max_runs=12)
    with pytest.raises(UserError) as caught:
        api.tune(simulator(1), request, tmp_path / "tune", lab=Lab(tmp_path / "lab"))
    assert "--max-runs" in str(caught.value) and "\n" not in str(caught.value)


def test_dry_run_prints_the_stages_and_touches_nothing(tmp_path):
    (tmp_path / "sim.toml").write_text(
        'name = "s"\nceiling = false\n[[target]]\nname = "sim"\nfs = "null"\n'
        '[[workload]]\npreset = "null"\n[tune]\n"mount_options.a" = ["x", "y"]\n'
        '"mount_options.b" = ["p", "q"]\n"mount_options.c" = ["u", "v"]\n'
        '"mount_options.d" = ["k", "l"]\n"mount_options.e" = ["m", "n"]\nmax_runs = 40\n')
    done = fslab_here("tune", str(tmp_path / "sim.toml"), "--out", str(tmp_path / "out"),
                      "--dry-run")
    assert done.returncode == 0, done.stderr
    assert "screen: 16 configurations × 2 rounds" in done.stdout
    assert "race:" in done.stdout and "confirm:" in done.stdout
    assert not (tmp_path / "out").exists()
