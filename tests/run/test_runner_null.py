"""The runner, results directory and resume, driven by the null target and workload."""

import json
import subprocess
import sys

import pytest

from fslab import api
from fslab.core import stopwatch
from fslab.core.errors import UserError
from fslab.host.lab import Lab
from fslab.plan.loading import load_campaign
from fslab.plan.order import make_plan
from fslab.plan.preflight import build_targets
from fslab.plan.schema import Overrides
from fslab.results.format_history import FORMAT
from fslab.results.store import ResultsDir
from fslab.run.runner import Runner
from fslab.workloads import NullWorkload


def null_campaign(iterations=2):
    return load_campaign(None, Overrides(fs=["null"], iterations=iterations, seed=5))


def run_null(tmp_path, lab, workloads, iterations=2, results=None):
    campaign = null_campaign(iterations)
    plan = make_plan(campaign, workloads)
    results = results or ResultsDir.create(tmp_path / "out")
    runner = Runner(plan, results, lab, build_targets(plan, frozenset(), False))
    return runner.execute(), results


def test_runs_are_saved_with_identity_and_units(tmp_path, lab):
    outcome, results = run_null(tmp_path, lab, [NullWorkload("a", iops=100),
                                                NullWorkload("b", iops=300)])
    assert (outcome.ok, outcome.failed) == (4, 0)
    metrics = results.load_metrics()
    assert sorted(metrics["run_id"].unique()) == [
        "i001-null-a", "i001-null-b", "i002-null-a", "i002-null-b"]
    assert set(metrics["unit"]) == {"1/s"} and set(metrics["better"]) == {"higher"}
    assert sorted(metrics["iteration"].unique()) == [1, 2]
    by_workload = metrics.groupby("workload")["value"].mean()
    assert by_workload["a"] == 100 and by_workload["b"] == 300
    assert not list(lab.sessions())  # the session closed and removed itself


def test_failed_workload_is_recorded_and_campaign_goes_on(tmp_path, lab):
    outcome, results = run_null(tmp_path, lab, [NullWorkload("bad", fail=True),
                                                NullWorkload("good")])
    assert (outcome.ok, outcome.failed) == (2, 2)
    runs = results.load_runs().set_index("run_id")
    assert runs.loc["i001-null-bad", "status"] == "failed"
    assert runs.loc["i001-null-bad", "failure"] == "tool"  # the workload said no kind
    assert runs.loc["i001-null-good", "failure"] == ""
    assert "asked to fail" in runs.loc["i001-null-bad", "reason"]
    assert set(results.load_metrics()["workload"]) == {"good"}


def test_each_run_records_its_steps_and_they_add_up_to_its_time(tmp_path, lab):
    """The steps of a run (core/stopwatch.py) count each second once: a run measured in
    one piece is a round of one slice, timed from its placing to its record."""
    outcome, results = run_null(tmp_path, lab, [NullWorkload("a", sleep_s=0.3)])
    assert outcome.ok == 2
    for record in results.run_records():
        assert 0.3 <= record.steps["measure"] < 0.5, record.steps
        # the record step is left out when it rounds to no millisecond (it did on a lab
        # in memory, /dev/shm): every step named is one of the stopwatch's
        assert "harness" in record.steps and set(record.steps) <= set(stopwatch.ORDER)
        # teardown comes after the record is written (a target outlives its run), and
        # the record step ends just after the record's `finished` is stamped
        in_record = record.machine_s - record.steps.get("teardown", 0.0)
        assert in_record <= record.finished - record.started + 0.05, record.steps
    runs = results.load_runs()
    assert (runs["measured_s"] >= 0.3).all() and (runs["machine_s"] >= runs["measured_s"]).all()
    spent = api.machine_time(results.path)
    assert spent.measured_s == pytest.approx(runs["measured_s"].sum())  # summed in two orders
    assert "measuring (" in spent.line() and spent.beside == {}


class Hungry(NullWorkload):
    """A null workload whose files fit nowhere."""

    def required_bytes(self) -> int:
        return 2**60


def test_a_run_whose_files_do_not_fit_is_no_space_after_one_fresh_target(tmp_path, lab,
                                                                          monkeypatch):
    """A reused target short of space is made afresh once (deferred frees), then the run
    fails as no_space; the campaign goes on."""
    import fslab.targets.base

    monkeypatch.setattr(fslab.targets.base, "SPACE_SETTLE_S", 0.2)
    outcome, results = run_null(tmp_path, lab, [NullWorkload("a"), Hungry("big")],
                                iterations=1)
    assert (outcome.ok, outcome.failed) == (1, 1)
    big = results.run_record("i001-null-big")
    assert results.run_record("i001-null-a").started < big.started  # it reused a's target
    assert big.failure == "no_space" and big.reason.startswith("needs ")
    assert big.target_description.details["reprovisioned"] == \
        "space not reclaimed after earlier runs"
    assert big.steps.get("teardown", 0) > 0  # the first target's release, paid by this run


def test_resume_skips_completed_runs_and_redoes_the_one_in_flight(tmp_path, lab):
    workloads = [NullWorkload("a"), NullWorkload("b")]
    _, results = run_null(tmp_path, lab, workloads)
    first = {r.run_id: r.started for r in results.run_records()}
    # Simulate a run killed in flight: its directory exists, its run.json does not.
    (results.runs_dir / "i002-null-b" / "run.json").unlink()
    (results.runs_dir / "i002-null-b" / "partial").write_text("x")
    outcome, _ = run_null(tmp_path, lab, workloads, results=results)
    assert (outcome.ok, outcome.skipped) == (1, 3)
    again = {r.run_id: r.started for r in results.run_records()}
    assert {k: v for k, v in again.items() if k != "i002-null-b"} == {
        k: v for k, v in first.items() if k != "i002-null-b"}
    assert not (results.runs_dir / "i002-null-b" / "partial").exists()
    assert len(results.load_metrics()) == 4


