"""Import of results made elsewhere, the HTML report (in headless Chromium), and compare."""

import json
import os
import re
import shutil
import subprocess

import pandas as pd
import pytest

from fslab import api
from fslab.core.errors import UserError
from fslab.ingest.importer import import_results
from fslab.ingest.paths import compile_pattern, guess_fields
from fslab.parsers.dd import parse_dd
from fslab.parsers.fio import ALL_CLIENTS, parse_fio
from fslab.parsers.fio_load import extract_json
from fslab.plan.loading import load_campaign
from fslab.plan.schema import Overrides
from tests.conftest import FIXTURES, fslab_here, requires

FIO = FIXTURES / "fio"


def fio_tree(root, layout):
    """Copies of real fio outputs in a directory layout, 2 fs × 3 iterations × 2 jobs."""
    for fs in ("ext4", "xfs"):
        for iteration in (1, 2, 3):
            for workload, fixture in (("randread", "randread-4jobs.jsonplus"),
                                      ("seqwrite", "seqwrite-1job.json")):
                path = root / layout.format(fs=fs, iteration=iteration, workload=workload)
                path.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(FIO / fixture, path)


@pytest.mark.parametrize(("layout", "pattern"), [
    ("{fs}/fio_results/{iteration}/{workload}-result.json",
     "{fs}/fio_results/{iteration}/{workload}-result.json"),
    ("{fs}/fio_results/{iteration}/{workload}-result.json", None),
    ("results-{fs}/run{iteration}/{workload}.json", None),
    ("bench_{iteration}_{fs}_{workload}.json", "bench_{iteration}_{fs}_{workload}.json"),
])
def test_import_fio_trees_in_several_layouts(tmp_path, layout, pattern):
    fio_tree(tmp_path / "tree", layout)
    (tmp_path / "tree" / "README.txt").write_text("notes, not results")
    report = import_results([tmp_path / "tree"], tmp_path / "out", pattern)
    assert report.imported == 12
    assert [name for name, _ in report.skipped] == ["README.txt"]
    metrics = api.load(tmp_path / "out")
    assert set(metrics["fs"]) == {"ext4", "xfs"}
    assert set(metrics["workload"]) == {"randread", "seqwrite"}
    assert set(metrics["iteration"]) == {1, 2, 3}
    native = {(m.op, m.metric): m.value for m in
              parse_fio(extract_json((FIO / "randread-4jobs.jsonplus").read_text()))}
    imported = metrics[(metrics.fs == "ext4") & (metrics.workload == "randread")
                       & (metrics.metric == "iops") & (metrics.iteration == 1)]
    assert imported["value"].iloc[0] == native[("read", "iops")]  # jobs aggregated as native
    summary = api.analyze(tmp_path / "out")
    assert (tmp_path / "out" / "stats" / "verdicts.txt").exists()
    assert summary[summary.metric == "iops"]["n"].min() == 3


