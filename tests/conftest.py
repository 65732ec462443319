"""Shared fixtures: a private lab directory per test, and leftover checks.

Privileged tests need root, loop devices, mkfs and fio. Where a requirement is missing
they skip with the reason on a developer machine, and FAIL under CI (CI=true): CI must
run every test, none may skip silently.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.machinery
import inspect
import io
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import traceback
import types
from collections.abc import Iterator
from pathlib import Path

import pytest

from fslab.host import system
from fslab.host.lab import Lab
from tests.shared import Shared

REPO = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).parent / "fixtures"
FSLAB = [sys.executable, "-m", "fslab.cli"]

# the durations record (make durations); each test leaves the process as it found it;
# records with rounded floats are not compared bit for bit
pytest_plugins = ("tests.durations", "tests.isolation", "tests.floats")


def requires(*tools: str, root: bool = True) -> None:
    """Skip (or fail under CI) unless root and every tool are available."""
    missing = [tool for tool in tools if system.which(tool) is None]
    reasons = []
    if root and os.geteuid() != 0:
        reasons.append("needs root")
    if missing:
        reasons.append(f"missing {', '.join(missing)}")
    if reasons:
        message = "; ".join(reasons)
        if os.environ.get("CI"):
            pytest.fail(f"CI must run every test: {message}")
        pytest.skip(message)


TMPFS = Path("/dev/shm")  # a tmpfs on every Linux this runs on
TMPFS_ROOM = 1024**3  # less free (a container's 64 MiB /dev/shm): the disk, as before


@pytest.fixture
def tmp_path(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Path]:
    """A test that touches no machine (the check tier) writes its files to memory: its
    results directories' atomic writes fsync, and on the disk the machine tests fill
    with images beside it each fsync waits for their data (in a profiled run of the check
    tier, 4,900 fsyncs and 3,300 rmdirs took 35 s). A machine test keeps pytest's
    own directory, on the disk its loop images belong on."""
    if (not ({"check", "simulation"} & {m.name for m in request.node.iter_markers()})
            or not TMPFS.is_dir()
            or shutil.disk_usage(TMPFS).free < TMPFS_ROOM):
        yield tmp_path
        return
    path = Path(tempfile.mkdtemp(prefix="fslab-test-", dir=TMPFS))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Shared]:
    """Directories the module's tests share, read-only (tests/shared.py), in memory as a
    check-tier test's files are; after the module, each must be as it was made."""
    room = TMPFS.is_dir() and shutil.disk_usage(TMPFS).free >= TMPFS_ROOM
    root = (Path(tempfile.mkdtemp(prefix="fslab-shared-", dir=TMPFS)) if room
            else tmp_path_factory.mktemp("shared"))
    made = Shared(root)
    try:
        yield made
        written = made.changed()
        assert not written, f"a test wrote into the shared directories {written}: copy them"
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[Lab]:
    """A private lab; after the test, nothing of it may stay mounted or attached."""
    the_lab = Lab(tmp_path / "lab")
    yield the_lab
    problems = leftovers(the_lab.root)
    the_lab.cleanup()  # never leave the machine dirty, even when the test failed
    assert not problems, f"left behind: {problems}"


def leftovers(root: Path) -> list[str]:
    """Mounts under `root` and loop devices backed by files under it."""
    root_text = str(root.resolve())
    found = [f"mount {point}" for point in system.mounted_paths()
             if point.startswith(root_text)]
    if shutil.which("losetup") or system.which("losetup"):
        out = subprocess.run(["losetup", "-n", "-O", "NAME,BACK-FILE", "--list"],
                             capture_output=True, text=True).stdout
        for line in out.splitlines():
            parts = line.split(None, 1)
            if len(parts) == 2 and parts[1].strip().startswith(root_text):
                found.append(f"loop {parts[0]} -> {parts[1].strip()}")
    return found


def load_script(name: str) -> types.ModuleType:
    """A program of scripts/ (no .py: run by name) as a module its tests can call into."""
    loader = importlib.machinery.SourceFileLoader(name.replace("-", "_"),
                                                  str(REPO / "scripts" / name))
    module = types.ModuleType(loader.name)
    module.__file__ = loader.path
    loader.exec_module(module)
    return module


def fslab_cmd(*args: str, **kwargs: object) -> subprocess.CompletedProcess[str]:
    """Run the real `fslab` command line in a subprocess."""
    return subprocess.run([*FSLAB, *args], capture_output=True, text=True, cwd=REPO,
                          **kwargs)  # type: ignore[call-overload]