def test_results_dir_refuses_reuse_and_newer_formats(tmp_path):
    results = ResultsDir.create(tmp_path / "out")
    with pytest.raises(UserError, match="--resume"):
        ResultsDir.create(tmp_path / "out")
    (results.path / "format.json").write_text(json.dumps({"format": FORMAT.current + 1}))
    with pytest.raises(UserError, match="newer fslab"):
        ResultsDir.open(results.path)


def test_api_run_analyze_load(tmp_path, lab):
    """The plain-Python pipeline: api.run, then api.analyze and api.load on its output."""
    from tests.conftest import requires

    requires("fio", root=False)
    campaign = load_campaign(None, Overrides(fs=["null"], workloads=["randread"],
                                             iterations=2, runtime="1", file_size="8M",
                                             seed=5))
    result = api.run(campaign, out=tmp_path / "api", lab=lab)
    assert (result.runner.ok, result.runner.failed) == (2, 0)
    assert result.summary is not None and not result.summary.empty
    # The run left every stats/ table: the report renders them without analysing again
    # (issue 24: a fresh process renders it without once calling the analysis).
    probe = ("import sys; from fslab import api; import fslab.api.results as r; calls = []; "
             "real = r.analyze_results; r.analyze_results = lambda d: calls.append(d) or real(d); "
             "api.report(sys.argv[1]); print(len(calls))")
    found = subprocess.run([sys.executable, "-c", probe, str(tmp_path / "api")],
                           capture_output=True, text=True, check=True)
    assert found.stdout.strip() == "0", found.stdout + found.stderr
    assert "analysing" not in found.stdout + found.stderr
    assert "randread" in (tmp_path / "api" / "report.html").read_text()
    summary = api.analyze(tmp_path / "api")
    assert (tmp_path / "api" / "stats" / "verdicts.txt").exists()
    cell = summary[(summary.metric == "iops") & (summary.op == "read")].iloc[0]
    assert cell["n"] == 2 and cell["ci_low"] < cell["mean"] < cell["ci_high"]
    metrics = api.load(tmp_path / "api")
    assert set(metrics["iteration"]) == {1, 2} and set(metrics["fs"]) == {"null"}
    assert sorted(api.runs(tmp_path / "api")["run_id"]) == [
        "i001-null-randread", "i002-null-randread"]


def test_cleanup_releases_a_dead_sessions_resources(tmp_path):
    lab = Lab(tmp_path / "lab")
    session = lab.open_session()
    made = session.path_for("images", "x.img")
    made.parent.mkdir()
    session.record("file", made)
    made.write_text("image")
    # Pretend the owner died: a start time that no live process has.
    owner = json.loads((session.dir / "session.json").read_text())
    owner["start_time"] = -1
    (session.dir / "session.json").write_text(json.dumps(owner))
    report = lab.cleanup()
    assert not made.exists() and report.released == [f"file {made}"]
    assert not session.dir.exists()


def test_a_target_made_again_gets_an_image_of_its_own_while_the_last_goes(tmp_path):
    """An image is removed in the background (release_soon): the next one made for the
    same target must not share its path, or the removal would take the new one."""
    session = Lab(tmp_path / "lab").open_session()
    first = session.new_path("images", "ext4.img")
    first.parent.mkdir(parents=True)
    first.write_bytes(b"old")
    session.release_soon(session.record("file", first))
    second = session.new_path("images", "ext4.img")
    second.write_bytes(b"new")
    assert (first.name, second.name) == ("ext4.img", "ext4-2.img")
    session.close()  # waits for the removal, then removes the session
    assert not first.exists() and not second.exists()


def test_cleanup_leaves_a_live_session_alone(tmp_path):
    lab = Lab(tmp_path / "lab")
    session = lab.open_session()
    keep = session.path_for("keep.img")
    session.record("file", keep)
    keep.write_text("x")
    report = lab.cleanup()
    assert keep.exists() and report.skipped
    session.close()
    assert not keep.exists()


def test_ledger_never_deletes_outside_the_lab(tmp_path):
    lab = Lab(tmp_path / "lab")
    session = lab.open_session()
    outside = tmp_path / "precious.txt"
    outside.write_text("keep me")
    session.record("file", outside)
    report = session.close()
    assert outside.exists() and "outside the lab" in report.errors[0]


def test_a_local_workload_is_recorded_unsupported_on_load_nodes(tmp_path, lab):
    """A workload declares whether it runs on load nodes (runs_on_load_nodes); the runner
    reads the declaration, not the workload's family name."""
    assert not NullWorkload("a").runs_on_load_nodes
    plan = make_plan(null_campaign(1), [NullWorkload("a", iops=100)])
    results = ResultsDir.create(tmp_path / "out")
    outcome = Runner(plan, results, lab, build_targets(plan, frozenset(), False),
                     hosts=("node1",)).execute()
    runs = results.load_runs()
    assert outcome.ok == 0 and runs["status"].tolist() == ["unsupported"]
    assert runs["failure"].tolist() == ["unsupported"]
    assert "runs on this machine only" in runs["reason"].iloc[0]
