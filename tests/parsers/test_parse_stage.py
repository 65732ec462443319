"""Parse is a stage (issue 24): one registry of raw-output kinds, one `parse_run` that the
runner, `fslab reparse` and `fslab import` all call. A new kind is one parser and one
registry line; here a test adds one and both commands read it."""

import json
from pathlib import Path

import pytest

from fslab import api
from fslab.core.metrics import Measurement
from fslab.parsers import registry
from fslab.parsers.fio_kinds import imported_name
from fslab.parsers.raw_files import DirFiles, MemoryFiles, Parsed, RawFiles, RawKind
from tests.analysis.test_simulator import api_lab, simulated
from tests.conftest import REPO, fslab_here

TOY_NAME = "toy.txt"  # a run's own output of the new kind (as a workload would write it)
SCALE = {"factor": 1.0}  # what a corrected parser changes


def _toy_text(files: RawFiles) -> str | None:
    """A toy benchmark's output: 'TOYBENCH' then 'op ops_per_s' lines."""
    name = TOY_NAME if TOY_NAME in files.names() else imported_name(files)
    if name is None:
        return None
    text = files.read(name).decode()
    return text if text.startswith("TOYBENCH\n") else None


def _parse_toy(files: RawFiles) -> Parsed:
    text = _toy_text(files)
    assert text is not None
    rows = [line.split() for line in text.splitlines()[1:] if line.strip()]
    return Parsed("toy", [Measurement(op, "ops_per_s", float(value) * SCALE["factor"])
                          for op, value in rows], {"tool": "toybench"})


TOY = RawKind("toy", "toybench output", lambda files: _toy_text(files) is not None, _parse_toy)


@pytest.fixture
def toy_registered(monkeypatch):
    monkeypatch.setattr(registry, "KINDS", [*registry.KINDS, TOY])  # the one registry line
    monkeypatch.setitem(SCALE, "factor", 1.0)


def _values(out: Path) -> dict[tuple[str, str], float]:
    rows = api.load(out)
    rows = rows[rows.metric == "ops_per_s"]
    return {(str(r.fs), str(r.op)): float(r.value) for r in rows.itertuples()}


def test_import_and_reparse_read_a_kind_added_to_the_registry(tmp_path, toy_registered):
    tree = tmp_path / "tree"
    for fs, create in (("ext4", 120), ("xfs", 150)):
        (tree / fs).mkdir(parents=True)
        (tree / fs / "toy-1.txt").write_text(f"TOYBENCH\ncreate {create}\ndelete 90\n")
    (tree / "ext4" / "notes.txt").write_text("not a benchmark's output\n")
    out = tmp_path / "out"
    done = fslab_here("import", str(tree), "--out", str(out))
    assert done.returncode == 4, done.stderr  # imported, with a skipped file named
    assert _values(out) == {("ext4", "create"): 120.0, ("ext4", "delete"): 90.0,
                            ("xfs", "create"): 150.0, ("xfs", "delete"): 90.0}
    skipped = (out / "import_errors.csv").read_text()
    assert "ext4/notes.txt" in skipped and "toybench output" in skipped  # named in the reason
    record = next(r for r in api.results_dir(out).run_records() if r.fs == "xfs")
    assert (record.kind, record.tool) == ("toy", "toybench")
    SCALE["factor"] = 2.0  # a corrected parser: `fslab reparse` reaches the imported rows
    done = fslab_here("reparse", str(out))
    assert done.returncode == 0, done.stderr
    assert _values(out)[("xfs", "create")] == 300.0


def test_a_campaign_run_of_the_new_kind_is_parsed_by_the_runner_and_reparse(
        tmp_path, toy_registered, monkeypatch):
    """The runner parses a finished run through the registry: a simulator run whose raw
    output is of the new kind gets the new kind's rows, and `fslab reparse` rebuilds them."""
    from fslab.workloads.null import NullWorkload

    real_run = NullWorkload.run

    def toy_run(self, where, run_dir):
        output = real_run(self, where, run_dir)
        (run_dir / "null.json").unlink()
        (run_dir / TOY_NAME).write_text("TOYBENCH\ncreate 42\n")
        return output

    monkeypatch.setattr(NullWorkload, "run", toy_run)
    out = tmp_path / "sim"
    result = api.run(simulated({"a": 1.0}, seed=1, iterations=1, jobs=1), out=out,
                     lab=api_lab(tmp_path))
    assert (result.runner.ok, result.runner.failed) == (1, 0)
    assert list(_values(out).values()) == [42.0]
    SCALE["factor"] = 0.5
    assert api.reparse(out).reparsed == 1
    assert list(_values(out).values()) == [21.0]


