"""Around each run on an aged target: free-space fragmentation before and after it (the
run's files still in place) and fstrim before it when asked — the aging study's protocol
(seed 004, section 6.2; issue 23 item 4)."""

import json

import pytest

from fslab import api
from fslab.plan.loading import load_campaign
from tests.conftest import requires

WRITE_16M = """[global]
ioengine=psync
[write16m]
rw=write
bs=1M
size=16M
end_fsync=1
"""


@pytest.mark.privileged
def test_an_aged_target_is_probed_before_and_after_each_run_and_trimmed_first(tmp_path, lab):
    requires("mkfs.ext4", "losetup", "fio", "e2freefrag", "fstrim")
    (tmp_path / "write16m.fio").write_text(WRITE_16M)
    campaign = tmp_path / "c.toml"
    campaign.write_text(
        'iterations = 1\nseed = 3\nimage_size = "256M"\nceiling = false\nruntime = 1\n'
        'file_size = "16M"\n'
        '[[target]]\nname = "aged"\nfs = "ext4"\nfstrim = true\n'
        'age = { recipe = "interleaved", tree_files = 300, fill = 0.1, seed = 4 }\n'
        '[[target]]\nname = "plain"\nfs = "ext4"\n'
        '[[workload]]\njob_file = "write16m.fio"\n'
        '[[workload]]\npreset = "direct5"\nonly = ["randwrite"]\n')
    out = tmp_path / "r"
    result = api.run(load_campaign(campaign), out=out, lab=lab)
    assert result.runner.failed == 0, api.runs(out).to_dict("records")
    aged = json.loads((out / "runs" / "i001-aged-write16m" / "run.json").read_text())
    around = aged["workload_metadata"]["around_run"]
    before, after = around["free_space_before"], around["free_space_after"]
    assert before["tool"] == after["tool"] == "e2freefrag" and not before["not_measurable"]
    assert before["free_extents"] > 0 and before["histogram"]
    # measured with the run's 16 MiB file still there
    assert 15 * 1024**2 <= before["free_bytes"] - after["free_bytes"] <= 24 * 1024**2
    assert around["fstrim"]["done"] and around["fstrim"]["trimmed_bytes"] > 0
    # a time-based job is measured in interleaved slices: probed around all of them
    sliced = json.loads((out / "runs" / "i001-aged-randwrite" / "run.json").read_text())
    assert "slices" in sliced["workload_metadata"]
    around = sliced["workload_metadata"]["around_run"]
    assert around["fstrim"]["done"]
    assert around["free_space_before"]["free_bytes"] > around["free_space_after"]["free_bytes"]
    plain = json.loads((out / "runs" / "i001-plain-write16m" / "run.json").read_text())
    assert "around_run" not in plain["workload_metadata"]  # not aged, no fstrim asked
    assert "fstrim = true" in (out / "campaign.toml").read_text()