def fslab_here(*args: str) -> subprocess.CompletedProcess[str]:
    """The `fslab` entry point (cli.main: its error handling included) in this process:
    for commands that need no process of their own, without a cold interpreter's second.
    An exception that escapes main() comes back as the traceback a user would see."""
    from fslab.cli import main as cli

    out, err = io.StringIO(), io.StringIO()
    argv, sys.argv = sys.argv, ["fslab", *args]
    on_interrupt = signal.getsignal(signal.SIGINT)  # an interrupted command ignores more
    code: int | str | None = 0
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                cli.main()
            except SystemExit as exc:
                code = exc.code
            except Exception:
                err.write(traceback.format_exc())
                code = 1
    finally:
        sys.argv = argv
        signal.signal(signal.SIGINT, on_interrupt)
    returncode = code if isinstance(code, int) else (0 if code is None else 1)
    return subprocess.CompletedProcess(args, returncode, out.getvalue(), err.getvalue())


MACHINE_FIXTURES = {"lab", "aged_image", "servers"}  # servers: fio servers of its own
# Tests that start processes of their own through fslab's code, not their own source.
MACHINE_TESTS = {
    "test_work_waits_for_a_child_nobody_measures": "starts children to wait on",
    "test_a_wide_import_with_two_iterations_analyses_without_a_traceback":
        "imports 240 files: the importer's worker processes",
}
# Tests that need nothing of the machine but more CPU than the edit-test loop can give
# (tests/durations.txt; its budget: tests/test_durations.py): calibrations by simulation
# against known truth (each a small version of a benchmark's hundreds) and scenarios of
# many simulated campaigns. make test runs them in its main tier, their files in memory
# as the check tier's are; the check tier keeps a smaller test of the same code path
# beside each. Test (a parametrized one's case by its full name) -> why and what stays.
SIMULATIONS = {
    "test_one_spread_for_a_campaign_keeps_its_intervals_by_simulation":
        "40 simulated campaigns of 9 questions over 4 sittings; the check tier keeps "
        "test_the_questions_of_a_pool_read_one_spread_counted_by_their_contrasts",
    "test_aa_campaigns_claim_no_difference":
        "6 whole A/A campaigns of 30 pairs (the family's error rate); the check tier runs "
        "whole campaigns in test_the_seed_makes_the_draws and its neighbours",
    "test_ab_intervals_cover_the_truth_and_rankings_agree_with_pairs":
        "4 whole A/B campaigns (coverage, rankings against pairs); "
        "test_a_report_of_two_campaigns_sees_them_as_one stays",
    "test_aa_campaigns_that_resolve_call_no_difference_and_say_what_it_would_take":
        "30 A/A campaigns resolved look after look; "
        "test_a_question_resolved_at_the_first_look_measures_no_more stays",
    "test_a_true_twenty_percent_is_found_never_the_same_within_ten_nor_reversed":
        "30 resolving campaigns (power at 1.2x); the look rules stay in the check tier",
    "test_a_known_ratio_is_recovered_and_a_null_factor_is_not_called":
        "30 simulated sweeps (coverage, false calls); the paired-t identity stays",
    "test_the_file_systems_own_luck_cancels_for_workload_options":
        "20 simulated sweeps with a file system's own luck",
    "test_a_target_option_is_compared_between_file_systems":
        "20 simulated sweeps of a target option",
    "test_identical_truth_trips_the_gate_rarely_and_never_calls_a_wide_interval_the_same":
        "12 compares of 20 questions (the gate's error rate); "
        "test_a_true_regression_of_a_fifth_is_found_with_its_interval stays",
    "test_two_aging_runs_compared_cover_the_true_ratio":
        "100 compares of two simulated aging runs (coverage); the sectioned interval's "
        "coverage stays",
    "test_the_interval_covers_the_known_interaction":
        "whole aging-factor campaigns (coverage); the table and its words stay",
    "test_no_interaction_no_ranking_change": "whole aging-factor campaigns (false calls)",
    "test_shared_share_at_two_targets_one_workload_three_iterations":
        "600 draws of the smallest layout; test_shared_share_estimates_the_true_share stays",
    "test_the_repeat_interval_through_the_catalogue_against_known_truth":
        "seven sittings through a catalogue against known truth; the catalogue's sittings "
        "stay in test_a_catalogue_written_before_sittings_reads_each_campaign_as_its_own_sitting",
    "test_a_sitting_recorded_in_a_catalogue_says_whether_it_holds_on_a_repeat":
        "four sittings through a catalogue, each reading the one before",
    "test_sittings_combine_the_hosts_other_sittings_with_their_own":
        "seven sittings through a catalogue, pooled three times; the pooling rules stay",
    "test_compare_counts_the_hosts_spread_between_sittings":
        "seven sittings through a catalogue, compared; test_before_and_after_are_two_sittings "
        "stays",
    "test_pool_from_the_catalogue_and_by_host": "four sittings of three hosts, pooled by host",
    "test_run_again_adds_sittings_and_pools_them_into_the_directory":
        "three sittings by `run --again`; the pooling of directories stays",
    "test_changes_find_the_drop_and_nothing_else":
        "sixteen campaigns through a catalogue (the change points' own calibration and "
        "the fleet's catalogue tests stay)",
    "test_adding_twice_changes_nothing_and_a_moved_directory_is_the_same_campaign":
        "the sixteen campaigns", "test_query_is_read_only_and_errors_are_one_line":
        "the sixteen campaigns", "test_an_unchanged_set_exits_zero": "the sixteen campaigns",
    "test_a_shared_directory_holds_one_history_for_several_machines":
        "the sixteen campaigns",
    "test_change_points_keep_their_error_rate_and_cover_the_truth":
        "600 simulated series (error rate, coverage); the split finder against ruptures "
        "stays",
    "test_tune_again_confirms_the_recommendation_in_new_sittings_and_pools_it":
        "a tune and two more sittings through a catalogue; "
        "test_a_tune_finds_the_best_configuration_and_says_what_to_type stays",
    "test_a_tune_with_a_history_says_what_carries_and_the_words_split_keep":
        "a tune with a history of sittings; the carry rules stay",
    "test_a_latency_bound_is_kept_on_fresh_data": "a whole tune with latencies; "
        "test_a_tune_finds_the_best_configuration_and_says_what_to_type stays",
    "test_a_steady_disk_stops_the_confirmation_where_it_would_outrun_the_sittings":
        "a whole tune with a big budget", "test_where_nothing_matters_no_winner_is_called":
        "a whole tune of 60 runs; the race's and the screen's rules stay",
    "test_a_equal_to_b_is_the_same_within_the_margin_and_a_30_percent_gap_never_is":
        "six whole campaigns (the margin's two answers); "
        "test_an_unresolved_pair_says_what_it_would_take stays",
    "test_shared_share_estimates_the_true_share":
        "300 simulated campaigns (the share and its coverage); "
        "test_note_only_when_there_is_something_to_say stays",
    "test_one_agings_interval_covers_the_known_trend":
        "200 simulated agings (coverage); "
        "test_several_agings_are_a_t_interval_and_a_flat_one_is_not_called stays",
    "test_sectioned_interval_covers_the_truth_about_95_percent":
        "400 simulated runs a statistic (coverage); "
        "test_the_summary_of_an_aging_cell_is_its_sectioned_interval stays",
    "test_pooled_coverage_by_simulation":
        "simulated pools (coverage); the pooling's rules and its two-sitting case stay",
    "test_a_history_right_and_a_history_half_the_truth":
        "960 simulated sets of sittings; the spread's rules stay",
    "test_deciding_after_every_sitting_keeps_its_error_rate_and_says_which_decided":
        "240 simulated sittings decided look by look (error rate); "
        "test_two_sittings_that_agree_decide_as_one_does stays",
    "test_intervals_cover_the_truth_and_never_contradict_their_verdicts[False]":
        "2,700 simulated comparisons, unblocked (coverage, false positives); [True] stays",
    "test_before_and_after_are_two_sittings":
        "six simulated campaigns compared as sittings; "
        "test_compare_and_the_verdicts_agree_on_one_campaign_of_two_targets stays",
    "test_removing_replacing_and_compacting_keep_every_count_exact":
        "three campaigns through a catalogue, removed, replaced and compacted",
    "test_a_single_file_catalogue_of_an_earlier_fslab_reads_and_migrates":
        "two campaigns through a catalogue and its old single-file form; "
        "test_what_is_not_a_catalogue_is_refused_in_one_line stays",
    "test_a_pair_on_the_bests_own_variant_has_the_verdicts_answer":
        "20 simulated sweeps; "
        "test_the_other_pairs_are_one_family_and_a_sentence_never_contradicts_a_pair stays",
}


