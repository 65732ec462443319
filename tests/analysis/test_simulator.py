"""Whole campaigns of the simulator (fs = "null", preset = "null") with known truth,
through the same API `fslab run` calls: reproducible draws, A/A campaigns that claim
nothing, A/B campaigns whose intervals cover the truth, rankings that never contradict a
pair, and adaptive runs whose pilot chooses and is then left out (issue 21)."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from fslab import api
from fslab.plan.loading import resolve
from fslab.plan.schema import CampaignFile, Overrides
from tests.conftest import fslab_here


def simulated(scales: dict[str, float], seed: int, iterations: int = 5, jobs: int = 10,
              cv: float = 0.10, drift: float = 0.10, **extra):
    """A resolved simulator campaign: one target per scale, `jobs` questions."""
    parsed = CampaignFile.model_validate({
        "name": "sim", "iterations": iterations, "seed": seed, **extra,
        "target": [{"name": name, "fs": "null", "scale": scale}
                   for name, scale in scales.items()],
        "workload": [{"preset": "null",
                      "options": {"jobs": jobs, "iops": 1000, "cv": cv, "drift": drift}}]})
    return resolve(parsed, Overrides(), Path.cwd())


def run_sim(tmp_path: Path, name: str, campaign, **options) -> Path:
    out = tmp_path / name
    api.run(campaign, out=out, lab=api_lab(tmp_path),
            options=api.RunOptions(**options))  # analyses at its end
    return out


def api_lab(tmp_path: Path):
    from fslab.host.lab import Lab

    return Lab(tmp_path / "lab")


def pairs_of(out: Path) -> pd.DataFrame:
    return pd.read_csv(out / "stats" / "pairwise.csv")


def test_the_seed_makes_the_draws(tmp_path):
    first = run_sim(tmp_path, "a", simulated({"a": 1.0, "b": 1.25}, seed=7, jobs=3))
    again = run_sim(tmp_path, "b", simulated({"a": 1.0, "b": 1.25}, seed=7, jobs=3))
    other = run_sim(tmp_path, "c", simulated({"a": 1.0, "b": 1.25}, seed=8, jobs=3))
    values = [api.load(d).sort_values("run_id")["value"].to_numpy() for d in
              (first, again, other)]
    assert (values[0] == values[1]).all()
    assert not (values[0] == values[2]).any()


def test_latency_comes_with_the_variance_components_too(tmp_path):
    """`latency = true` beside `between`/`within` (a disk with a fresh file system's luck
    and virtual machine time): every run reports its completion latency, the mean by
    Little's law for `depth` I/Os in flight (mean × IOPS = depth), the p99 above it."""
    parsed = CampaignFile.model_validate({
        "name": "lat", "iterations": 2, "seed": 3, "runtime": 2,
        "target": [{"name": "a", "fs": "null"}, {"name": "b", "fs": "null", "scale": 1.2}],
        "workload": [{"preset": "null", "options": {
            "iops": 5000, "between": 0.05, "within": 0.1, "fixed_s": 1, "latency": True,
            "depth": 8}}]})
    out = run_sim(tmp_path, "lat", resolve(parsed, Overrides(), Path.cwd()))
    wide = api.load(out).pivot_table(index="run_id", columns="metric", values="value")
    assert len(wide) == 4 and wide[["clat_mean_ns", "clat_p99_ns"]].notna().all().all()
    little = wide["clat_mean_ns"] * wide["iops"] / 1e9
    assert little.sub(8).abs().max() < 1e-6
    assert (wide["clat_p99_ns"] > wide["clat_mean_ns"]).all()


def test_aa_campaigns_claim_no_difference(tmp_path):
    """6 A/A campaigns of 3 identical targets × 10 questions (drift 10 %, CV 10 %): the
    campaign-wide family keeps the chance of any false verdict per campaign at 5 %
    (benchmarks/simulator_error_rates runs hundreds). Without the family, 30 pairs at
    5 % each would claim something in 4 campaigns of 5."""
    claimed, pairs = 0, 0
    for seed in range(6):
        out = run_sim(tmp_path, f"aa{seed}", simulated({"a": 1, "b": 1, "c": 1}, seed))
        found = pairs_of(out)
        primary = found[found["primary"]]
        pairs += len(primary)
        claimed += int(primary["significant"].any())
        lines = (out / "stats" / "verdicts.txt").read_text().splitlines()
        assert sum("faster than" in line for line in lines) == primary[  # exact: counts
            "significant"].sum()
    assert pairs == 6 * 10 * 3
    assert claimed <= 1  # 6 campaigns at ≤ 5 % each: 0.3 expected, ≥ 2 has p < 0.033


