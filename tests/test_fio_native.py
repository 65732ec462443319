"""The native fio reader (native/, Rust) gives what the Python parser gives, file by file.

The extension takes only the plain case and leaves every other file to Python; these
tests hold its measurements equal to `parse_fio`'s (exactly, not approximately) on the
real fio outputs and on variants built to fall on either side of that line.
"""

import json
import os
import shutil

import numpy as np
import pandas as pd
import pytest

from fslab.importer import import_results
from fslab.parsers import fio_native
from fslab.parsers.fio import load_fio, parse_fio
from tests.conftest import FIXTURES

FIO = FIXTURES / "fio"
NATIVE = fio_native.extension()
pytestmark = pytest.mark.skipif(
    NATIVE is None and os.environ.get("FSLAB_NATIVE") == "0",
    reason="FSLAB_NATIVE=0: testing without the native reader")


def test_make_test_built_the_extension():
    assert NATIVE is not None, "native/ is not installed: make test builds it (install Rust)"


def native_rows(paths):
    batch = fio_native.read_fio_files(NATIVE, [str(p) for p in paths], 2)
    rows = {i: [] for i in range(len(paths))}
    for file, op, metric, value, host in zip(batch.file, batch.op, batch.metric, batch.value,
                                             batch.host, strict=True):
        rows[int(file)].append((batch.op_names[op], batch.metric_names[metric], float(value),
                                batch.host_names[host]))
    return batch, rows


def python_rows(path):
    return [(m.op, m.metric, m.value, m.host) for m in parse_fio(load_fio(path.read_bytes()))]


def fio_json(name):
    text = (FIO / name).read_text()
    return json.loads(text[text.index("{"):])


def test_real_fio_outputs_give_the_same_measurements():
    paths = sorted(p for p in FIO.iterdir() if p.suffix in (".json", ".jsonplus"))
    batch, rows = native_rows(paths)
    assert batch.parsed.all(), "every real fio output is the plain case"
    for index, path in enumerate(paths):
        assert rows[index] == python_rows(path), path.name
    hosts = {row[3] for row in rows[paths.index(FIO / "client-server-2hosts.json")]}
    assert hosts == {"127.0.0.1:8799", "127.0.0.1:8798", "All clients"}


def variants(root):
    """fio outputs the extension must parse (True) or leave to Python (False)."""
    root.mkdir(parents=True)
    made = {}

    def write(name, data, plain, before="", after=""):
        (root / name).write_text(before + json.dumps(data) + after)
        made[name] = plain

    plus = fio_json("randread-4jobs.jsonplus")
    write("warning-before.json", plus, True, "fio: some warning\n\n", "\n")
    # A brace in the text around: the first { to the last } is not JSON; Python scans.
    write("braces-around.json", plus, False, "fio: {some warning\n", "\ntrailing }\n")
    one = fio_json("seqwrite-1job.json")
    lone = json.loads(json.dumps(plus))
    del lone["jobs"][1:]
    write("one-job-with-bins.json", lone, True)
    listed = json.loads(json.dumps(plus))
    for job in listed["jobs"]:
        job["read"]["clat_ns"].pop("bins")
    write("four-jobs-no-bins.json", listed, True)  # no percentiles: not invented
    partial = json.loads(json.dumps(one))
    percentiles = partial["jobs"][0]["write"]["clat_ns"]["percentile"]
    percentiles.pop("99.900000")
    write("partial-percentiles.json", partial, True)
    mixed = json.loads(json.dumps(plus))
    mixed["jobs"][2]["read"]["clat_ns"].pop("bins")  # bins on some jobs only
    write("bins-on-some-jobs.json", mixed, True)
    nulled = json.loads(json.dumps(one))
    nulled["jobs"][0]["write"]["iops"] = None
    write("null-iops.json", nulled, False)
    text_number = json.loads(json.dumps(one))
    text_number["jobs"][0]["write"]["bw_bytes"] = "123456"
    write("bw-as-text.json", text_number, False)
    old = json.loads(json.dumps(one))
    stats = old["jobs"][0]["write"]
    for kind in ("clat", "lat", "slat"):
        block = stats.pop(f"{kind}_ns")
        stats[kind] = {k: v / 1000 for k, v in block.items() if k in ("min", "max", "mean")}
        stats[kind]["N"] = block["N"]
    write("old-fio-microseconds.json", old, False)
    write("no-jobs.json", {"fio version": "fio-3.33", "jobs": []}, False)
    spaced = json.loads(json.dumps(one))
    block = spaced["jobs"][0]["write"]["clat_ns"]
    block["percentile"] = {f" {k}": v for k, v in block["percentile"].items()}
    write("spaced-percentile-keys.json", spaced, False)
    (root / "truncated.json").write_text(json.dumps(one)[:-40])
    made["truncated.json"] = False
    return made


def test_variants_fall_on_the_expected_side_and_agree_with_python(tmp_path):
    made = variants(tmp_path / "v")
    paths = [tmp_path / "v" / name for name in made]
    batch, rows = native_rows(paths)
    assert {name: bool(p) for name, p in zip(made, batch.parsed, strict=True)} == made
    for index, path in enumerate(paths):
        if batch.parsed[index]:
            assert rows[index] == python_rows(path), path.name


def test_import_is_the_same_with_and_without_the_extension(tmp_path, monkeypatch):
    tree = tmp_path / "tree"
    variants(tree / "ext4" / "1")
    for kind in ("fio", "dd", "bonnie"):
        shutil.copytree(FIXTURES / kind, tree / "xfs" / "2" / kind)
    (tree / "xfs" / "2" / "client.json").write_text(
        (FIO / "client-server-2hosts.json").read_text())
    imported = {}
    for mode in ("1", "0"):
        monkeypatch.setenv("FSLAB_NATIVE", mode)
        out = tmp_path / f"mode{mode}" / "campaign"
        out.parent.mkdir()
        report = import_results([tree], out)
        metrics = pd.read_parquet(out / "metrics.parquet")
        metrics = metrics.sort_values(list(metrics.columns)).reset_index(drop=True)
        runs = pd.read_csv(out / "runs.csv").sort_values("run_id").reset_index(drop=True)
        imported[mode] = (metrics, runs, sorted(report.skipped), report.imported)
    native, python = imported["1"], imported["0"]
    pd.testing.assert_frame_equal(native[0], python[0])
    pd.testing.assert_frame_equal(native[1], python[1])
    assert native[2:] == python[2:]
    assert {"null-iops.json", "truncated.json", "no-jobs.json"} <= {
        name.rsplit("/", 1)[-1] for name, _ in native[2]}
    assert np.isin(["dd", "bonnie"], native[1]["kind"]).all()
