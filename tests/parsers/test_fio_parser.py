"""fio JSON parsing on outputs captured from the real fio (fixtures/fio/README.md)."""

import json
from collections import Counter

import numpy as np
import pytest

from fslab.parsers.fio import job_errors, parse_fio
from fslab.parsers.fio_latency import PERCENTILES, percentiles_from_bins
from fslab.parsers.fio_load import FioParseError, extract_json, load_fio
from tests.conftest import FIXTURES
from tests.floats import close

FIO = FIXTURES / "fio"


def load(name):
    return extract_json((FIO / name).read_text())


def by_key(measurements):
    return {(m.op, m.metric): m.value for m in measurements}


def test_four_jobs_are_one_observation_with_summed_rates():
    data = load("randread-4jobs.jsonplus")
    jobs = data["jobs"]
    assert len(jobs) == 4
    values = by_key(parse_fio(data))
    assert values[("read", "iops")] == pytest.approx(sum(j["read"]["iops"] for j in jobs))
    assert values[("read", "bw_bytes")] == pytest.approx(sum(j["read"]["bw_bytes"] for j in jobs))
    # Summed rate is not the mean rate: it is 4x the per-job average here.
    assert values[("read", "iops")] > 3 * max(j["read"]["iops"] for j in jobs) / 2
    # Independent check: completed I/Os over each job's runtime, summed.
    by_ios = sum(j["read"]["total_ios"] / (j["read"]["runtime"] / 1000) for j in jobs)
    assert values[("read", "iops")] == pytest.approx(by_ios, rel=0.01)
    assert ("write", "iops") not in values


def test_latency_mean_is_weighted_by_completed_ios():
    jobs = load("randread-4jobs.jsonplus")["jobs"]
    weighted = sum(j["read"]["clat_ns"]["mean"] * j["read"]["clat_ns"]["N"] for j in jobs)
    expected = weighted / sum(j["read"]["clat_ns"]["N"] for j in jobs)
    naive = sum(j["read"]["clat_ns"]["mean"] for j in jobs) / 4
    value = by_key(parse_fio({"jobs": jobs}))[("read", "clat_mean_ns")]
    assert value == pytest.approx(expected)
    assert value != pytest.approx(naive, rel=1e-6)


def test_percentiles_from_bins_match_fios_own_per_job():
    """Our merge rule, applied to one job's bins, must reproduce fio's reported percentiles."""
    for job in load("randread-4jobs.jsonplus")["jobs"]:
        clat = job["read"]["clat_ns"]
        bins = Counter({float(k): v for k, v in clat["bins"].items()})
        ours = percentiles_from_bins(bins)
        reported = {float(k): v for k, v in clat["percentile"].items()}
        for p, name in PERCENTILES.items():
            assert ours[name] == reported[p], (job["jobname"], p)


def test_merged_percentiles_lie_within_the_jobs_range():
    jobs = load("randread-4jobs.jsonplus")["jobs"]
    p99 = by_key(parse_fio({"jobs": jobs}))[("read", "clat_p99_ns")]
    per_job = [j["read"]["clat_ns"]["percentile"]["99.000000"] for j in jobs]
    assert min(per_job) <= p99 <= max(per_job)


def test_mixed_has_read_write_and_total():
    values = by_key(parse_fio(load("mixed-4jobs.jsonplus")))
    total = values[("total", "iops")]
    assert total == pytest.approx(values[("read", "iops")] + values[("write", "iops")])
    share = values[("read", "iops")] / total
    assert 0.6 < share < 0.8  # rwmixread=70


def test_plain_json_single_job_uses_fios_percentiles():
    data = load("seqwrite-1job.json")
    values = by_key(parse_fio(data))
    job = data["jobs"][0]["write"]
    assert values[("write", "bw_bytes")] == job["bw_bytes"]
    assert values[("write", "clat_p99_ns")] == job["clat_ns"]["percentile"]["99.000000"]
    assert values[("total", "cpu_usr")] == pytest.approx(data["jobs"][0]["usr_cpu"])


def test_error_line_before_json_and_job_error():
    text = (FIO / "enospc-error-line.json").read_text()
    assert text.startswith("fio: pid=")
    data = extract_json(text)
    assert job_errors(data) == ["fill: error 28"]


