"""`fslab export DIR --format csv|json [--out FILE|DIR] [--table metrics|verdicts]`: one
tidy table for a spreadsheet or another tool (issue 61), checked on a simulated campaign
against the metrics table and pairwise.csv it comes from."""

import io
import json

import pandas as pd
import pytest

from fslab import api
from fslab.core.metrics import METRIC_UNITS
from fslab.host.lab import Lab
from fslab.plan.loading import resolve
from fslab.plan.schema import CampaignFile, Overrides
from tests.conftest import fslab_here


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("export")
    parsed = CampaignFile.model_validate({
        "name": "sim", "iterations": 3, "seed": 5,
        "target": [{"name": "a", "fs": "null", "scale": 1.0},
                   {"name": "b", "fs": "null", "scale": 1.3}],
        "workload": [{"preset": "null", "options": {"jobs": 2, "iops": 1000}}]})
    out = tmp / "r"
    api.run(resolve(parsed, Overrides(), tmp), out=out, lab=Lab(tmp / "lab"))
    return out


def test_csv_has_one_row_per_run_op_and_metric_with_units(results):
    done = fslab_here("export", str(results), "--format", "csv")
    assert done.returncode == 0, done.stderr
    table = pd.read_csv(io.StringIO(done.stdout))
    assert list(table.columns[:13]) == ["campaign", "run_id", "iteration", "target", "fs",
                                        "fs_impl", "workload", "op", "metric", "value",
                                        "unit", "better", "section"]
    assert not table.duplicated(["run_id", "op", "metric", "section"]).any()
    metrics = api.load(results)
    runs = metrics.groupby(["run_id", "op", "metric"]).ngroups
    assert len(table) == runs  # every value of every run, each once
    iops = table[table.metric == "iops"]
    assert set(iops.unit) == {"1/s"} and set(iops.better) == {"higher"}
    for metric, unit, better in table[["metric", "unit", "better"]].drop_duplicates().values:
        assert (unit, better) == METRIC_UNITS[metric]  # SI units, fslab's one table of them
    # a run's value is its observation: the mean of its samples, as the analysis takes it
    one = iops.iloc[0]
    raw = metrics[(metrics.run_id == one.run_id) & (metrics.op == one.op)
                  & (metrics.metric == "iops")]["value"]
    assert one.value == pytest.approx(raw.mean())
    assert set(table.campaign) == {"sim"} and set(table.target) == {"a", "b"}


def test_json_is_the_same_rows_as_records(results):
    csv = pd.read_csv(io.StringIO(fslab_here("export", str(results)).stdout))
    done = fslab_here("export", str(results), "--format", "json")
    records = json.loads(done.stdout)
    assert isinstance(records, list) and len(records) == len(csv)
    assert set(records[0]) == set(csv.columns)
    first = csv.iloc[0]
    assert records[0]["run_id"] == first.run_id
    assert records[0]["value"] == pytest.approx(first.value, rel=1e-12)


def test_verdicts_are_the_pairs_with_ratio_interval_and_decision(results):
    table = api.export_table(results, "verdicts")
    pairs = pd.read_csv(results / "stats" / "pairwise.csv")
    assert len(table) == len(pairs)
    primary = table[table.primary.astype(bool)]
    assert not primary.empty and primary.index[0] == 0  # the primary questions first
    row = primary.iloc[0]
    assert row.ratio_ci_low <= row.ratio <= row.ratio_ci_high
    assert row.decision in ("faster", "slower", "equivalent", "unresolved")


def test_a_directory_gets_both_tables_and_a_file_the_one_asked(results, tmp_path):
    folder = tmp_path / "out"
    folder.mkdir()
    done = fslab_here("export", str(results), "--format", "json", "--out", str(folder))
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in folder.iterdir()) == ["metrics.json", "verdicts.json"]
    one = tmp_path / "v.csv"
    fslab_here("export", str(results), "--table", "verdicts", "--out", str(one))
    assert pd.read_csv(one).columns[1] == "workload"


@pytest.mark.parametrize(("args", "said"), [
    (["--format", "xml"], "unknown format 'xml'"),
    (["--table", "pairs"], "unknown table 'pairs'"),
])
def test_a_wrong_format_or_table_is_one_line(results, args, said):
    done = fslab_here("export", str(results), *args)
    assert done.returncode == 2 and said in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
