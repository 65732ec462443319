"""Which fio jobs are measured in interleaved slices and which whole, and why (fio's HOWTO:
a job that fills the disk, deletes its files, verifies, replays a log, or ends on bytes
rather than time is not a stretch of time that can be cut into shares), and what one
slice of a job file with several sections runs (issue 61)."""

import pytest

from fslab.plan.loading import load_campaign
from fslab.plan.order import make_plan
from fslab.plan.schema import Overrides
from fslab.run.pieces import measured_how, rounds_for, slice_shares
from fslab.workloads.fio import job_text_workload
from fslab.workloads.fio.jobfile import job_sections
from fslab.workloads.fio.slices import slice_text, whole_because

PLAIN = """[global]
ioengine=psync
direct=1
size=32M
runtime=2
time_based

[randread]
rw=randread
bs=4k
"""


def job(extra: str = "", text: str = PLAIN):
    return job_text_workload("mine", text.replace("time_based\n", f"time_based\n{extra}"),
                             "mine.fio")


def test_a_plain_time_based_job_file_is_sliced():
    assert whole_because(job()) is None


@pytest.mark.parametrize(("extra", "said"), [
    ("unlink=1\n", "deletes its own files (unlink)"),
    ("unlink\n", "deletes its own files (unlink)"),
    ("unlink_each_loop=1\n", "deletes its own files (unlink_each_loop)"),
    ("verify=md5\n", "a verify job (verify=md5)"),
    ("verify_only\n", "a verify job"),
    ("fill_fs=1\n", "fills the file system"),
    ("read_iolog=trace.log\n", "replays an I/O log"),
    ("number_ios=1000\n", "count of I/O (number_ios)"),
    ("io_size=1G\n", "count of I/O (io_size)"),
])
def test_a_job_that_cannot_be_sliced_says_why(extra, said):
    why = whole_because(job(extra))
    assert why is not None and said in why


@pytest.mark.parametrize("extra", ["unlink=0\n", "verify=0\n", "verify=none\n",
                                   "number_ios=0\n"])
def test_an_option_set_off_does_not_stop_slicing(extra):
    assert whole_because(job(extra)) is None


def test_time_less_and_size_bounded_job_files_are_whole():
    timeless = job_text_workload("t", "[t]\nrw=randread\nsize=16M\n", "t.fio")
    assert "time-less" in (whole_because(timeless) or "")
    bounded = job_text_workload("b", "[b]\nrw=randread\nsize=16M\nruntime=5\n", "b.fio")
    assert "not time_based" in (whole_because(bounded) or "")


def test_one_section_that_cannot_be_sliced_makes_the_job_whole():
    text = PLAIN + "\n[check]\nrw=write\nbs=4k\nverify=crc32c\nstonewall\n"
    assert "verify job (verify=crc32c)" in (whole_because(job(text=text)) or "")


def test_global_sections_apply_to_the_jobs_after_them():
    text = "[global]\nruntime=4\n[a]\nrw=read\n[global]\nruntime=8\n[b]\nrw=write\n"
    assert job_sections(text) == [("a", {"runtime": "4", "rw": "read"}),
                                  ("b", {"runtime": "8", "rw": "write"})]


def test_a_slice_gives_every_section_its_own_share_of_its_own_runtime():
    text = ("[global]\nruntime=30\ntime_based\nramp_time=2\n[seq]\nrw=read\n"
            "[rand]\nrw=randread\nruntime = 6\nstonewall\n")
    workload = job_text_workload("two", text, "two.fio")
    assert whole_because(workload) is None
    rounds = rounds_for(workload, 6)
    assert rounds == 6  # the shortest section, 6 s, still gives 1 s slices
    first, later = slice_shares(workload, rounds)
    assert later == ((5000, 0), (1000, 0))
    assert first == ((5000, 500), (1000, 500))  # a sixth of 2 s ramp is below 500 ms
    sliced = slice_text(text, list(first))
    assert "runtime=30" not in sliced and "runtime = 6" not in sliced
    sections = dict(job_sections(sliced))
    assert sections["seq"]["runtime"] == "5000ms" and sections["rand"]["runtime"] == "1000ms"
    assert sections["rand"]["ramp_time"] == "500ms"
    assert sections["rand"]["stonewall"] is True
    assert sections["seq"]["clocksource"] == "clock_gettime"
    assert "clocksource" not in slice_text("[global]\nclocksource=cpu\n" + text, list(later))\
        .split("clocksource=cpu", 1)[1]


def test_stonewalled_preset_jobs_are_sliced_and_time_less_ones_say_why(tmp_path):
    campaign = load_campaign(None, Overrides(fs=["null"], preset="server6",
                                             workloads=["seqread", "hpc"]))
    plan = make_plan(campaign)
    runs = {run.workload.name: run for run in plan.runs}
    assert measured_how(runs["seqread"], campaign).startswith("in ")
    assert "interleaved slices" in measured_how(runs["seqread"], campaign)
    assert measured_how(runs["hpc"], campaign).startswith("measured whole")
    assert "time-less" in measured_how(runs["hpc"], campaign)


def test_the_job_file_flag_loads_a_job_file_like_the_campaign_key(tmp_path):
    path = tmp_path / "my read.fio"
    path.write_text(PLAIN)
    campaign = load_campaign(None, Overrides(fs=["null"], job_files=[str(path)]))
    (entry,) = campaign.workloads
    assert entry.job_text == PLAIN and entry.name == "my-read"
    both = load_campaign(None, Overrides(fs=["null"], job_files=[str(path)],
                                         preset="direct5", workloads=["randread", "my-read"]))
    assert [e.preset or e.name for e in both.workloads] == ["direct5", "my-read"]
