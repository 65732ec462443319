"""Per-device statistics: fio's disk_util where fio finds the devices, fslab's own from
/sys/block where it cannot (a btrfs raid1), so a mirror's read split shows (issue 23)."""

import json

import pytest

from fslab import api
from fslab.core.record import RunRecord
from fslab.core.run_parts import WorkloadMetadata
from fslab.host.diskstats import split_rows
from fslab.parsers.fio_kinds import disk_util as from_fio
from fslab.plan.loading import load_campaign
from fslab.plan.schema import Overrides
from tests.conftest import FIXTURES, requires


def test_fio_disk_util_is_kept_as_fio_names_it():
    data = json.loads((FIXTURES / "fio" / "randrw16k-ext4-loop-disk-util.json").read_text())
    (loop,) = from_fio(data)
    assert loop["name"] == "loop0"
    assert loop["read_ios"] == 29681 and loop["write_ios"] == 29871
    assert set(loop) >= {"read_merges", "write_merges", "read_ticks", "write_ticks",
                         "in_queue", "util"}
    assert from_fio({"jobs": []}) == []


def test_the_split_sums_members_over_runs_and_skips_single_devices():
    def record(run_id, devices, status="ok"):
        return RunRecord(run_id=run_id, target="m", workload="w", status=status,
                         workload_metadata=WorkloadMetadata.from_json(
                             {"disk_stats": {"source": "s", "devices": devices}}))

    def member(number, reads):
        return {"member": number, "name": f"loop{number}", "read_ios": reads, "write_ios": 5}

    rows = split_rows([record("a", [member(1, 60), member(2, 20)]),
                       record("b", [member(1, 20), member(2, 0)]),
                       record("c", [member(1, 999), member(2, 1)], status="failed"),
                       record("d", [member(1, 7)])])
    assert [(r.member, r.read_ios, r.read_share) for r in rows] == [
        (1, 80, 0.8), (2, 20, 0.2)]


@pytest.mark.privileged
def test_a_mirror_shows_its_members_read_split(tmp_path, lab):
    requires("fio", "mkfs.btrfs")
    campaign = load_campaign(None, Overrides(
        fs=["btrfs-raid1"], preset="randrw16k", iterations=1, runtime="1",
        file_size="8M", image_size="512M", ceiling=False))
    out = tmp_path / "r"
    api.run(campaign, out=out, lab=lab)
    split = api.member_split(out)
    assert list(split["member"]) == [1, 2], split
    assert (split["read_ios"] > 0).all() and (split["write_ios"] > 0).all()
    assert split["read_share"].sum() == pytest.approx(1.0)
    # btrfs raid1 mirrors every write: both members see the same writes
    writes = list(split["write_ios"])
    assert abs(writes[0] - writes[1]) <= 0.05 * max(writes)
    assert "/sys/block" in split["source"].iloc[0]