def touches_the_machine(item: pytest.Item) -> str:
    """Why a test needs the machine (root, mkfs, loop devices, fio, a process of its own,
    or more CPU than the edit-test loop has), read off what it uses; '' when it needs
    none of it."""
    fixtures = set(getattr(item, "fixturenames", ()))
    if used := fixtures & MACHINE_FIXTURES:
        return f"uses {', '.join(sorted(used))}"
    name = getattr(item, "originalname", item.name)
    if why := MACHINE_TESTS.get(name, "") or SIMULATIONS.get(item.name, "") \
            or SIMULATIONS.get(name, ""):
        return why
    source = _source(item)
    for call in ("requires(", "fslab_cmd(", "subprocess."):
        if call in source:
            return f"calls {call.rstrip('(')}"
    return ""


# Tests that measure the machine itself run alone, after the others (make test): a test
# running beside them would be part of what they measure. Module or test -> why.
QUIET = {
    "test_a_known_handicap_is_found_with_the_truth_in_its_interval":
        "asserts how narrow a throttled pair's interval is (1.32x wide beside the others)",
    "test_buffered_basic5_is_marked_where_it_beats_the_raw_device":
        "asserts that page-cache rates beat the disk's by a margin",
    "test_witness": "the witness counts every other process as a busy machine",
    "test_fios_own_files_stay_cached_across_a_cache_drop":
        "counts every byte read from the machine's disk",
    "test_steady_real": "asserts that an idle run's throughput holds still",
    "test_summed_jobs_match_group_reporting": "asserts that two paced fio runs keep pace",
    "test_loop_direct_io_and_slow_device_emulation": "asserts a throttled device's rate",
}
# Daemons tests share: zfs-fuse serves every pool of the machine, a test lists every pool
# and one kills the daemon. Tests that name it, in their code or their parameters, run one
# after another. (A FUSE file system's daemon serves its one mount: those tests pick
# theirs by the lab's path and run beside each other.)
SHARED_DAEMONS = ("zfs", "zpool")