def test_an_import_keeps_each_file_as_a_run_and_reparses_from_its_copies(tmp_path,
                                                                         monkeypatch):
    import fslab.ingest.importer
    from fslab.ingest.importer import copy_name
    from fslab.results.stats_files import load_analysis
    from fslab.results.store import ResultsDir

    fio_tree(tmp_path / "tree", "{fs}/{iteration}/{workload}.json")
    shutil.copy(FIXTURES / "dd" / "real-dd.log", tmp_path / "tree" / "ext4" / "dd-1.log")
    import_results([tmp_path / "tree"], tmp_path / "out")
    results = ResultsDir.open(tmp_path / "out")
    records = {r.run_id: r for r in results.run_records()}
    assert len(records) == 13 and not (tmp_path / "out" / "runs.csv").exists()
    record = records["xfs/2/randread.json"]
    assert (record.fs, record.iteration, record.workload, record.kind) == (
        "xfs", 2, "randread", "fio")
    copy = results.raw_output(record, copy_name(record.source))
    assert copy == (FIO / "randread-4jobs.jsonplus").read_bytes()
    before = api.load(tmp_path / "out").sort_values(["run_id", "op", "metric", "sample"])
    assert len(api.runs(tmp_path / "out")) == 13
    api.analyze(tmp_path / "out")
    # A changed fio parser (here: one that reads only the first job) reaches the imported
    # rows through `fslab reparse`, from the copies, without the original files.
    import fslab.parsers.fio_kinds

    real_parse_fio = fslab.parsers.fio_kinds.parse_fio
    monkeypatch.setattr(fslab.parsers.fio_kinds, "parse_fio",
                        lambda data: real_parse_fio({**data, "jobs": data["jobs"][:1]}))
    shutil.rmtree(tmp_path / "tree")
    found = api.reparse(tmp_path / "out")
    assert (found.reparsed, found.kept) == (13, [])
    after = api.load(tmp_path / "out").sort_values(["run_id", "op", "metric", "sample"])
    dd = after[after.workload == "dd"].reset_index(drop=True)
    assert dd.equals(before[before.workload == "dd"].reset_index(drop=True))
    iops = after[(after.run_id == record.run_id) & (after.metric == "iops")
                 & (after.op == "read")]["value"].iloc[0]
    one_job = extract_json(copy)["jobs"][0]["read"]["iops"]
    assert iops == pytest.approx(one_job)  # one job's IOPS now, not four jobs' sum
    assert load_analysis(results) is not None  # stats/ analysed again from the new rows
    # The rows of an import are in metrics.parquet alone: a damaged one comes back by
    # reparsing the copies, and the error says so.
    (tmp_path / "out" / "metrics.parquet").write_bytes(b"PAR1 garbage")
    with pytest.raises(UserError, match="fslab reparse"):
        api.load(tmp_path / "out")
    api.reparse(tmp_path / "out")
    assert api.load(tmp_path / "out").sort_values(
        ["run_id", "op", "metric", "sample"]).reset_index(drop=True).equals(
        after.reset_index(drop=True))
    # A copy that no longer parses keeps the rows it had, and is named.
    import fslab.ingest.reparse

    real_parse_run = fslab.ingest.reparse.parse_run

    def failing(files):
        if files.record.run_id == record.run_id:
            raise ValueError("damaged copy")
        return real_parse_run(files)

    monkeypatch.setattr(fslab.ingest.reparse, "parse_run", failing)
    found = api.reparse(tmp_path / "out")
    assert found.kept == [(record.run_id, "raw output unreadable: damaged copy")]
    assert api.load(tmp_path / "out").sort_values(
        ["run_id", "op", "metric", "sample"]).reset_index(drop=True).equals(
        after.reset_index(drop=True))


def test_an_import_of_format_2_without_copies_is_refused_by_reparse_in_one_line(tmp_path):
    fio_tree(tmp_path / "tree", "{fs}/{iteration}/{workload}.json")
    import_results([tmp_path / "tree"], tmp_path / "out")
    for archive in (tmp_path / "out" / "runs").iterdir():  # as format 2 left it
        archive.unlink()
    (tmp_path / "out" / "runs.csv").write_text("run_id,iteration,target,fs,workload,"
                                               "status,reason\n")
    (tmp_path / "out" / "format.json").write_text('{"format": 2}')
    with pytest.raises(UserError, match="imported without copies"):
        api.reparse(tmp_path / "out")


def test_the_same_path_under_two_import_roots_is_refused(tmp_path):
    for root in ("a", "b"):
        fio_tree(tmp_path / root, "{fs}/{iteration}/{workload}.json")
    with pytest.raises(UserError, match="common parent"):
        import_results([tmp_path / "a", tmp_path / "b"], tmp_path / "out")


def test_pattern_and_guesses():
    match = compile_pattern("{fs}/x/{iteration}/{workload}-result.json").match(
        "btrfs/x/7/randwrite-result.json")
    assert match.groupdict() == {"fs": "btrfs", "iteration": "7", "workload": "randwrite"}
    guess = guess_fields("zfs-lz4/iter_3/seqread.json")
    assert guess["fs"] == "zfs" and guess["iteration"] == "3" and guess["workload"] == "seqread"


def test_client_server_output_gives_per_host_rows_and_the_aggregate():
    data = extract_json((FIO / "client-server-2hosts.json").read_text())
    values = parse_fio(data)
    iops = {m.host: m.value for m in values if m.op == "read" and m.metric == "iops"}
    assert set(iops) == {"127.0.0.1:8799", "127.0.0.1:8798", ALL_CLIENTS}
    assert iops[ALL_CLIENTS] == pytest.approx(iops["127.0.0.1:8799"] + iops["127.0.0.1:8798"])
    fio_own = next(j for j in data["client_stats"] if j["jobname"] == ALL_CLIENTS)
    assert iops[ALL_CLIENTS] == pytest.approx(fio_own["read"]["iops"], rel=0.01)


