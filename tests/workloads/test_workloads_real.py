"""Presets resolve to their documented parameters; files, smallfiles and bonnie run for real."""

import json
import math
from pathlib import Path

import pytest

from fslab import api
from fslab.parsers.bonnie import TOO_FAST_NOTE, find_csv_line, parse_bonnie
from fslab.plan.loading import load_campaign
from fslab.plan.schema import Overrides
from fslab.plan.workload_entries import build_workloads
from fslab.workloads.base import Where
from tests.conftest import FIXTURES, fslab_here, requires

WHERE = Where(Path("/mnt/t"))


def job(preset, name):
    campaign = load_campaign(None, Overrides(preset=preset, workloads=[name]))
    (workload,) = build_workloads(campaign)
    return workload.render(WHERE)["job.fio"]


def options(text):
    return {line.split("=", 1)[0]: line.split("=", 1)[1] if "=" in line else True
            for line in text.splitlines() if line and not line.startswith((";", "["))}


@pytest.mark.parametrize(("preset", "name", "expected"), [
    ("direct5", "randread", {"ioengine": "sync", "direct": "1", "ramp_time": "1",
                             "rw": "randread", "bs": "4k", "numjobs": "4"}),
    ("direct5", "seqwrite", {"direct": "1", "rw": "write", "bs": "1M"}),
    ("basic5", "randread", {"ioengine": "sync", "rw": "randread", "bs": "4k", "numjobs": "4"}),
    ("basic5", "mixed", {"rw": "randrw", "rwmixread": "70", "numjobs": "4"}),
    ("server6", "seqread", {"ioengine": "libaio", "direct": "1", "stonewall": True,
                            "rw": "read", "bs": "1M"}),
    ("server6", "randwrite", {"ioengine": "libaio", "direct": "1", "bs": "4k"}),
    ("server6", "mixed", {"rw": "randrw", "rwmixread": "50"}),
    ("server6", "web", {"rw": "randrw", "rwmixread": "80", "iodepth": "64"}),
    ("server6", "db", {"rw": "randrw", "rwmixread": "50", "iodepth": "128",
                       "bsrange": "8k-64k", "numjobs": "1"}),
    ("server6", "seqwrite", {"group_reporting": True, "cpus_allowed_policy": "split"}),
    ("randrw16k", "randrw16k", {"rw": "randrw", "rwmixread": "70", "bs": "16k", "direct": "1",
                                "ioengine": "libaio", "numjobs": "8", "group_reporting": True,
                                "iodepth": "1"}),
    ("randrw128k", "randrw128k", {"bs": "128k", "numjobs": "8", "group_reporting": True}),
    ("aged", "aged", {"nrfiles": "2000", "filesize": "4k", "openfiles": "100",
                      "create_on_open": "1", "file_service_type": "gauss", "fsync": "32",
                      "bs": "4k", "time_based": True}),
])
def test_preset_job_files_have_their_documented_parameters(preset, name, expected):
    found = options(job(preset, name))
    for key, value in expected.items():
        assert found.get(key) == value, (key, found.get(key))


def test_hpc_writes_then_reads_the_same_files_per_process():
    text = job("server6", "hpc")
    write, read = text.split("[hpc-write]")[1].split("[hpc-read]")
    assert "rw=write" in write and "rw=read" in read
    assert "filename_format=hpc.$jobnum" in write and "filename_format=hpc.$jobnum" in read
    assert "numjobs=4" in read and "stonewall" in text


def test_web_blocks_are_small_and_db_blocks_spread_8k_to_64k():
    web = options(job("server6", "web"))["bssplit"]
    sizes = [part.split("/")[0] for part in web.split(":")]
    assert all(size in ("512", "1k", "2k", "4k", "8k") for size in sizes)


def test_presets_command_lists_every_suite():
    out = fslab_here("presets").stdout
    for name in ("basic5", "server6", "randrw16k", "randrw128k", "aged", "files",
                 "smallfiles", "bonnie"):
        assert f"{name}:" in out


def test_study_presets_leave_unstated_parameters_to_fio():
    """server6's plain categories at fio's default iodepth (the study stated none);
    basic5 buffered as published, direct5 (the default) with O_DIRECT."""
    for name in ("seqread", "seqwrite", "randread", "randwrite", "mixed"):
        assert "iodepth" not in options(job("server6", name)), name
        assert "direct" not in options(job("basic5", name)), name
        assert options(job("direct5", name))["direct"] == "1"
    result = fslab_here("presets")
    assert "iodepth=1 [fio default: the study states none]" in result.stdout
    assert "bssplit=512/10:1k/10:2k/10:4k/50:8k/20 [fslab's choice" in result.stdout


def test_mirror_study_runs_are_size_based_with_a_runtime_cap():
    """The RAID-1 study's command has --size and --runtime but no --time_based: a run
    ends at its size or at the cap (its ZFS run ended at 519,310 ms of 600 s)."""
    found = options(job("randrw16k", "randrw16k"))
    assert found["time_based"] == "0" and int(found["runtime"]) > 0 and "size" in found