def _source(item: pytest.Item) -> str:
    function = getattr(item, "function", None)
    try:
        return inspect.getsource(function) if function else ""
    except (OSError, TypeError):
        return ""


# every test's name and module, before -m deselects any (tests/test_durations.py)
COLLECTED = pytest.StashKey[set[str]]()


@pytest.hookimpl(tryfirst=True)  # before xdist's loadgroup reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The tiers, decided here and nowhere else: a test that touches the machine is
    `machine` (make test runs it) and, when it measures the machine itself, `quiet` (run
    alone, after the rest); every other one is `check` (make check runs those). Machine
    tests that share a daemon are `shared_daemons`: they run one at a time."""
    config.stash[COLLECTED] = {name for item in items for name in (
        item.name, getattr(item, "originalname", ""),
        item.module.__name__.rpartition(".")[2] if item.module else "")}
    for item in items:
        if not touches_the_machine(item):
            item.add_marker(pytest.mark.check)
            continue
        item.add_marker(pytest.mark.machine)
        if {item.name, getattr(item, "originalname", item.name)} & SIMULATIONS.keys():
            item.add_marker(pytest.mark.simulation)
        module = item.module.__name__.rpartition(".")[2] if item.module else ""
        if module in QUIET or getattr(item, "originalname", item.name) in QUIET:
            item.add_marker(pytest.mark.quiet)
        elif any(name in _source(item) + str(getattr(item, "callspec", "") and
                                              item.callspec.params)  # type: ignore[attr-defined]
                 for name in SHARED_DAEMONS):
            item.add_marker(pytest.mark.shared_daemons)


# after -m has deselected (the tiers above came first): the shares are of what runs
# (pytest reads only names that start with pytest_ as hooks; specname says which)
@pytest.hookimpl(trylast=True, specname="pytest_collection_modifyitems")
def pytest_order_by_expected_time(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Hand out the tests in the order `dealt` gives for this many workers, or in the
    order $FSLAB_TEST_ORDER asks for (`make check-orders`)."""
    items[:] = reordered(dealt(items, int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))),
                         os.environ.get("FSLAB_TEST_ORDER", ""))


def reordered(items: list[pytest.Item], order: str) -> list[pytest.Item]:
    """`reverse`, or `shuffle:SEED` (the same on every worker); '' as they are. A test
    that passes only after another, or only alone, fails in one of them."""
    if order == "reverse":
        return items[::-1]
    if order.startswith("shuffle:"):
        import random

        shuffled = list(items)
        random.Random(order).shuffle(shuffled)
        return shuffled
    return items