def test_ab_intervals_cover_the_truth_and_rankings_agree_with_pairs(tmp_path):
    covered = total = contradictions = 0
    for seed in range(4):  # benchmarks/simulator_error_rates: 200
        out = run_sim(tmp_path, f"ab{seed}",
                      simulated({"fast": 1.25, "same": 1.0, "slow": 1.0}, seed))
        found = pairs_of(out)
        truth = {"fast": 1.25, "same": 1.0, "slow": 1.0}
        for row in found.itertuples():
            true_ratio = truth[row.a] / truth[row.b]
            covered += row.ratio_ci_low <= true_ratio <= row.ratio_ci_high
            total += 1
            excludes_one = not (row.ratio_ci_low <= 1 <= row.ratio_ci_high)
            contradictions += excludes_one != row.significant
        headline = pd.read_csv(out / "stats" / "headline.csv")
        for head in headline.itertuples():
            rows = found[(found.workload == head.workload) & found["primary"]]
            if rows["significant"].any():
                assert ">" in head.ranking, head.ranking  # never "no difference" then
            else:
                assert ">" not in head.ranking
    assert contradictions == 0
    assert covered / total >= 0.94


def test_adaptive_pilot_chooses_and_is_left_out(tmp_path):
    out = run_sim(tmp_path, "adaptive", simulated({"a": 1.0, "b": 1.1}, seed=3,
                                                  iterations=3, jobs=4),
                  until_detectable=15, max_iterations=16)
    campaign = (out / "campaign.toml").read_text()
    assert "pilot = 3" in campaign
    iterations = int(next(line.split("=")[1] for line in campaign.splitlines()
                          if line.startswith("iterations")))
    assert 3 + 3 <= iterations <= 16
    ranking = pd.read_csv(out / "stats" / "ranking.csv")
    assert set(ranking["n"]) == {iterations - 3}  # the verdicts use the second stage only
    summary = pd.read_csv(out / "stats" / "summary.csv")
    assert set(summary["n"]) == {iterations - 3}
    methods = pd.read_csv(out / "stats" / "methods.csv").set_index("step")["method"]
    assert "first 3 iterations were a pilot" in methods["adaptive"]  # the report says so


def test_a_missing_iteration_changes_only_its_own_pairs(tmp_path):
    out = run_sim(tmp_path, "gap", simulated({"a": 1.0, "b": 1.0, "c": 1.0}, seed=5, jobs=1))
    metrics = api.load(out)
    before = pairs_of(out).set_index(["a", "b"])
    kept = metrics[~((metrics["target"] == "c") & (metrics["iteration"] == 2))]
    kept.to_parquet(out / "metrics.parquet", index=False)
    api.analyze(out)
    after = pairs_of(out).set_index(["a", "b"])
    assert after.loc[("a", "b"), "ratio_ci_low"] == pytest.approx(
        before.loc[("a", "b"), "ratio_ci_low"], rel=1e-12)  # untouched by c's gap
    assert after.loc[("a", "c"), "n_pairs"] == 4 and after.loc[("a", "b"), "n_pairs"] == 5
    assert math.isfinite(after.loc[("a", "c"), "ratio_ci_low"])


@pytest.mark.privileged
def test_the_report_opens_with_the_ranking_charts(tmp_path):
    """The report leads with the answer: one chart per workload (each target relative to
    the best, log axis, interval bars), human headings; the first screen, photographed
    in headless Chromium, is those charts."""
    import json
    import re
    import subprocess

    from tests.conftest import requires
    from tests.ingest.test_import_report import chromium

    requires("chromium", root=False)
    out = run_sim(tmp_path, "report", simulated({"a": 1.5, "b": 1.0, "c": 1.0}, seed=2,
                                                jobs=3))
    page = api.report(out)
    html = page.read_text()
    body = html[html.index("<body>"):]
    first_fold = body[:body.index("<details")]
    assert "Which target is faster" in first_fold
    for machine_name in ("ratio_ci_low", "mde_ratio", "p_adj"):
        assert machine_name not in first_fold
    specs = [json.loads(spec.replace("\\u003c", "<").replace("\\u003e", ">").replace(
        "\\u0026", "&")) for spec in re.findall(r'data-chart="chart\d+">(.*?)</script>', body)]
    leading = specs[:3]
    assert all("relative to" in s["layout"]["title"]["text"] for s in leading)
    assert all(s["layout"]["xaxis"]["type"] == "log" for s in leading)
    assert all("error_x" in s["data"][0] for s in leading)
    dom = chromium(page, tmp_path)
    assert 'data-js-errors="0"' in dom
    shot = tmp_path / "first-screen.png"
    subprocess.run(["chromium", "--headless=new", "--no-sandbox", "--disable-gpu",
                    "--disable-quic", "--no-first-run", "--disable-background-networking",
                    "--disable-component-update", "--disable-sync",
                    f"--user-data-dir={tmp_path / 'chromium-shot'}",
                    "--virtual-time-budget=20000", "--window-size=1280,900",
                    f"--screenshot={shot}", page.as_uri()],
                   capture_output=True, timeout=120, check=True)
    assert shot.stat().st_size > 20_000  # charts drawn, not a blank page