def test_bonnie_csv_from_the_real_bonnie():
    text = (FIXTURES / "bonnie" / "tmpfs-256M.csv").read_text()
    values = {(m.op, m.metric): m for m in parse_bonnie(text)}
    char = values[("seq_output_char", "bw_bytes")]
    assert char.value == 1033 * 1024  # K/sec -> bytes/s
    assert values[("seq_output_char", "cpu_pct")].value == 98
    block = values[("seq_output_block", "bw_bytes")]
    assert math.isnan(block.value) and block.note == TOO_FAST_NOTE  # +++++: missing, not 0
    assert values[("seq_input_char", "bw_bytes")].value == 1392 * 1024
    assert values[("seq_create", "ops_per_s")].value == 3881
    assert values[("seq_output_char", "lat_max_ns")].value == 16478 * 1000
    assert values[("random_delete", "lat_max_ns")].value == 1588 * 1000
    assert not any(m.value == 0 for m in values.values())


def test_bonnie_usage_output_has_no_result():
    from fslab.parsers.bonnie import BonnieParseError

    with pytest.raises(BonnieParseError):
        find_csv_line((FIXTURES / "bonnie" / "usage-size-too-small.txt").read_text())


@pytest.mark.privileged
def test_files_smallfiles_bonnie_on_a_tiny_ext4(tmp_path, lab):
    requires("fio", "mkfs.ext4", "bonnie++")
    campaign_file = tmp_path / "c.toml"
    campaign_file.write_text("""
iterations = 1
image_size = "256M"
file_size = "16M"
[[target]]
fs = "ext4"
[[workload]]
preset = "files"
options = { small_size = "1M", large_size = "2M", small_count = 4, large_count = 2 }
[[workload]]
preset = "smallfiles"
only = ["smallfiles_4k"]
options = { count = 500, files_per_dir = 100 }
[[workload]]
preset = "bonnie"
options = { file_size = "64M", files_k = 1 }
""")
    out = tmp_path / "r"
    api.run(load_campaign(campaign_file), out=out, lab=lab)
    runs = api.runs(out)
    assert set(runs["status"]) == {"ok"}, runs.to_dict("records")
    metrics = api.load(out)

    small = metrics[(metrics.workload == "files_small") & (metrics.op == "write")]
    seconds = small[small.metric == "seconds"].set_index("sample")["value"]
    speed = small[small.metric == "bw_bytes"].set_index("sample")["value"]
    assert sorted(seconds.index) == [0, 1, 2, 3]
    for sample in seconds.index:  # bytes/s is exactly bytes over that sample's seconds
        assert speed[sample] == pytest.approx(1024**2 / seconds[sample])
    record = json.loads(next((out / "runs").glob("*files_small/samples.json")).read_text())
    assert record["flush"] == "fdatasync" and record["caches_dropped"] is True

    phases = metrics[(metrics.workload == "smallfiles_4k") & (metrics.metric == "ops_per_s")]
    assert set(phases["op"]) == {"write", "rewrite", "read", "delete"}
    assert (phases["value"] > 0).all()
    syncs = metrics[(metrics.workload == "smallfiles_4k") & (metrics.metric == "sync_seconds")]
    assert len(syncs) == 4
    # the primary rate counts the phase's sync: files / (seconds + sync seconds)
    before = metrics[(metrics.workload == "smallfiles_4k")
                     & (metrics.metric == "ops_per_s_before_sync")].set_index("op")["value"]
    rate, sync = phases.set_index("op")["value"], syncs.set_index("op")["value"]
    for op in rate.index:
        assert 500 / rate[op] == pytest.approx(500 / before[op] + sync[op])

    bonnie = metrics[metrics.workload == "bonnie"]
    assert {"seq_output_block", "seq_input_block", "seq_create"} <= set(bonnie["op"])
    # bonnie++ ran confined to half its file in memory, and was told so with -r
    meta = json.loads(next((out / "runs").glob("*bonnie/run.json")).read_text())
    command = meta["workload_metadata"]["command"]
    size_mib = int(command[command.index("-s") + 1].rstrip("M"))
    ram_mib = int(command[command.index("-r") + 1])
    assert size_mib >= 2 * ram_mib
    assert meta["workload_metadata"]["memory_limit_bytes"] == ram_mib * 1024**2
    assert meta["workload_metadata"]["memory_cgroup"]
    assert not Path(meta["workload_metadata"]["memory_cgroup"]).exists()  # released
    for workload in ("files_small", "smallfiles_4k", "bonnie"):  # CPU for every run
        cpu = metrics[(metrics.workload == workload) & (metrics.metric == "cpu_sys")]
        assert len(cpu) == 1 and cpu["value"].iloc[0] >= 0


@pytest.mark.privileged
def test_server6_end_to_end(tmp_path, lab):
    requires("fio", "mkfs.ext4")
    campaign = load_campaign(None, Overrides(fs=["ext4"], preset="server6",
                                             iterations=1, runtime="1", image_size="512M",
                                             file_size="32M", seed=6, rounds=1,
                                             ceiling=False))
    result = api.run(campaign, out=tmp_path / "r", lab=lab)
    assert (result.runner.ok, result.runner.failed) == (8, 0)
    metrics = api.load(tmp_path / "r")
    # hpc writes then reads: two sections, two observations, never one summed row
    hpc = metrics[metrics.workload.str.startswith("hpc") & (metrics.metric == "bw_bytes")]
    assert set(zip(hpc["workload"], hpc["op"], strict=True)) == {
        ("hpc/hpc-write", "write"), ("hpc/hpc-read", "read")}
    p9999 = metrics[metrics.metric == "clat_p99_99_ns"]
    assert not p9999.empty and (p9999["value"] > 0).all()
