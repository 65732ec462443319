"""One observation per fio section (issue 12), on outputs captured from the real fio 3.33.

Fixtures (fixtures/fio/README.md): `two-sections.*` is `two-sections.fio` (a stonewalled
1 MiB sequential read and a 4 KiB random read, numjobs=2 each); `group-reporting.*` is
`group-reporting.fio` (reader + writer in group 0, a stonewalled seqread in group 1,
group_reporting); `two-sections-both.out` is one run printed as normal and JSON output.
"""

import shutil

import pytest

from fslab import api
from fslab.core.metrics import observation_workload
from fslab.ingest.importer import import_results
from fslab.parsers.fio import ALL_CLIENTS, parse_fio
from fslab.parsers.fio_load import FioParseError, extract_json, load_fio
from tests.conftest import FIXTURES

FIO = FIXTURES / "fio"


def values(measurements, host=""):
    return {(m.section, m.op, m.metric): m.value for m in measurements if m.host == host}


def per_section_sum(jobs, name, direction, key):
    return sum(job[direction][key] for job in jobs if job["jobname"] == name)


def test_stonewalled_sections_are_separate_observations_never_summed():
    data = load_fio((FIO / "two-sections.jsonplus").read_bytes())
    found = values(parse_fio(data))
    jobs = data["jobs"]
    assert {section for section, _, _ in found} == {"seqread", "randread"}
    for section in ("seqread", "randread"):
        # numjobs=2: the section's two clones are summed, as fio's own group line does
        assert found[(section, "read", "iops")] == pytest.approx(
            per_section_sum(jobs, section, "read", "iops"))
        assert found[(section, "read", "bw_bytes")] == pytest.approx(
            per_section_sum(jobs, section, "read", "bw_bytes"))
        assert (section, "total", "iops") not in found  # reads only: no total
    everything = sum(job["read"]["iops"] for job in jobs)
    assert everything not in {v for (_, _, m), v in found.items() if m == "iops"}
    # 4 KiB random reads complete many more I/Os than 1 MiB sequential ones
    assert found[("randread", "read", "iops")] > 5 * found[("seqread", "read", "iops")]


def test_group_reporting_groups_stay_one_observation_each():
    data = load_fio((FIO / "group-reporting.json").read_bytes())
    assert len(data["jobs"]) == 2  # fio printed one entry per group
    found = values(parse_fio(data))
    group0, group1 = data["jobs"]
    assert found[("reader", "read", "iops")] == pytest.approx(group0["read"]["iops"])
    assert found[("reader", "write", "iops")] == pytest.approx(group0["write"]["iops"])
    # reader and writer ran at the same time within group 0: a total is meaningful there
    assert found[("reader", "total", "iops")] == pytest.approx(
        group0["read"]["iops"] + group0["write"]["iops"])
    assert found[("seqread", "read", "iops")] == pytest.approx(group1["read"]["iops"])
    assert ("seqread", "total", "iops") not in found
    # group 0 stands for 4 jobs: its CPU share is fio's per-job average times 4
    usr = group0["usr_cpu"] + group0["sys_cpu"]
    assert found[("reader", "total", "cpu_total")] == pytest.approx(4 * usr, rel=1e-9)


def test_single_section_output_keeps_one_unnamed_observation():
    found = values(parse_fio(extract_json((FIO / "randread-4jobs.jsonplus").read_text())))
    assert {section for section, _, _ in found} == {""}


def test_client_server_sections_per_host_and_for_all_clients():
    data = load_fio((FIO / "client-server-2sections.json").read_bytes())
    measurements = parse_fio(data)
    jobs = [j for j in data["client_stats"] if j["jobname"] != ALL_CLIENTS]
    hosts = {f"{j['hostname']}:{j['port']}" for j in jobs}
    assert len(hosts) == 2
    all_clients = values(measurements, ALL_CLIENTS)
    for section in ("seqread", "randread"):
        per_host = [values(measurements, host)[(section, "read", "iops")] for host in hosts]
        assert all_clients[(section, "read", "iops")] == pytest.approx(sum(per_host))
        assert all_clients[(section, "read", "iops")] == pytest.approx(
            per_section_sum(jobs, section, "read", "iops"))
    # fio's own "All clients" entry covers one group only: fslab does not use it
    fio_all = next(j for j in data["client_stats"] if j["jobname"] == ALL_CLIENTS)
    assert fio_all["groupid"] == 1