def test_run_then_report_says_it_analyses_once_and_prints_each_steps_method(tmp_path):
    """Issue 24: `fslab run` leaves the whole analysis in stats/, which the report reads
    without analysing again; a report over a stats/ with no analysis says why it
    analyses, once; the verdicts are a table (verdicts.txt is its text, never parsed
    back) and each analysis step's own method statement is printed by the report."""
    import shutil

    from fslab.analysis.step import steps

    out = tmp_path / "contract"
    api.run(simulated({"a": 1.3, "b": 1.0}, seed=4, jobs=2), out=out, lab=api_lab(tmp_path))
    said: list[str] = []
    api.report(out, say=said.append)
    assert said == []  # the run's own analysis, read back
    shutil.rmtree(out / "stats")
    api.report(out, say=said.append)
    assert len(said) == 1 and "stats/ holds no analysis yet" in said[0]
    api.report(out, say=said.append)
    assert len(said) == 1  # read back, not analysed again

    stats = out / "stats"
    verdicts = pd.read_csv(stats / "verdicts.csv").fillna("")
    assert list(verdicts.columns) == ["kind", "workload", "text"]
    kinds = [kind for kind in verdicts["kind"] if kind != "machine"]  # a busy machine first
    assert kinds[0] == "family" and "workload" in kinds
    text = (stats / "verdicts.txt").read_text().splitlines()
    assert len(text) == len(verdicts)
    headings = verdicts[verdicts["kind"] == "workload"]
    assert all(f"== {name} ==" in text for name in headings["text"])
    page = (out / "report.html").read_text()
    import html as html_lib

    always = [row for step in steps() if step.stated is None for row in step.statements({})]
    for row in always:  # every step's statement that every campaign states
        assert html_lib.escape(row["method"]) in page, row["step"]
    assert "Adaptive runs" not in page  # not adaptive: its statement is not printed
    methods = pd.read_csv(stats / "methods.csv")
    from fslab.analysis.statistic import registered  # fslab's own statistics after its steps

    assert list(methods["step"]) == [*(row["step"] for row in always),
                                     *(s.name for s in registered())]
    assert "noise" in set(methods["step"])  # a built-in statistic, registered as plug-ins are

    metrics = out / "metrics.parquet"
    metrics.touch()  # the results changed: stats/ is stale and the report says so
    import os

    os.utime(metrics, ns=(1, 1))
    api.report(out, say=said.append)
    assert len(said) == 2 and "the results changed" in said[1]


def test_a_report_of_two_campaigns_sees_them_as_one(tmp_path):
    """`fslab report A B` (issue 24): two campaigns' targets side by side, each labelled
    by its directory; within a directory pairs stay blocked by iteration, across two they
    are compared unblocked (their iterations are not blocks of each other); the setup
    names what differs; nothing is written into either directory."""
    before = tmp_path / "before"
    after = tmp_path / "after"
    api.run(simulated({"a": 1.0, "b": 1.0}, seed=5, jobs=1), out=before, lab=api_lab(tmp_path))
    api.run(simulated({"a": 1.5, "b": 1.0}, seed=6, jobs=1, iterations=6), out=after,
            lab=api_lab(tmp_path))
    kept = {d: sorted(p.name for p in (d / "stats").iterdir()) for d in (before, after)}
    made = fslab_here("report", str(before), str(after), "-o", str(tmp_path / "both.html"))
    assert made.returncode == 0, made.stderr
    page = (tmp_path / "both.html").read_text()
    for label in ("before:a", "before:b", "after:a", "after:b"):
        assert label in page
    assert "before → after: what differs" in page
    assert kept == {d: sorted(p.name for p in (d / "stats").iterdir()) for d in (before, after)}
    from fslab.analysis.pipeline import analyse
    from fslab.report.several import several
    from fslab.results.store import ResultsDir

    sources, inputs = several([ResultsDir.open(before), ResultsDir.open(after)])
    assert [s.label for s in sources] == ["before", "after"]
    pairs = analyse(inputs).pairwise
    by_pair = {(p.a, p.b): p for p in pairs.itertuples()}
    assert by_pair[("before:a", "before:b")].n_pairs == 5  # blocked within a directory
    assert by_pair[("after:a", "before:a")].n_pairs == 0  # never across two
    assert by_pair[("after:a", "before:a")].ratio == pytest.approx(1.5, rel=0.15)