def test_no_json_is_a_parse_error():
    with pytest.raises(FioParseError):
        extract_json("fio: failed parsing directory=/nope\nfio: job bad dropped\n")


def test_old_fio_microsecond_latencies_are_converted():
    job = {"jobname": "old", "error": 0, "usr_cpu": 1.0, "sys_cpu": 2.0,
           "read": {"io_bytes": 4096 * 100, "bw": 400, "iops": 100.0, "runtime": 1000,
                    "total_ios": 100,
                    "clat": {"min": 10, "max": 90, "mean": 50.0, "N": 100,
                             "percentile": {"99.000000": 80}},
                    "lat": {"min": 11, "max": 91, "mean": 51.0, "N": 100}},
           "write": {"io_bytes": 0, "bw": 0, "iops": 0, "runtime": 0, "total_ios": 0}}
    values = by_key(parse_fio(json.loads(json.dumps({"jobs": [job]}))))
    assert values[("read", "clat_mean_ns")] == 50_000.0
    assert values[("read", "clat_p99_ns")] == 80_000.0
    assert values[("read", "bw_bytes")] == 400 * 1024


@pytest.mark.parametrize("name", ["randread-4jobs.jsonplus", "mixed-4jobs.jsonplus",
                                  "client-server-2hosts.json", "seqwrite-1job.json"])
def test_numpy_bins_give_the_same_measurements(name):
    """load_fio reads json+ bins with numpy; parse_fio must not see the difference."""
    raw = (FIO / name).read_bytes()
    assert close(parse_fio(load_fio(raw)), parse_fio(extract_json(raw)), rel=1e-12)


def test_bins_that_are_not_plain_numbers_go_to_the_json_parser():
    data = load("randread-4jobs.jsonplus")
    data["jobs"][0]["read"]["clat_ns"]["bins"] = {"1.5e3": 2, "2000": 1}  # not integers
    data["jobs"][1]["read"]["clat_ns"]["bins"] = {}
    raw = json.dumps(data).encode()
    parsed = load_fio(raw)
    assert parsed["jobs"][0]["read"]["clat_ns"]["bins"] == {"1.5e3": 2, "2000": 1}
    assert isinstance(parsed["jobs"][2]["read"]["clat_ns"]["bins"], tuple)  # numpy's
    assert close(parse_fio(parsed), parse_fio(json.loads(raw)), rel=1e-12)


def test_every_default_percentile_and_the_pooled_stddev_are_kept():
    """Issue 23 item 4: all 17 percentiles fio reports by default, and the standard
    deviation over every I/O of the clones (not the mean of their deviations)."""
    from fslab.core.metrics import FIO_PERCENTILES
    from fslab.parsers.fio_latency import pooled_stddev as _pooled_stddev

    jobs = load("randread-4jobs.jsonplus")["jobs"]
    values = by_key(parse_fio({"jobs": jobs}))
    for p in FIO_PERCENTILES:
        assert ("read", PERCENTILES[p]) in values, p
    assert PERCENTILES[99.5] == "clat_p99_5_ns" and PERCENTILES[1.0] == "clat_p1_ns"
    one = by_key(parse_fio({"jobs": jobs[:1]}))
    assert one[("read", "clat_stddev_ns")] == pytest.approx(jobs[0]["read"]["clat_ns"]["stddev"])
    # known truth: two jobs' samples, pooled, against numpy over all of them
    rng = np.random.default_rng(3)
    a, b = rng.normal(100, 10, 500), rng.normal(160, 30, 300)
    blocks = [{"N": len(x), "mean": x.mean(), "stddev": x.std()} for x in (a, b)]
    assert _pooled_stddev(blocks) == pytest.approx(np.concatenate([a, b]).std())
    naive = (a.std() + b.std()) / 2
    assert _pooled_stddev(blocks) > naive * 1.5  # the means' distance counts