# Tests that take 20 s or more in make test's main tier (seconds there, 4 workers on 2
# cores, 2026-11-27), by name (a parametrized one's with its parameters) or by function.
# A stale entry costs only the order below, never a result.
LONG = {
    "test_the_btrfs_space_tunes_without_space_cache_v1_and_measures_zstd": 90,  # f62, alone
    "test_a_lab_disk_filled_while_formatting_stops_in_one_line_and_resume_finishes": 25,
    "test_results_made_read_only_mid_campaign_stop_in_one_line_and_resume_finishes": 25,
    "test_a_daemon_stopped_mid_run_fails_that_run_and_the_campaign_goes_on": 22,
    "test_values_with_colons_spaces_commas_and_slashes_are_all_measured": 22,
    "test_a_campaign_ages_a_target_then_measures_it_against_a_fresh_copy": 68,
    "test_the_raid1_block_size_example": 65,
    "test_a_full_results_disk_stops_in_one_line_and_resume_finishes": 62,
    "test_two_fs_two_workloads_two_iterations": 59,
    "test_interleaved_tree_scans_slower_than_a_fresh_copy_of_it": 56,
    "test_a_tune_killed_mid_race_resumes_to_the_same_answer": 52,
    "test_sixteen_campaigns_record_at_once_while_readers_read": 49,
    "test_fresh_vs_aged_campaign_reports_ratios": 45,
    "test_sigkill_then_cleanup_then_resume": 41,
    "test_iodepth_sweep_end_to_end_with_effects_best_and_the_scaling_chart": 41,
    "test_each_kind_runs_fio_and_leaves_nothing[fat32]": 37,
    "test_identical_targets_show_no_difference": 35,
    "test_a_mount_option_sweep_reads_by_its_options_and_no_label_is_clipped": 34,
    "test_until_ci_adds_iterations": 32,
    "test_the_ceiling_is_one_more_participant_in_the_rounds": 30,
    "test_fat32_basic5_every_cell_has_a_result_or_a_reason": 30,
    "test_history_report_renders_in_chromium_with_the_change_marked": 30,
    "test_a_built_in_workload_and_statistic_are_one_module_and_one_line_each": 29,
    "test_zfs_daemon_killed_mid_run": 27,
    "test_changes_find_the_drop_and_nothing_else": 27,
    "test_the_zfs_primary_cache_example": 26,
    "test_each_kind_runs_fio_and_leaves_nothing[ext3]": 26,
    "test_two_campaigns_share_a_lab_and_cleanup_leaves_live_runs_alone": 26,
    "test_an_aged_target_is_probed_before_and_after_each_run_and_trimmed_first": 25,
    "test_each_kind_runs_fio_and_leaves_nothing[raw]": 24,
    "test_a_fuse_daemon_dying_mid_run_fails_that_run_and_releases_its_mount": 23,
    "test_the_queue_depth_curve_example": 22,
    "test_each_kind_runs_fio_and_leaves_nothing[ext2]": 22,
    "test_compare_and_report_across_aging_runs": 22,
    "test_mount_options_each_get_their_own_file_system": 20,
    "test_api_run_analyze_load": 20,
}
MACHINE_S, CHECK_S = 8.0, 0.3  # a typical test of each tier there
# A test the durations record has (the check tier and SIMULATIONS, CPU-bound): its CPU
# seconds there, twice over (make test's four workers share two cores).
SHARED_CORES = 2.0


@functools.cache
def _recorded() -> dict[str, float]:
    from tests import durations  # a plugin (pytest_plugins above): imported by pytest first

    return {row.test: row.cpu_s * SHARED_CORES for row in durations.read()}


def expected_seconds(item: pytest.Item) -> float:
    """How long the test takes in make test's main tier, about."""
    for name in (item.name, getattr(item, "originalname", item.name)):
        if name in LONG:
            return LONG[name]
    if item.nodeid in _recorded():
        return _recorded()[item.nodeid]
    return MACHINE_S if item.get_closest_marker("machine") else CHECK_S