def test_a_run_whose_raw_output_no_kind_reads_is_a_failed_run_that_says_so(tmp_path):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "whatever.bin").write_bytes(b"\0\1")
    with pytest.raises(registry.RawOutputError, match="not fio JSON or text output"):
        registry.parse_run(DirFiles(run_dir))
    (run_dir / "fio.json").write_text("{\"fio version\": \"fio-3.33\", \"jobs\": [")
    with pytest.raises(registry.RawOutputError, match=r"^fio unreadable: "):
        registry.parse_run(DirFiles(run_dir))


def test_the_host_cpu_addition_reads_the_runners_sample_or_an_older_run_json():
    record = {"iops": 1000.0}
    sample = {"pct_of_one_core": 50.0, "busy_seconds": 0.5}
    for keep in ({"host_cpu.json": json.dumps(sample).encode()},
                 {"run.json": json.dumps({"workload_metadata": {"host_cpu": sample}}).encode()}):
        parsed = registry.parse_run(MemoryFiles({"null.json": json.dumps(record).encode(),
                                                 **keep}))
        assert {m.metric: m.value for m in parsed.measurements} == {
            "iops": 1000.0, "host_cpu_pct": 50.0}


def test_the_parse_stage_fails_a_run_whose_host_gave_no_result(tmp_path):
    """The workload writes fio's output and the hosts it drove; the parse kind, not the
    workload, finds that one of them returned nothing (captured: a server killed mid-run)."""
    import json

    from fslab.parsers.raw_files import DirFiles, RawOutputError
    from fslab.parsers.registry import parse_run
    from tests.conftest import FIXTURES

    run = tmp_path / "run"
    run.mkdir()
    (run / "fio.json").write_bytes((FIXTURES / "fio" / "client-one-host-lost.json").read_bytes())
    (run / "hosts.json").write_text(json.dumps(["127.0.0.1:53033", "127.0.0.1:47895"]))
    with pytest.raises(RawOutputError, match=r"host 127\.0\.0\.1:47895 dropped out"):
        parse_run(DirFiles(run))
    (run / "hosts.json").write_text(json.dumps(["127.0.0.1:53033"]))
    assert parse_run(DirFiles(run)).measurements  # the host that answered: its rows


def test_welch_without_scipy_stats_equals_scipy():
    """The steadiness test's Welch p (fio_logs._welch_p, from scipy.special) against
    scipy.stats.ttest_ind over random series."""
    import numpy as np
    from scipy import stats

    from fslab.parsers.fio_logs import _welch_p

    rng = np.random.default_rng(1)
    for _ in range(200):
        a = list(rng.normal(100, rng.uniform(1, 20), rng.integers(3, 40)))
        b = list(rng.normal(rng.uniform(80, 120), rng.uniform(1, 20), rng.integers(3, 40)))
        expected = stats.ttest_ind(a, b, equal_var=False).pvalue
        assert _welch_p(a, b) == pytest.approx(expected, rel=1e-9, abs=1e-300)


def test_stonewalled_sections_are_judged_each_on_its_own(tmp_path):
    """Two sections one after the other (randread, then seqwrite) each log from their own
    start: combined, seqwrite's bandwidth would sit on randread's; judged apart, an
    even run is steady."""
    from fslab.parsers.fio_logs import interval_rows, judge_sections
    from fslab.parsers.raw_files import DirFiles

    (tmp_path / "job.fio").write_text("[global]\nruntime=2\n[randread]\nrw=randread\n"
                                      "numjobs=2\n[seqwrite]\nrw=write\nstonewall\n")
    for job, rate in ((1, 40_000), (2, 41_000), (3, 3_500_000)):
        lines = [f"{t}, {rate + (t % 300)}, {0 if job < 3 else 1}, 0, 0"
                 for t in range(100, 2001, 100)]
        (tmp_path / f"fio-log_bw.{job}.log").write_text("\n".join(lines) + "\n")
    rows = interval_rows(DirFiles(tmp_path), by_section=True)
    assert {row.section for row in rows} == {"randread", "seqwrite"}
    assert judge_sections(rows).steady is True


def test_samples_on_the_half_interval_are_one_each():
    """fio logged one job at 250, 350, 450 ms …: each sample is its own interval, none
    summed with its neighbour (rounded half to even, 350 and 450 both went to 4: the
    first 2.6 s read twice fio's own mean). Fixture: tests/fixtures/fio/README.md."""
    from fslab.parsers.fio_logs import interval_rows

    rows = interval_rows(DirFiles(REPO / "tests" / "fixtures" / "fio" / "logs-on-the-half"))
    iops = [row for row in rows if row.metric == "iops"]
    assert len(iops) == 57 and len({row.t_s for row in iops}) == 57
    mean = sum(row.value for row in iops) / len(iops)
    assert abs(mean / 1056.3 - 1) < 0.05  # fio's own mean IOPS of the run (fio.json)
    bw = [row.value for row in rows if row.metric == "bw_bytes"]
    assert max(bw) < 1.5 * min(bw[:20])  # no doubled intervals at the start