def test_each_clone_is_kept_beside_the_observation():
    """Issue 23 item 4: studies that report each thread (seed 000: 4 threads) can read
    the clones; their sum is the observation, which stays the only observation."""
    from fslab.parsers.fio import clone_rows

    data = load("randread-4jobs.jsonplus")
    clones = clone_rows(data)
    assert [c["job"] for c in clones] == [f"{j['jobname']} #{i}"
                                          for i, j in enumerate(data["jobs"])]
    assert all("read" in c and "write" not in c for c in clones)
    values = by_key(parse_fio(data))
    assert sum(c["read"]["iops"] for c in clones) == pytest.approx(values[("read", "iops")])
    assert clones[0]["read"]["clat_mean_ns"] == data["jobs"][0]["read"]["clat_ns"]["mean"]


def test_a_job_that_went_on_past_its_errors_counts_them_and_only_successes_in_its_rates():
    """Issue 23 item 4: with continue_on_error fio finishes and counts its failed I/Os
    (total_err); its own IOPS count them too, fslab's count the I/Os that did something."""
    data = load("continue-on-error-einval.json")
    job = data["jobs"][0]
    assert job["error"] == 22 and job["read"]["total_ios"] == 1821  # as fio reported it
    assert job_errors(data) == []  # finished: a result, not a failed run
    values = by_key(parse_fio(data))
    done = job["read"]["clat_ns"]["N"]
    assert done == job["read"]["io_bytes"] // 4096 == 228
    assert values[("read", "errors")] == values[("total", "errors")] == job["total_err"] == 1593
    assert values[("total", "ios")] == done
    assert values[("read", "iops")] == pytest.approx(job["read"]["iops"] * done / 1821)
    # the rate in I/Os agrees with the rate in bytes once the failed ones are out
    assert values[("read", "iops")] * 4096 == pytest.approx(values[("read", "bw_bytes")],
                                                            rel=1e-6)
    clean = by_key(parse_fio(load("seqwrite-1job.json")))
    assert not any(metric == "errors" for _, metric in clean)  # no continue_on_error: none


def test_bandwidth_and_iops_sample_statistics_of_one_fio_entry_are_kept():
    """fio's min / max / stddev over its bandwidth samples (KiB/s) and IOPS samples, for an
    observation that is one fio entry (a group_reporting group); never across clones."""
    data = load("group-reporting.json")
    section = data["jobs"][1]["read"]
    rows = {(m.section, m.op, m.metric): m.value for m in parse_fio(data)}
    assert rows[("seqread", "read", "bw_min_bytes")] == section["bw_min"] * 1024
    assert rows[("seqread", "read", "bw_max_bytes")] == section["bw_max"] * 1024
    assert rows[("seqread", "read", "bw_stddev_bytes")] == section["bw_dev"] * 1024
    assert rows[("seqread", "read", "iops_max")] == section["iops_max"]
    assert rows[("seqread", "read", "bw_min_bytes")] <= rows[("seqread", "read", "bw_bytes")]
    clones = parse_fio(load("randread-4jobs.jsonplus"))  # 4 entries: not combined
    assert not any(m.metric.startswith(("bw_min", "bw_max", "iops_min")) for m in clones)
    from fslab.parsers.fio import clone_rows

    kept = clone_rows(load("randread-4jobs.jsonplus"))
    assert all("bw_min_bytes" in clone["read"] for clone in kept)


def test_total_and_submission_latency_extremes_and_spread_are_kept():
    """min / max / stddev of every latency fio gives (clat, lat; slat when it sampled it),
    pooled over the clones; the headline still shows a fio job's tail as p99, not max."""
    from fslab.core.metrics import headline_metrics

    data = load("randrw16k-ext4-loop-disk-util.json")
    values = by_key(parse_fio(data))
    lat = data["jobs"][0]["read"]["lat_ns"]
    assert values[("read", "lat_max_ns")] == lat["max"]
    assert values[("read", "lat_min_ns")] == lat["min"]
    assert values[("read", "lat_stddev_ns")] == pytest.approx(lat["stddev"])
    assert not any(metric.startswith("slat_m") for _, metric in values)  # N = 0: none
    shown = headline_metrics({metric for _, metric in values})
    assert "clat_p99_ns" in shown and "lat_max_ns" not in shown
    assert "lat_max_ns" in headline_metrics({"ops_per_s", "lat_max_ns"})  # smallfiles
