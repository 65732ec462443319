"""One name per thing in the flags (issue 61): a metric accepted as the tables print it and
printed back by its own name; `--budget` one meaning (tune's wall time is --wall-time,
its old --budget kept with a note); the ceiling and the slices described once, in
`fslab run --help` from the constants of the code that does them."""

import re

import pytest

from fslab.analysis.cells.cachebound import CEILING_MARGIN
from fslab.core.descriptions import CEILING, SLICES
from fslab.core.metrics import metric_named
from fslab.plan.loading import load_campaign
from fslab.plan.schema import DEFAULT_ROUNDS, Overrides
from fslab.run.ceiling import CEILING_ITERATIONS, CEILING_REPEATS
from fslab.run.ceiling_cache import REUSE_HOURS
from fslab.run.pieces import COLD_RAMP_MS, MIN_SLICE_MS, MIN_START_MS, rounds_for
from fslab.tune.space import parse_bound, space_of
from fslab.workloads.fio import FioWorkload
from tests.conftest import fslab_here


@pytest.mark.parametrize("typed", ["p99_clat<=2ms", "clat_p99_ns<=2ms", "p99 clat<=2ms",
                                   "P99 completion latency <= 2ms"])
def test_a_bound_names_its_metric_as_the_tables_do_whichever_name_was_typed(typed):
    bound = parse_bound(typed)
    assert (bound.metric, bound.at_most, bound.value) == ("clat_p99_ns", True, 2e6)
    assert bound.text == "clat_p99_ns<=2ms"


def test_metric_names_titles_and_aliases_name_one_metric():
    assert metric_named("IOPS") == metric_named("iops") == "iops"
    assert metric_named("bandwidth") == "bw_bytes"
    assert metric_named("mean clat") == metric_named("mean_clat") == "clat_mean_ns"
    assert metric_named("p99 latency of nothing") is None
    assert space_of({"iodepth": ["1", "4"]}, objective="p99 clat").objective == "clat_p99_ns"
    campaign = load_campaign(None, Overrides(fs=["null"], primary=["IOPS", "p99_clat"]))
    assert campaign.primary == ["iops", "clat_p99_ns"]


def test_tune_wall_time_and_its_old_name_with_a_note():
    args = ["tune", "--fs", "null", "--preset", "null", "--factor",
            "mount_options.atime=relatime,noatime", "--dry-run"]
    new = fslab_here(*args, "--wall-time", "10m")
    old = fslab_here(*args, "--budget", "10m")
    assert new.returncode == old.returncode == 0, old.stderr
    assert new.stdout == old.stdout and "note: tune's --budget is now --wall-time" in old.stderr
    assert "--wall-time" in fslab_here("tune", "--help").stdout
    both = fslab_here(*args, "--budget", "10m", "--wall-time", "5m")
    assert both.returncode == 2 and "give --wall-time alone" in both.stderr


def flat(text: str) -> str:
    return " ".join(text.split())


def test_run_help_describes_the_slices_and_the_ceiling_from_one_text():
    shown = flat(fslab_here("run", "--help").stdout)
    assert flat(SLICES) in shown and flat(CEILING) in shown


def test_the_descriptions_numbers_are_the_codes_own():
    def said(pattern: str, text: str) -> float:
        found = re.search(pattern, text)
        assert found, pattern
        return float(found.group(1))

    assert said(r"A run is (\d+) slices", SLICES) == DEFAULT_ROUNDS
    assert said(r"measure less than ([\d.]+) s", SLICES) == MIN_SLICE_MS / 1000
    assert said(r"carry less than ([\d.]+) s", SLICES) == MIN_START_MS / 1000
    assert said(r"at least ([\d.]+) s and at most", SLICES) == COLD_RAMP_MS / 1000
    default = FioWorkload("j", {"runtime": 2, "ramp_time": 1, "time_based": 1})
    assert said(r"with its 1 s ramp runs in (\d+)", SLICES) == rounds_for(default,
                                                                            DEFAULT_ROUNDS)
    assert said(r"first (\d+) iterations", CEILING) == CEILING_ITERATIONS
    assert said(r"by (\d+) runs before", CEILING) == CEILING_REPEATS
    assert said(r"for ([\d.]+) h", CEILING) == REUSE_HOURS
    assert said(r"above ([\d.]+)x", CEILING) == CEILING_MARGIN
