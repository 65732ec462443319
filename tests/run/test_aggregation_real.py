"""numjobs=4 without group_reporting gives the same IOPS fio reports with group_reporting.

Two fio invocations never give identical figures, so both are paced with rate_iops: the
true aggregate is then fixed (4 × 250 IOPS) and any aggregation mistake (averaging
instead of summing, say) shows up as a 4x error, not as noise.
"""

import subprocess

import pytest

from fslab.parsers.fio import parse_fio
from fslab.parsers.fio_load import extract_json
from fslab.targets import TargetSpec, make_target
from tests.conftest import requires

JOB = """[global]
ioengine=sync
time_based
runtime=2
size=8M
directory={directory}
rate_iops=250
{group}
[paced]
rw=randread
bs=4k
numjobs=4
"""


def fio_iops(directory, group: bool, tmp_path):
    job = tmp_path / f"job-{group}.fio"
    job.write_text(JOB.format(directory=directory, group="group_reporting" if group else ""))
    out = subprocess.run(["fio", "--output-format=json", str(job)], capture_output=True,
                         text=True, check=True).stdout
    return extract_json(out)


@pytest.mark.privileged
def test_summed_jobs_match_group_reporting(lab, tmp_path):
    requires("fio", "mkfs.ext4", "losetup")
    target = make_target(TargetSpec(name="agg", fs="ext4", size=256 * 1024**2))
    session = lab.open_session()
    mounted = target.provision(session)
    try:
        separate = fio_iops(mounted.path, False, tmp_path)
        grouped = fio_iops(mounted.path, True, tmp_path)
    finally:
        target.teardown(session, mounted)
        session.close()
    assert len(separate["jobs"]) == 4 and len(grouped["jobs"]) == 1
    ours = {(m.op, m.metric): m.value for m in parse_fio(separate)}
    fio_group = grouped["jobs"][0]["read"]["iops"]
    # Two fio runs, each paced at 4 × 250 IOPS: they agree to a few percent (a run beside
    # a busy suite falls ~1 % short of its pace); a wrong aggregation (a mean of the jobs,
    # one job's figure) would be 4× off.
    assert ours[("read", "iops")] == pytest.approx(fio_group, rel=0.03)
    assert ours[("read", "iops")] == pytest.approx(1000, rel=0.03)
