"""scripts/result-structure, the check that a refactoring left the files users read as
they were: two runs of one campaign differ in every value and in nothing it prints; a
column, a key or a file that came or went is named."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from tests.conftest import load_script


def script():
    return load_script("result-structure")


def campaign(root: Path, iops: float, busy: list[str], extra_key: bool = False) -> Path:
    """A results directory in miniature: a run's record, a table, a stats CSV."""
    run = root / "runs" / "i001-ext4-randread"
    run.mkdir(parents=True)
    record = {"iops": iops, "witness": {"reasons": busy}, "bins": {str(int(iops)): 1}}
    if extra_key:
        record["new"] = 1
    (run / "run.json").write_text(json.dumps(record))
    (root / "stats").mkdir()
    pd.DataFrame({"a": ["ext4"], "ratio": [iops / 100]}).to_csv(root / "stats" / "x.csv",
                                                                 index=False)
    pd.DataFrame({"value": [iops]}).to_parquet(root / "metrics.parquet")
    return root


def test_other_values_are_the_same_structure_and_a_new_key_is_named(tmp_path):
    differences = script().differences
    old = campaign(tmp_path / "old", 101.5, ["a cpu hog"])
    same = campaign(tmp_path / "same", 99.0, [])  # other values, an empty list, other bins
    assert differences(old, same) == []
    grown = campaign(tmp_path / "grown", 99.0, [], extra_key=True)
    (lines,) = differences(old, grown)
    assert lines.startswith("runs/*/run.json: only before [], only after ['.new: number']")
    pd.DataFrame({"a": ["ext4"], "ratio": [1.0], "n": [3]}).to_csv(
        grown / "stats" / "x.csv", index=False)
    (grown / "stats" / "y.csv").write_text("b\n")
    found = differences(old, grown)
    assert f"only in {grown}: stats/y.csv" in found
    assert any(line.startswith("stats/x.csv: only before ['a,ratio']") for line in found)