def test_import_tolerates_error_lines_and_old_units(tmp_path):
    tree = tmp_path / "t" / "ext4"
    tree.mkdir(parents=True)
    shutil.copy(FIO / "enospc-error-line.json", tree / "fill-1.json")
    shutil.copy(FIO / "client-server-2hosts.json", tree / "cs-1.json")
    (tree / "broken-1.json").write_text('{"fio version": "fio-3.33", "jobs": [')
    report = import_results([tmp_path / "t"], tmp_path / "out")
    assert report.imported == 2
    assert [n for n, _ in report.skipped] == ["ext4/broken-1.json"]
    summary = api.analyze(tmp_path / "out")
    cs = summary[(summary.workload == "randread") & (summary.metric == "iops")]
    assert cs["n"].tolist() == [1]  # the aggregate is the observation, not each host


def test_dd_logs_in_any_unit():
    samples = [m for m in parse_dd((FIXTURES / "dd" / "mixed-units.log").read_text())
               if m.metric == "bw_bytes"]
    assert len(samples) == 4
    assert samples[0].value == pytest.approx(67108864 / 0.269399)  # printed: 249 MB/s
    assert samples[0].value == pytest.approx(249e6, rel=0.01)
    assert samples[1].value == pytest.approx(1.6e9, rel=0.05)  # printed in GB/s


def test_import_dd_and_bonnie(tmp_path):
    tree = tmp_path / "t"
    (tree / "ext4").mkdir(parents=True)
    shutil.copy(FIXTURES / "dd" / "real-dd.log", tree / "ext4" / "dd-1.log")
    shutil.copy(FIXTURES / "bonnie" / "tmpfs-256M.csv", tree / "ext4" / "bonnie-1.csv")
    report = import_results([tree], tmp_path / "out")
    assert report.imported == 2
    metrics = api.load(tmp_path / "out")
    assert len(metrics[(metrics.metric == "bw_bytes") & (metrics.workload == "dd")]) == 4
    assert metrics[metrics.workload == "bonnie"]["note"].str.contains("too fast").any()


def test_import_errors_are_one_line(tmp_path):
    proc = fslab_here("import", str(tmp_path / "nothing"), "--out", str(tmp_path / "o"))
    assert proc.returncode == 2 and "no such file" in proc.stderr
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "a.json").write_text("{}")
    proc = fslab_here("import", str(tmp_path / "x"), "--out", str(tmp_path / "o2"),
                     "--pattern", "{fs}/{bogus}.json")
    assert proc.returncode == 2 and "unknown field {bogus}" in proc.stderr