def test_text_output_matches_the_json_of_the_same_run():
    """`two-sections-both.out` is one run printed both ways (--output-format=normal,json)."""
    raw = (FIO / "two-sections-both.out").read_text()
    from_json = values(parse_fio(extract_json(raw)))
    text = raw[raw.index("\n}\n") + 3:]  # fio printed the JSON first, then the text
    assert "(groupid=" in text and '"jobs"' not in text
    from_text = values(parse_fio(load_fio(text.encode())))
    assert {k[0] for k in from_text} == {k[0] for k in from_json} == {"seqread", "randread"}
    for key in [("seqread", "read", "iops"), ("randread", "read", "iops"),
                ("seqread", "read", "bw_bytes"), ("randread", "read", "bw_bytes")]:
        # fio prints 3 significant digits per job (IOPS=11.4k): two jobs, ≤ 0.5 % each
        assert from_text[key] == pytest.approx(from_json[key], rel=0.006), key
    for key in [("seqread", "read", "clat_mean_ns"), ("randread", "read", "clat_mean_ns")]:
        assert from_text[key] == pytest.approx(from_json[key], rel=0.002), key
    assert from_text[("randread", "total", "cpu_total")] == pytest.approx(
        from_json[("randread", "total", "cpu_total")], abs=0.2)
    # two clones, no json+ bins in text: merged percentiles are not invented
    assert ("randread", "read", "clat_p99_ns") not in from_text


def test_text_group_reporting_and_single_job_percentiles():
    found = values(parse_fio(load_fio((FIO / "group-reporting.txt").read_bytes())))
    assert found[("reader", "read", "iops")] == 15300
    assert found[("reader", "write", "iops")] == 13800
    assert found[("reader", "read", "clat_mean_ns")] == pytest.approx(127970)
    assert found[("reader", "read", "clat_p99_ns")] == 200_000  # printed in usec
    assert found[("seqread", "read", "bw_bytes")] == pytest.approx(704 * 1024**2)
    assert ("seqread", "total", "iops") not in found


def test_a_wrong_typed_direction_is_a_parse_error_not_a_crash():
    data = load_fio((FIO / "seqwrite-1job.json").read_bytes())
    data["jobs"][0]["read"] = "n/a"
    with pytest.raises(FioParseError):
        parse_fio(data)


def test_observation_names():
    assert observation_workload("server", "seqread") == "server/seqread"
    assert observation_workload("seqread", "seqread") == "seqread"
    assert observation_workload("randread", "") == "randread"


def test_import_names_sections_and_reads_text(tmp_path):
    tree = tmp_path / "tree"
    for fs in ("ext4", "xfs"):
        for iteration in (1, 2):
            folder = tree / fs / str(iteration)
            folder.mkdir(parents=True)
            shutil.copy(FIO / "two-sections.jsonplus", folder / "server-result.json")
            shutil.copy(FIO / "group-reporting.txt", folder / "grouped.txt")
    report = import_results([tree], tmp_path / "out", "{fs}/{iteration}/{workload}.*")
    assert report.imported == 8 and not report.skipped
    metrics = api.load(tmp_path / "out")
    assert set(metrics["workload"]) == {"server-result/seqread", "server-result/randread",
                                        "grouped/reader", "grouped/seqread"}
    assert set(metrics["fs"]) == {"ext4", "xfs"} and set(metrics["iteration"]) == {1, 2}
    report = import_results([tree], tmp_path / "guessed")
    guessed = set(api.load(tmp_path / "guessed")["workload"])
    assert guessed == {"server/seqread", "server/randread", "grouped/reader", "grouped/seqread"}
