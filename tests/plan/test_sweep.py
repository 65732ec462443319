"""Sweeps as a plan (plan/sweep.py): factors from flags, the [sweep] table and a target's
own lists; sweeps that cannot change anything refused in one line; the product of the
levels as cells named by them; levels as columns of the metrics, runs and summary tables
(simulator campaigns, real runs of the null target); a budget that asks for --yes."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from fslab import api
from fslab.core.errors import UserError
from fslab.host.lab import Lab
from fslab.plan.levels import parse_flag
from fslab.plan.loading import load_campaign, resolve
from fslab.plan.order import check_budget, make_plan
from fslab.plan.schema import CampaignFile, Overrides
from tests.conftest import fslab_here


def sim(sweep: dict, targets: list[dict] | None = None, iterations: int = 3,
        **options) -> object:
    parsed = CampaignFile.model_validate({
        "name": "sweep", "iterations": iterations, "seed": 4, "sweep": sweep,
        "target": targets or [{"name": "a", "fs": "null"}, {"name": "b", "fs": "null",
                                                             "scale": 1.25}],
        "workload": [{"preset": "null", "options": {"cv": 0.1, **options}}]})
    return resolve(parsed, Overrides(), Path.cwd())


def test_iodepth_on_a_synchronous_engine_is_refused_in_one_line():
    out = fslab_here("run", "--fs", "ext4", "--workloads", "randread", "--sweep",
                     "iodepth=1,8", "--dry-run")
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "iodepth" in lines[0] and "synchronous" in lines[0]
    assert "Traceback" not in out.stderr


def test_with_an_asynchronous_engine_the_plan_has_two_cells():
    out = fslab_here("run", "--fs", "ext4", "--workloads", "randread", "--sweep",
                     "iodepth=1,8", "--sweep", "ioengine=libaio", "--dry-run",
                     "--iterations", "2")
    assert out.returncode == 0, out.stderr
    assert "Cells: 2 — randread iodepth=1 on ext4; randread iodepth=8 on ext4" in out.stdout
    assert "Set: ioengine=libaio" in out.stdout
    assert "Runs: 4 (4 fio runs)" in out.stdout and "Time measuring" in out.stdout
    assert "iodepth=8" in out.stdout and "ioengine=libaio" in out.stdout  # the job files


def test_buffered_libaio_does_not_queue_either():
    out = fslab_here("run", "--fs", "ext4", "--preset", "basic5", "--workloads",
                     "randread", "--sweep", "iodepth=1,8", "--sweep", "ioengine=libaio",
                     "--dry-run")
    assert out.returncode == 2 and "direct=1" in out.stderr


@pytest.mark.parametrize(("flags", "words"), [
    (["--sweep", "iodepth=1,1"], "given twice"),
    (["--sweep", "zfs.primarycache=all,none"], "no target of this campaign"),
    (["--sweep", "zfs.nosuchthing=1,2"], "zfs has no property"),
    (["--sweep", "iodepth"], "bad --sweep"),
    (["--sweep", "rw=read,x/y"], "'/'"),
    (["--sweep", "numjobs=1,2", "--sweep", "numjobs=4"], "given twice"),
    (["--sweep", "target=a,b"], "cannot name a factor"),
    (["--sweep", "nosuchfiooption=1,2"], "no workload of this campaign"),
])
def test_sweeps_that_cannot_mean_anything_are_one_line_each(flags, words):
    out = fslab_here("run", "--fs", "ext4", "--workloads", "randread", *flags, "--dry-run")
    assert out.returncode == 2, out.stdout
    assert words in out.stderr and len(out.stderr.strip().splitlines()) == 1


def test_the_plan_is_the_product_of_the_levels_named_by_them():
    campaign = sim({"iops": [1000, 2000], "tag": ["x", "y"]},
                   [{"name": "a", "fs": "null"},
                    {"name": "b", "fs": "null", "scale": [1.0, 1.5]}])
    plan = make_plan(campaign)
    cells = {(r.target.name, r.workload.name) for r in plan.runs}
    assert len(cells) == 3 * 4 and len(plan.runs) == 12 * 3
    assert ("b scale=1.5", "w1 iops=2000 tag=y") in cells
    run = next(r for r in plan.runs if r.target.name == "b scale=1.5"
               and r.workload.name == "w1 iops=2000 tag=y")
    assert run.levels == {"scale": "1.5", "iops": "2000", "tag": "y"}
    assert run.run_id.endswith("-b_scale-1.5-w1_iops-2000_tag-y") and " " not in run.run_id
    assert run.target.options["scale"] == 1.5 and run.workload.iops == 2000.0
    assert run.job_name == "w1" and run.cell.target == "b"  # the job: measured together


def test_a_one_level_sweep_sets_the_option_and_names_nothing():
    campaign = sim({"iops": [3000]})
    plan = make_plan(campaign)
    assert {r.workload.name for r in plan.runs} == {"w1"}
    assert all(r.workload.iops == 3000.0 and r.levels == {} for r in plan.runs)


def test_a_saved_sweep_resumes_into_the_same_runs(tmp_path):
    campaign = sim({"iops": [1000, 2000]},
                   [{"name": "a", "fs": "null"},
                    {"name": "b", "fs": "null", "scale": [1.0, 1.5]}])
    out = tmp_path / "out"
    api.run(campaign, out=out, lab=Lab(tmp_path / "lab"))
    again = api.resume_campaign(out)
    assert [r.run_id for r in make_plan(again).runs] == [r.run_id for r in
                                                         make_plan(campaign).runs]
    saved = (out / "campaign.toml").read_text()
    assert "[sweep]" in saved and "scale = [" in saved


def test_levels_are_columns_of_metrics_runs_and_summary(tmp_path):
    campaign = sim({"iops": [1000, 2000], "tag": ["x", "y"]},
                   [{"name": "a", "fs": "null"},
                    {"name": "b", "fs": "null", "scale": [1.0, 1.5]}])
    out = tmp_path / "out"
    api.run(campaign, out=out, lab=Lab(tmp_path / "lab"))
    metrics = api.load(out)
    for column in ("iops", "tag", "scale"):
        assert column in metrics
    row = metrics[(metrics["target"] == "b scale=1.5")
                  & (metrics["workload"] == "w1 iops=2000 tag=x")].iloc[0]
    assert (row["iops"], row["tag"], row["scale"]) == ("2000", "x", "1.5")
    assert metrics.loc[metrics["target"] == "a", "scale"].isna().all()
    runs = api.runs(out)
    assert {"iops", "tag", "scale"} <= set(runs.columns)
    summary = pd.read_csv(out / "stats" / "summary.csv")
    assert {"iops", "tag", "scale"} <= set(summary.columns)
    effects = pd.read_csv(out / "stats" / "effects.csv")
    assert set(effects["factor"]) == {"iops", "tag", "scale"}
    assert set(effects.columns) >= {"workload", "metric", "factor", "level", "reference",
                                    "ratio", "ratio_ci_low", "ratio_ci_high", "p_adj"}
    best = pd.read_csv(out / "stats" / "best.csv")
    assert (best["role"] == "best").sum() == 1 and best["workload"].iloc[0] == "w1"
    verdicts = (out / "stats" / "verdicts.txt").read_text()
    assert "w1: best " in verdicts and "iops 1000→2000: " in verdicts


def test_a_plan_past_its_budget_needs_yes(tmp_path):
    campaign = load_campaign(None, Overrides(fs=["ext4"], workloads=["randread"],
                                             iterations=150, runtime="60"))
    with pytest.raises(UserError, match="past the budget of 2 h 00 min: add --yes"):
        check_budget(make_plan(campaign).runs, 2 * 3600)
    check_budget(make_plan(campaign).runs, 4 * 3600)
    fio_on_null = load_campaign(None, Overrides(fs=["null"], workloads=["randread"]))
    with pytest.raises(UserError, match="--yes"):
        api.run(fio_on_null, out=tmp_path / "never", lab=Lab(tmp_path / "lab"),
                options=api.RunOptions(budget=1))
    assert not (tmp_path / "never").exists()


def test_the_flag_parser():
    assert parse_flag("iodepth=1,8,32") == ("iodepth", ["1", "8", "32"])
    assert parse_flag("zfs.primarycache=all,none") == ("zfs.primarycache", ["all", "none"])
    with pytest.raises(UserError):
        parse_flag("iodepth=")


def test_the_verdicts_take_a_factors_levels_in_numeric_order(tmp_path):
    """iops=500, 2000, 10000: as numbers, not as text ('10000' < '2000' < '500')."""
    out = tmp_path / "out"
    api.run(sim({"iops": [2000, 500, 10000]}), out=out, lab=Lab(tmp_path / "lab"))
    verdicts = (out / "stats" / "verdicts.txt").read_text()
    at = [line.split(":")[0].strip() for line in verdicts.splitlines()
          if line.strip().startswith("at iops=")]
    assert at == ["at iops=500", "at iops=2000", "at iops=10000"]
