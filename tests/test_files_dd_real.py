"""`files` the study's way (tool = "dd"): real dd writes random data and times itself,
dd reads it back after caches are dropped; dd.log is kept and parsed (issue 23)."""

import pytest

from fslab.workloads.base import Where
from fslab.workloads.files import DD_LOG, FilesWorkload
from tests.conftest import requires


@pytest.mark.privileged
def test_files_with_dd_times_each_sample_with_dd(tmp_path):
    requires("dd")
    directory, run_dir = tmp_path / "fs", tmp_path / "run"
    directory.mkdir()
    run_dir.mkdir()
    workload = FilesWorkload("files_small", 2 * 1024**2, 3, flush="none", tool="dd")
    workload.check()
    output = workload.run(Where(directory), run_dir)
    assert output.status == "ok" and output.metadata["tool"] == "dd"
    log = (run_dir / DD_LOG).read_text()
    assert log.count("# write") == 3 and log.count("# read") == 3
    assert log.count("2097152 bytes") == 6  # every dd copied the whole file
    rates = [m for m in output.measurements if m.metric == "bw_bytes"]
    assert sorted((m.op, m.sample) for m in rates) == [
        ("read", 0), ("read", 1), ("read", 2), ("write", 0), ("write", 1), ("write", 2)]
    assert all(m.value > 0 for m in rates)
    assert not list(directory.iterdir())  # each sample deleted after it
    assert workload.parse(run_dir) == output.measurements[:len(workload.parse(run_dir))]
