"""`files` the study's way (tool = "dd"): real dd writes random data and times itself,
dd reads it back after caches are dropped; dd.log is kept and parsed (issue 23)."""

import pytest

from fslab.parsers.raw_files import DirFiles
from fslab.parsers.registry import parse_run
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
    parsed = parse_run(DirFiles(run_dir))  # the parse stage, as the runner calls it
    assert parsed.kind == "files"
    log = (run_dir / DD_LOG).read_text()
    assert log.count("# write") == 3 and log.count("# read") == 3
    assert log.count("2097152 bytes") == 6  # every dd copied the whole file
    rates = [m for m in parsed.measurements if m.metric == "bw_bytes"]
    assert sorted((m.op, m.sample) for m in rates) == [
        ("read", 0), ("read", 1), ("read", 2), ("write", 0), ("write", 1), ("write", 2)]
    assert all(m.value > 0 for m in rates)
    assert not list(directory.iterdir())  # each sample deleted after it
    interval = parsed.metadata["study_interval"]["write"]
    speeds = sorted(m.value / 1e6 for m in rates if m.op == "write")
    assert interval["n"] == 3 and speeds[0] <= interval["mean_mb_s"] <= speeds[-1]


def test_the_studys_interval_is_its_own_formula_on_its_own_figures():
    """Seed 001's table: ext4 (large), 250 samples, sd 1.161574 MB/s, mean 5.9484: margin
    0.1439902, interval 5.80441-6.09239. Samples built with exactly that mean and sd."""
    import numpy as np

    from fslab.core.metrics import Measurement
    from fslab.workloads.files import study_interval

    raw = np.random.default_rng(1).normal(size=250)
    speeds = 5.9484 + 1.161574 * (raw - raw.mean()) / raw.std(ddof=1)
    found = study_interval([Measurement("write", "bw_bytes", v * 1e6, sample=i)
                            for i, v in enumerate(speeds)])["write"]
    assert found["margin_mb_s"] == pytest.approx(0.1439902, abs=1e-6)
    assert (found["low_mb_s"], found["high_mb_s"]) == (pytest.approx(5.80441, abs=1e-5),
                                                       pytest.approx(6.09239, abs=1e-5))