def dealt(items: list[pytest.Item], workers: int) -> list[pytest.Item]:
    """The tests in the order that ends the workers together. xdist's worksteal hands each
    worker one contiguous share of this list, of equal counts, and an idle worker takes
    the tail of the busiest one's: so the tests are dealt in units (`_units`), longest
    first, each to the share with the least expected time that still has room for it, and
    each share lists its longest first (its short tests at the tail, where they fill the
    gaps at the end). A unit no share has room for (a few tests chosen with -k) is dealt
    test by test. Deterministic: every worker must collect the same order."""
    sizes, left = [], len(items)
    for remaining in range(max(1, workers), 0, -1):  # worksteal's own split
        sizes.append(left // remaining)
        left -= sizes[-1]
    shares: list[list[pytest.Item]] = [[] for _ in sizes]
    totals = [0.0] * len(sizes)

    def deal(unit: list[pytest.Item]) -> None:
        open_ = [i for i, share in enumerate(shares) if len(share) + len(unit) <= sizes[i]]
        if not open_:
            for item in unit:
                deal([item])
            return
        least = min(open_, key=lambda i: totals[i])
        shares[least].extend(unit)
        totals[least] += sum(map(expected_seconds, unit))

    for unit in sorted(_units(items), key=lambda unit: -sum(map(expected_seconds, unit))):
        deal(unit)
    return [item for share in shares for item in share]


def _units(items: list[pytest.Item]) -> list[list[pytest.Item]]:
    """What is dealt: the tests that share a daemon as one unit, longest first (on one
    worker they run one after another; spread over several, each would wait for the
    lock with its worker idle); a module's tests that share a module fixture (its
    simulated campaigns: tests/shared.py) as one unit, in their order (on two workers
    both would make them); every other test alone. Stable."""
    daemons = [item for item in items if item.get_closest_marker("shared_daemons")]
    by_time = sorted(daemons, key=lambda item: -expected_seconds(item))
    units: list[list[pytest.Item]] = [by_time] if daemons else []
    modules: dict[str, list[pytest.Item]] = {}
    for item in items:
        if item.get_closest_marker("shared_daemons"):
            continue
        if _module_fixtures(item):
            if item.module.__name__ not in modules:  # type: ignore[attr-defined]
                modules[item.module.__name__] = []  # type: ignore[attr-defined]
                units.append(modules[item.module.__name__])  # type: ignore[attr-defined]
            modules[item.module.__name__].append(item)  # type: ignore[attr-defined]
        else:
            units.append([item])
    return units


def _module_fixtures(item: pytest.Item) -> bool:
    """Whether the test uses a fixture made once per module."""
    info = getattr(item, "_fixtureinfo", None)
    return info is not None and any(
        defs and defs[-1].scope == "module" for defs in info.name2fixturedefs.values())


# What fslab's code imports inside its functions, and fslab's own modules, loaded once per
# process before the first test (1.4 s of libraries and 0.4 s of fslab here, paid by every
# worker either way): a test's figure in the durations record is then its own work, not
# whether it happened to be the first to need scipy.
LOADED_FIRST = ("scipy.stats", "statsmodels.api", "duckdb", "plotly.offline")


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session: pytest.Session) -> None:
    if not session.items or session.config.option.collectonly:
        return
    import importlib
    import pkgutil

    import fslab

    names = [*LOADED_FIRST, *(m.name for m in pkgutil.walk_packages(fslab.__path__, "fslab.")
                              if not m.name.endswith("__main__"))]
    for name in names:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """The quiet tier alone (make test's `-m quiet`) reads only the files that hold a
    quiet test: importing the other test modules costs it 6 s of a 2-minute tier."""
    if (config.getoption("markexpr", "") != "quiet" or collection_path.suffix != ".py"
            or not collection_path.name.startswith("test_")):
        return None
    if collection_path.stem in QUIET:
        return None
    text = collection_path.read_text()
    return None if any(f"def {name}(" in text for name in QUIET) else True


DAEMONS_LOCK = Path("/tmp/fslab-tests-shared-daemons.lock")


@pytest.fixture(autouse=True)
def one_at_a_time_with_shared_daemons(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test marked shared_daemons holds an exclusive lock while it runs, so that of the
    parallel workers (make test: pytest -n 4) only one at a time uses those daemons."""
    if request.node.get_closest_marker("shared_daemons") is None:
        yield
        return
    import fcntl

    with DAEMONS_LOCK.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def verdict_lines(headline, ranking, tests, pairwise) -> list[str]:
    """verdicts.txt's lines of these questions (verdict_rows as text)."""
    import pandas as pd

    from fslab.analysis.verdicts import VERDICT_COLUMNS, as_text, verdict_rows

    return as_text(pd.DataFrame(verdict_rows(headline, ranking, tests, pairwise),
                                columns=VERDICT_COLUMNS))