def chromium(page, tmp_path):
    out = subprocess.run(
        ["chromium", "--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic",
         "--no-first-run", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", f"--user-data-dir={tmp_path / 'chromium'}",
         "--virtual-time-budget=20000", "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=120)
    return out.stdout


@pytest.mark.privileged
def test_report_renders_in_chromium_and_escapes_data(tmp_path):
    requires("chromium", root=False)
    tree = tmp_path / "tree"
    fio_tree(tree, "{fs}/{iteration}/{workload}.json")
    evil = "<script>alert(1)</script>"
    for path in tree.rglob("randread.json"):
        data = json.loads(path.read_text())
        for job in data["jobs"]:
            job["jobname"] = evil
        path.write_text(json.dumps(data))
    import_results([tree], tmp_path / "out")
    page = api.report(tmp_path / "out")
    html = page.read_text()
    assert evil not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    dom = chromium(page, tmp_path)
    rendered = int(re.search(r'data-charts-rendered="(\d+)"', dom).group(1))
    errors = int(re.search(r'data-js-errors="(\d+)"', dom).group(1))
    assert errors == 0
    assert rendered == html.count('data-chart="') and rendered >= 8
    assert dom.count('class="main-svg"') >= rendered  # Plotly drew every chart
    assert evil not in dom  # the page's text shows it; nothing ever parsed it as markup


def test_compare_cli_exit_codes(tmp_path):
    fio_tree(tmp_path / "tree", "{fs}/{iteration}/{workload}.json")
    import_results([tmp_path / "tree"], tmp_path / "base")
    same = fslab_here("compare", str(tmp_path / "base"), str(tmp_path / "base"))
    assert same.returncode == 0, same.stderr
    assert "0 regressed" in same.stdout
    import pandas as pd

    worse = tmp_path / "worse"
    shutil.copytree(tmp_path / "base", worse)
    metrics = pd.read_parquet(worse / "metrics.parquet")
    for i, iteration in enumerate((1, 2, 3)):  # a 20 % IOPS regression, with some spread
        rows = (metrics.metric == "iops") & (metrics.iteration == iteration)
        metrics.loc[rows, "value"] *= 0.8 * (1 + 0.01 * (i - 1))
    metrics.to_parquet(worse / "metrics.parquet", index=False)
    base_metrics = pd.read_parquet(tmp_path / "base" / "metrics.parquet")
    for i, iteration in enumerate((1, 2, 3)):
        rows = (base_metrics.metric == "iops") & (base_metrics.iteration == iteration)
        base_metrics.loc[rows, "value"] *= 1 + 0.01 * (i - 1)
    base_metrics.to_parquet(tmp_path / "base" / "metrics.parquet", index=False)
    regressed = fslab_here("compare", str(tmp_path / "base"), str(worse), "-o",
                          str(tmp_path / "cmp.html"), "--within-sitting")
    assert regressed.returncode == 1, regressed.stdout + regressed.stderr
    assert "regressed" in regressed.stdout and "shift is not counted" in regressed.stdout
    assert (tmp_path / "cmp.html").stat().st_size > 100_000
    # two sittings with no history: the stated prior (±5 % on 2 df) is counted, and at
    # four questions' level a 20 % drop is within what it allows (issue 58)
    judged = fslab_here("compare", str(tmp_path / "base"), str(worse))
    assert judged.returncode == 0, judged.stdout + judged.stderr
    assert "the stated prior" in judged.stdout and "0 regressed" in judged.stdout


@pytest.mark.privileged
def test_until_ci_adds_iterations(tmp_path, lab):
    """The stages of --until-ci, on the simulator: the stages are the runner's, whatever
    the workload measures."""
    def campaign():
        return load_campaign(None, Overrides(fs=["null"], preset="null", iterations=2, seed=3))

    result = api.run(campaign(), out=tmp_path / "r", lab=lab,
                     options=api.RunOptions(until_ci=0.001, max_iterations=4))
    runs = api.runs(tmp_path / "r")
    workload = str(runs["workload"].iloc[0])
    assert len(runs) == 4  # 0.001 % is out of reach: a second stage to the cap
    assert result.unconverged and workload in result.unconverged[0]
    assert "pilot = 2" in (tmp_path / "r" / "campaign.toml").read_text()
    assert set(pd.read_csv(tmp_path / "r" / "stats" / "summary.csv")["n"]) == {2}
    loose = api.run(campaign(), out=tmp_path / "r2", lab=lab,
                    options=api.RunOptions(until_ci=1e6, max_iterations=5))
    # a goal the pilot already meets still gets its second stage (the smallest): stopping
    # on the pilot's lucky spread is what inflated false positives
    assert loose.unconverged == [] and len(api.runs(tmp_path / "r2")) == 2 + 3


def test_paths_name_every_target_kind_without_loading_the_plug_ins():
    import subprocess
    import sys

    from fslab.targets import known_kinds

    for kind in known_kinds():
        assert guess_fields(f"results/{kind}/3/randread.json")["fs"] == kind
    probe = ("import sys, fslab.ingest.importer; print(sorted(m for m in sys.modules "
             "if m.startswith('fslab.targets.')))")
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                            check=True).stdout.strip()
    assert loaded == "['fslab.targets.base', 'fslab.targets.profiles']"  # data, no plug-in


def test_import_command_analyses_unless_told_not_to(tmp_path):
    fio_tree(tmp_path / "tree", "{fs}/{iteration}/{workload}.json")
    done = fslab_here("import", str(tmp_path / "tree"), "--out", str(tmp_path / "a"))
    assert done.returncode == 0, done.stderr
    said = " ".join(done.stdout.split())  # the console wraps a long path
    assert "Imported 12 files" in said and "fslab report" in said
    for name in ("summary.csv", "tests.csv", "pairwise.csv", "headline.csv", "ranking.csv",
                 "verdicts.txt"):
        assert (tmp_path / "a" / "stats" / name).stat().st_size > 0
    # The import analysed its rows in memory while it archived the copies: the same
    # tables a later `fslab analyze` writes from metrics.parquet, and current (a report
    # reads them back).
    written = {p.name: p.read_bytes() for p in (tmp_path / "a" / "stats").glob("*.csv")}
    from fslab.results.stats_files import stale_reason
    from fslab.results.store import ResultsDir

    assert stale_reason(ResultsDir.open(tmp_path / "a")) is None
    api.analyze(tmp_path / "a")
    assert written == {p.name: p.read_bytes() for p in (tmp_path / "a" / "stats").glob("*.csv")}
    bare = fslab_here("import", str(tmp_path / "tree"), "--out", str(tmp_path / "b"),
                     "--no-analyze")
    assert bare.returncode == 0, bare.stderr
    assert not (tmp_path / "b" / "stats").exists() and "fslab analyze" in bare.stdout


def test_bad_files_never_cost_the_good_ones(tmp_path):
    """Issue 15: a tree of good fio files and bad ones (junk, truncated, empty, binary, a
    wrong-typed section, NaN, a script tag): every good file imported, every bad one
    listed with its reason (a table, import_errors.csv), a distinct exit code."""
    import csv

    fio_tree(tmp_path / "tree", "{fs}/{iteration}/{workload}.json")
    good = (FIO / "seqwrite-1job.json").read_text()
    data = json.loads(good[good.index("{"):])
    bad = tmp_path / "tree" / "ext4" / "bad"
    bad.mkdir()
    wrong = json.loads(json.dumps(data))
    wrong["jobs"][0]["read"] = "n/a"
    nan = good.replace('"iops" : 0.000000', '"iops" : NaN', 1)
    files = {"truncated.json": good[: len(good) // 2], "empty.json": "",
             "binary.json": "\x00\x01\x02{\x03", "wrong-type.json": json.dumps(wrong),
             "no-jobs.json": json.dumps({"fio version": "fio-3.33", "jobs": []}),
             "nan.json": nan}
    for name, text in files.items():
        (bad / name).write_text(text)
    script = json.loads(json.dumps(data))
    script["jobs"][0]["jobname"] = "<script>alert(1)</script>"
    (tmp_path / "tree" / "xfs" / "1" / "script.json").write_text(json.dumps(script))
    done = fslab_here("import", str(tmp_path / "tree"), "--out", str(tmp_path / "o"),
                     "--no-analyze")
    assert done.returncode == 4, done.stderr
    assert "Traceback" not in done.stderr and "Skipped files" in done.stderr
    listed = {row["file"]: row["reason"] for row in
              csv.DictReader((tmp_path / "o" / "import_errors.csv").open())}
    assert {f"ext4/bad/{n}" for n in ("truncated.json", "empty.json", "binary.json",
                                      "wrong-type.json", "no-jobs.json")} <= set(listed)
    assert all(reason for reason in listed.values())
    metrics = api.load(tmp_path / "o")
    assert len(set(metrics["run_id"])) >= 13  # the 12 good files and the script-named one


def test_report_renders_from_stats_without_analysing_again(tmp_path):
    """Issue 16: report is a stage reading stats/, not a second analysis: a fresh process
    renders the report without once calling the analysis (nor loading statsmodels)."""
    import subprocess
    import sys

    fio_tree(tmp_path / "tree", "{fs}/{iteration}/{workload}.json")
    import_results([tmp_path / "tree"], tmp_path / "out")
    api.analyze(tmp_path / "out")
    probe = ("import sys; from fslab import api; import fslab.api.results as r; calls = []; "
             "real = r.analyze_results; r.analyze_results = lambda d: calls.append(d) or real(d); "
             "api.report(sys.argv[1]); print(len(calls), "
             "sorted(m for m in sys.modules if m.startswith('statsmodels')))")
    found = subprocess.run([sys.executable, "-c", probe, str(tmp_path / "out")],
                           capture_output=True, text=True, check=True).stdout.strip()
    assert found == "0 []", found
    page = (tmp_path / "out" / "report.html").read_text()
    assert "Verdicts" in page and "randread" in page
    # metrics changed after the analysis: stats/ is stale, the report analyses again
    metrics = tmp_path / "out" / "metrics.parquet"
    metrics.write_bytes(metrics.read_bytes())
    os.utime(metrics, ns=(1, 1))
    found = subprocess.run([sys.executable, "-c", probe, str(tmp_path / "out")],
                           capture_output=True, text=True, check=True).stdout.strip()
    assert found.startswith("1 "), found
