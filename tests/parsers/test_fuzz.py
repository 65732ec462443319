"""Every reader, fuzzed (issue 15): given anything, it returns measurements or raises
fslab's one user-facing error (UserError) with a reason — never another exception.

Two kinds of input: structure-aware mutations of outputs captured from the real tools
(wrong types, missing keys, huge and negative numbers, NaN/Infinity, unicode, nesting)
and raw bytes. Seeded and database-less (the `fslab` profile below), so CI runs the same
thousands of cases every time, in about a minute.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fslab.core.errors import UserError
from fslab.core.metrics import Measurement
from fslab.ingest.importer import read_one
from fslab.parsers.bonnie import parse_bonnie
from fslab.parsers.dd import parse_dd
from fslab.parsers.fio import parse_fio
from fslab.parsers.fio_load import load_fio
from tests.conftest import FIXTURES

# make test runs a fifth of the examples, make check a tenth (FSLAB_FUZZ=loop: the edit-test
# loop's budget, tests/test_durations.py), FSLAB_FUZZ=full (benchmarks/fuzz) all of them.
FUZZ = os.environ.get("FSLAB_FUZZ", "")


def examples(full: int) -> int:
    return full if FUZZ == "full" else max(20, full // (10 if FUZZ == "loop" else 5))


settings.register_profile("fslab", derandomize=True, database=None, deadline=None,
                          max_examples=examples(1500),
                          suppress_health_check=[HealthCheck.too_slow,
                                                 HealthCheck.function_scoped_fixture])
settings.load_profile("fslab")

FIO = FIXTURES / "fio"
JSON_FIXTURES = ["seqwrite-1job.json", "group-reporting.json", "two-sections.jsonplus",
                 "client-server-2sections.json"]
TEXT_FIXTURES = ["two-sections.txt", "group-reporting.txt"]


def _load(name: str) -> dict[str, Any]:
    text = (FIO / name).read_text()
    return json.loads(text[text.index("{"):])


SOURCES = {name: _load(name) for name in JSON_FIXTURES}
WEIRD = st.one_of(
    st.none(), st.booleans(), st.just("n/a"), st.just(""), st.text(max_size=8),
    st.just("🦀\u202e"), st.integers(min_value=-2**70, max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True), st.just([]), st.just({}),
    st.just([1, "x", None]), st.just({"N": "many", "mean": [1]}),
    st.recursive(st.integers(), lambda inner: st.lists(inner, max_size=3)
                 | st.dictionaries(st.text(max_size=4), inner, max_size=3), max_leaves=6))


def _paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    """Every key path in a JSON document (lists of bins are sampled, not walked)."""
    found = [prefix] if prefix else []
    if isinstance(value, dict):
        for key, inner in value.items():
            found += _paths(inner, (*prefix, key))
    elif isinstance(value, list):
        for index, inner in enumerate(value[:4]):
            found += _paths(inner, (*prefix, index))
    return found


PATHS = {name: _paths(doc) for name, doc in SOURCES.items()}


def _mutate(document: Any, path: tuple, action: str, value: Any) -> Any:
    parent = document
    for key in path[:-1]:
        parent = parent[key]
    last = path[-1]
    if action == "delete" and isinstance(parent, dict):
        parent.pop(last, None)
    elif action == "nest":
        parent[last] = {"x": [parent[last], {"y": parent[last]}]}
    else:
        parent[last] = value
    return document


@st.composite
def mutated_fio(draw: st.DrawFn) -> bytes:
    name = draw(st.sampled_from(JSON_FIXTURES))
    document = json.loads(json.dumps(SOURCES[name]))
    for _ in range(draw(st.integers(1, 4))):
        path = draw(st.sampled_from(PATHS[name]))
        try:
            document = _mutate(document, path, draw(st.sampled_from(
                ["replace", "replace", "delete", "nest"])), draw(WEIRD))
        except (KeyError, IndexError, TypeError):
            continue  # an earlier mutation removed the way there
    text = json.dumps(document, allow_nan=True)
    junk = draw(st.sampled_from(["", "fio: pid=1, err=28/file:io_u.c\n", "\n", "}{"]))
    return (junk + text + draw(st.sampled_from(["", "\n<end>", "}"]))).encode()


def parse_fio_bytes(raw: bytes) -> list[Measurement]:
    return parse_fio(load_fio(raw))


def holds(reader: Any, data: Any) -> None:
    """The property: measurements, or UserError with a reason."""
    try:
        found = reader(data)
    except UserError as exc:
        assert str(exc), "a UserError must say why"
        return
    assert isinstance(found, list)
    for measurement in found:
        assert isinstance(measurement, Measurement)
        assert isinstance(measurement.value, float | int)


@given(mutated_fio())
def test_fio_json_mutations(raw: bytes) -> None:
    holds(parse_fio_bytes, raw)


@given(st.binary(max_size=3000))
def test_fio_raw_bytes(raw: bytes) -> None:
    holds(parse_fio_bytes, raw)


@given(st.sampled_from(TEXT_FIXTURES), st.data())
def test_fio_text_mutations(name: str, data: st.DataObject) -> None:
    lines = (FIO / name).read_text().splitlines()
    for _ in range(data.draw(st.integers(1, 6))):
        index = data.draw(st.integers(0, len(lines) - 1))
        action = data.draw(st.sampled_from(["drop", "copy", "garble", "digits"]))
        if action == "drop":
            del lines[index]
        elif action == "copy":
            lines.insert(index, lines[index])
        elif action == "garble":
            lines[index] = data.draw(st.text(max_size=60))
        else:
            lines[index] = "".join(c if not c.isdigit() else data.draw(
                st.sampled_from("0123456789.k-e")) for c in lines[index])
        if not lines:
            lines = [""]
    holds(parse_fio_bytes, "\n".join(lines).encode())


@given(st.text(max_size=400), st.sampled_from([
    "104857600 bytes (105 MB, 100 MiB) copied, {s} s, {r} {u}/s",
    "{s} bytes copied, {s} s, {r} {u}/s"]), st.text(alphabet="0123456789.,eE+-", max_size=8),
    st.sampled_from(["kB", "MB", "GiB", "B", "PiB"]))
def test_dd_logs(noise: str, template: str, number: str, unit: str) -> None:
    holds(parse_dd, noise + "\n" + template.format(s=number, r=number, u=unit) + "\n")


BONNIE = (FIXTURES / "bonnie" / "tmpfs-256M.csv").read_text().strip()


@given(st.data())
def test_bonnie_csv(data: st.DataObject) -> None:
    fields = BONNIE.split(",")
    for _ in range(data.draw(st.integers(1, 5))):
        index = data.draw(st.integers(0, len(fields) - 1))
        fields[index] = data.draw(st.one_of(st.text(max_size=6), st.just("+++++"),
                                            st.just(""), st.just("1e999"), st.just("-3")))
    holds(parse_bonnie, ",".join(fields[:data.draw(st.integers(1, len(fields)))]))


@given(st.binary(max_size=2000))
def test_bonnie_and_dd_raw_bytes(raw: bytes) -> None:
    text = raw.decode(errors="replace")
    holds(parse_bonnie, text)
    holds(parse_dd, text)


def _import_one(tmp: Path, raw: bytes) -> list[Measurement]:
    (tmp / "x" / "ext4").mkdir(parents=True, exist_ok=True)
    path = tmp / "x" / "ext4" / "run-1.json"
    path.write_bytes(raw)
    _, record, reason = read_one((str(tmp / "x"), str(path), None))
    assert record is not None or reason  # never both missing
    return record.measurements if record else []


@given(st.one_of(mutated_fio(), st.binary(max_size=1500)))
@settings(max_examples=examples(400))
def test_the_importer_never_loses_a_file_to_an_exception(tmp_path_factory: Any,
                                                          raw: bytes) -> None:
    holds(lambda data: _import_one(tmp_path_factory.mktemp("i"), data), raw)


CAMPAIGN_KEYS = ["name", "iterations", "runtime", "seed", "fresh", "image_size",
                 "file_size", "hosts", "ceiling", "target", "workload", "bogus"]
TARGET_KEYS = ["name", "fs", "image_size", "mkfs_options", "mount_options", "direct_io",
               "throttle", "options", "image", "path"]
WORKLOAD_KEYS = ["preset", "only", "name", "job_file", "options"]
TOML_VALUES = st.one_of(
    st.integers(-5, 10**12), st.text(max_size=10), st.booleans(),
    st.sampled_from(["ext4", "xfs", "basic5", "direct5", "1G", "3s", "-1", "0", "dir",
                     "iteration", "nope"]),
    st.lists(st.sampled_from(["ext4", "randread", "x"]), max_size=3),
    st.floats(allow_nan=False, allow_infinity=False))


@st.composite
def campaign_document(draw: st.DrawFn) -> dict[str, Any]:
    document = {key: draw(TOML_VALUES) for key in draw(st.sets(st.sampled_from(
        [k for k in CAMPAIGN_KEYS if k not in ("target", "workload")]), max_size=4))}
    if draw(st.booleans()):
        document["target"] = [{k: draw(TOML_VALUES) for k in draw(st.sets(
            st.sampled_from(TARGET_KEYS), max_size=4))} for _ in range(draw(st.integers(1, 3)))]
    if draw(st.booleans()):
        document["workload"] = [{k: draw(TOML_VALUES) for k in draw(st.sets(
            st.sampled_from(WORKLOAD_KEYS), max_size=3))}]
    return document


@given(campaign_document())
@settings(max_examples=examples(600))
def test_campaign_toml(tmp_path_factory: Any, document: dict[str, Any]) -> None:
    import tomli_w

    from fslab.plan.loading import load_campaign

    path = tmp_path_factory.mktemp("c") / "c.toml"
    path.write_text(tomli_w.dumps(document))
    try:
        load_campaign(path)
    except UserError as exc:
        assert str(exc)


@given(st.binary(max_size=600))
@settings(max_examples=examples(600))
def test_campaign_and_aging_toml_raw_bytes(tmp_path_factory: Any, raw: bytes) -> None:
    from fslab.aging.config import load_config, mix_from_csv
    from fslab.plan.loading import load_campaign

    folder = tmp_path_factory.mktemp("t")
    (folder / "c.toml").write_bytes(raw)
    for reader in (load_campaign, load_config, mix_from_csv):
        try:
            result = reader(folder / "c.toml")
        except UserError as exc:
            assert str(exc)
            continue
        if hasattr(result, "validate"):
            with contextlib.suppress(UserError):
                result.validate()


@given(st.dictionaries(st.sampled_from(["seed", "ops", "recipe", "utilization", "mix",
                                        "max_files", "written", "fill", "sizes", "bogus",
                                        "piece", "levels", "file_choice"]),
                       TOML_VALUES, max_size=5))
@settings(max_examples=examples(600))
def test_aging_config_toml(tmp_path_factory: Any, document: dict[str, Any]) -> None:
    import tomli_w

    from fslab.aging.config import load_config

    path = tmp_path_factory.mktemp("a") / "a.toml"
    path.write_text(tomli_w.dumps(document))
    try:
        load_config(path).validate()
    except UserError as exc:
        assert str(exc)


@pytest.mark.parametrize("damage", ["format", "run", "metrics", "metrics-and-runs"])
def test_a_damaged_results_directory_is_one_clear_error_or_still_readable(tmp_path,
                                                                          damage: str):
    from fslab import api
    from fslab.core.record import RunRecord
    from fslab.results.store import ResultsDir

    results = ResultsDir.create(tmp_path / "r")
    rows = [{"campaign": "c", "run_id": f"i00{i}-a-w", "target": "a", "fs": "ext4",
             "fs_impl": "k", "workload": "w", "iteration": i, "host": "h", "op": "read",
             "metric": "iops", "value": 100.0 + i, "unit": "1/s", "better": "higher",
             "sample": 0, "note": ""} for i in (1, 2, 3)]
    for row in rows:
        results.fresh_run_dir(row["run_id"])
        results.save_run(RunRecord(run_id=row["run_id"], metrics=[row]))
    results.rebuild_metrics()
    if damage == "format":
        (results.path / "format.json").write_text("{not json")
        with pytest.raises(UserError, match=r"format\.json is damaged"):
            api.analyze(results.path)
        return
    if damage == "run":
        (results.runs_dir / "i002-a-w" / "run.json").write_text('{"run_id": ')
        results.rebuild_metrics()
        assert len(api.load(results.path)) == 2  # the others are kept
        return
    (results.path / "metrics.parquet").write_bytes(b"PAR1 garbage")
    if damage == "metrics-and-runs":
        for run in results.runs_dir.iterdir():
            (run / "run.json").unlink()
        with pytest.raises(UserError, match="damaged"):
            api.analyze(results.path)
        return
    summary = api.analyze(results.path)  # rebuilt from the run records
    assert summary.loc[0, "n"] == 3 and math.isclose(summary.loc[0, "mean"], 102.0)
