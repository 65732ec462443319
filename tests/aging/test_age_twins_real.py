"""The fresh twin inside the age sweep, on real ext4 and xfs (small images, short agings,
1 s runs): every cell runs, each aged file system's twin holds the same tree (the scan
reads as many files and bytes on both), both file systems end their aging at the same
fill of the space root can write and begin their runs at the same fill, the large-file
pair reads and rewrites with O_DIRECT with the layout beside, and the answer says what
its fresh side was; a campaign whose only workload is cache-bound says so on every line
that answers."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from fslab import api
from fslab.analysis.factors.aging_answers import CACHE_BOUND, HEADING
from fslab.plan.loading import resolve
from fslab.plan.schema import CampaignFile, Overrides
from tests.conftest import requires

# thesis-99 at a few operations: the filling takes it to 99 % of what root can write.
SHORT_99 = {"thesis-99": {"ops_per_gib": 8_000, "probes": 3}}


def campaign(tmp_path, workloads, iterations=2, **extra):
    parsed = CampaignFile.model_validate({
        "name": "twins-real", "iterations": iterations, "runtime": 1, "seed": 11,
        "image_size": "320M", "file_size": "4M", "ceiling": False,
        "sweep": {"age": ["fresh", "thesis-99"]}, "age_levels": SHORT_99,
        "target": [{"fs": "ext4"}, {"fs": "xfs"}], "workload": workloads, **extra})
    return resolve(parsed, Overrides(), tmp_path)


def records_of(out) -> dict[str, dict]:
    return {p.parent.name: json.loads(p.read_text()) for p in (out / "runs").glob("*/run.json")}


def scanned(out, run_id: str) -> dict:
    return json.loads((out / "runs" / run_id / "scan.json").read_text())


@pytest.mark.privileged
def test_twins_equal_fullness_and_the_large_file_pair(tmp_path, lab):
    requires("fio", "mkfs.ext4", "mkfs.xfs", "losetup", "e2freefrag", "xfs_spaceman",
             "chromium")
    out = tmp_path / "out"
    result = api.run(campaign(tmp_path, [
        {"preset": "scan"},
        {"preset": "agedfiles", "only": ["aged_largeread"], "options": {"min_size": "256K"}},
        {"preset": "direct5", "only": ["randread"]}]), out=out, lab=lab)
    # per file system and iteration: fresh randread; aged scan, largeread, randread; twin
    # scan, largeread — none unsupported
    assert (result.runner.ok, result.runner.failed) == (24, 0)
    records = records_of(out)
    for iteration in (1, 2):
        fills = {}
        for fs in ("ext4", "xfs"):
            aged = scanned(out, f"i00{iteration}-{fs}_age-thesis-99-scan")
            twin = scanned(out, f"i00{iteration}-{fs}_age-twin-thesis-99-scan")
            assert (aged["files"], aged["bytes"]) == (twin["files"], twin["bytes"])
            assert aged["files"] > 100
            described = records[f"i00{iteration}-{fs}_age-twin-thesis-99-scan"][
                "target_description"]["aging"]
            assert described["twin_of"] == f"{fs} age=thesis-99"
            aging = records[f"i00{iteration}-{fs}_age-thesis-99-randread"][
                "target_description"]["aging"]
            assert aging["used_end"] == pytest.approx(0.99, abs=0.005)  # equal fullness
            fills[fs] = records[f"i00{iteration}-{fs}_age-thesis-99-randread"][
                "workload_metadata"]["around_run"]["fill"]
        # room for randread's 4 × 4 MiB and a tenth more: 6–7 % of what root can write
        assert abs(fills["ext4"] - fills["xfs"]) <= 0.02 and min(fills.values()) > 0.9
        assert records[f"i00{iteration}-ext4_age-fresh-randread"]["workload_metadata"][
            "around_run"]["fill"] < 0.01  # of what root could write fresh: xfs's too
        assert records[f"i00{iteration}-xfs_age-fresh-randread"]["workload_metadata"][
            "around_run"]["fill"] < 0.01
    metrics = pd.read_parquet(out / "metrics.parquet")
    large = metrics[metrics["workload"] == "aged_largeread"]
    assert set(large["metric"]) >= {"bw_bytes", "file_layout_score", "extents_per_file"}
    extents = large[large["metric"] == "extents_per_file"].groupby("target")["value"].mean()
    assert extents["ext4 age=twin-thesis-99"] >= 1 and extents["ext4 age=thesis-99"] >= 1
    table = pd.read_csv(out / "stats" / "aging_ranking.csv").set_index("workload")
    assert table.loc["scan", "reference"] == "twin-thesis-99"
    assert table.loc["randread", "reference"] == "fresh"
    assert not table["cache_bound"].any()
    assert abs(table.loc["randread", "fill_a"] - table.loc["randread", "fill_b"]) <= 2
    lines = (out / "stats" / "verdicts.txt").read_text().splitlines()
    assert lines[0] == HEADING
    assert any(line.startswith("  scan bandwidth, ext4 vs xfs at thesis-99 (against its "
                               "fresh twin): ") for line in lines[:8])
    latency = pd.read_csv(out / "stats" / "aging_latency.csv")  # ext4 against xfs, per op
    assert set(latency["comparison"]) == {"file system"} and set(latency["n"]) == {2}
    assert set(latency["decision"]) <= {"faster", "slower", "equivalent", "unresolved"}
    from tests.ingest.test_import_report import chromium

    page = api.report(out)
    html = page.read_text()
    assert "latency during aging: ext4 against xfs" in html and "twin-thesis-99" in html
    assert 'data-js-errors="0"' in chromium(page, tmp_path)


@pytest.mark.privileged
def test_a_cache_bound_campaign_never_answers_without_saying_so(tmp_path, lab):
    """The thesis's own job (buffered, 31 MiB: the page cache holds it) is the only
    workload: no line says the ranking holds or changes without 'cache-bound'."""
    requires("fio", "mkfs.ext4", "mkfs.xfs", "losetup")
    out = tmp_path / "out"
    api.run(campaign(tmp_path, [{"preset": "aged", "only": ["aged"]}]), out=out, lab=lab)
    table = pd.read_csv(out / "stats" / "aging_ranking.csv")
    assert table["cache_bound"].all()
    assert all(word.startswith(f"{CACHE_BOUND}: ") for word in table["decision"])
    for line in (out / "stats" / "verdicts.txt").read_text().splitlines():
        if "the ranking holds" in line or "the ranking changes" in line:
            assert CACHE_BOUND in line, line
