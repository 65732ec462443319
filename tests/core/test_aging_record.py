"""The aging record and its JSON form (aging.json): read back it is the record written,
its keys are the ones aging.json has always had, in their order, and an aging.json of
another fslab reads (missing keys get defaults, unknown ones are kept)."""

from __future__ import annotations

import json

import pytest

from fslab.core.aging_record import AgingRecord, KeptImage, Probe
from fslab.core.run_parts import TargetDescription
from tests.floats import same_bits

# aging.json's keys, in the order fslab writes them (the file users see: a contract)
KEYS = ["target", "config", "seed", "ops_done", "ops_attempted", "ops_succeeded",
        "ops_failed", "seconds", "ops_per_s", "redirected", "op_sequence_sha256",
        "stopped_by", "bytes_written", "succeeded", "failures", "deleted_for_space",
        "fstrims", "topped_up", "used_max", "used_end", "out_of_space", "root_capacity",
        "file_sizes", "last_fragmentation"]
PROBE = Probe(ops=4000, t=1764000000.125,
              free={"tool": "e2freefrag", "free_bytes": 1 << 27, "free_extents": 12,
                    "largest_bytes": 1 << 25, "histogram": [[4096, 8191, 3, 12288]],
                    "not_measurable": ""},
              used={"measurable": True, "files": 2, "layout_score": 0.8125,
                    "optimal_share": 0.5, "extents_per_file": [1, 3],
                    "extent_sizes": [4096, 8192, 4096, 4096]})


def full_record() -> AgingRecord:
    """A record with every part set, as `fslab age --room ... --image sparse` writes it."""
    return AgingRecord(
        target=TargetDescription(target="a", fs="ext4", device="/dev/loop7",
                                 image_size=256 << 20, details={"mkfs": "mkfs.ext4 -q"}),
        config={"seed": 5, "ops": 4000, "mix": {"create": 12, "write": 8.5},
                "utilization": 0.7, "stop_file": None},
        seed=5, ops_done=4000, ops_attempted=4000, ops_succeeded=3990, ops_failed=10,
        seconds=3.0 / 7.0, ops_per_s=3990 / (3.0 / 7.0), redirected={"read -> create": 4},
        op_sequence_sha256="ab" * 32, stopped_by="ops", bytes_written=123456789,
        succeeded={"create": 2000, "read": 1990}, failures={"write ENOSPC": 10},
        deleted_for_space=7, fstrims=2, topped_up={"files": 3, "bytes": 4096},
        used_max=0.7012345678901, used_end=0.69, out_of_space=10,
        root_capacity=250 << 20,
        file_sizes=[{"from_bytes": 0, "to_bytes": 0, "files": 1, "bytes": 0},
                    {"from_bytes": 4096, "to_bytes": 8191, "files": 9, "bytes": 40960}],
        last_fragmentation=PROBE,
        parameters={"utilization": {"value": 0.7, "source": "study", "where": "6.1"}},
        released={"files": 5, "bytes": 1 << 20, "used_after": 0.61},
        image=KeptImage("sparse", "image.img", "ext4", "full", 256 << 20, 90 << 20))


def written_and_read(record: AgingRecord) -> tuple[AgingRecord, str]:
    """The record through aging.json as results/store.write_json writes it."""
    text = json.dumps(record.to_json(), indent=2, default=str) + "\n"
    return AgingRecord.from_json(json.loads(text)), text


def test_a_record_written_and_read_back_is_the_same_record():
    record = full_record()
    again, text = written_and_read(record)
    assert same_bits(again, record)  # one record written and read: every bit the same
    assert written_and_read(again)[1] == text  # and written again, the same file
    assert list(json.loads(text)) == [*KEYS, "parameters", "released", "image"]


def test_its_keys_are_aging_jsons_and_the_optional_parts_appear_when_set():
    plain = AgingRecord(seconds=1.0, stopped_by="ops", root_capacity=None)
    data = plain.to_json()
    assert list(data) == KEYS[:-1]  # no probe, no parameters, room or image
    assert data["root_capacity"] is None and data["used_max"] is None  # null, as written
    released = AgingRecord(seconds=1.0, released={}).to_json()
    assert released["released"] == {}  # room asked, nothing had to go: said so
    none = KeptImage("none", reason="tmpfs has no image file to copy")
    assert AgingRecord(image=none).to_json()["image"] == {
        "kind": "none", "reason": "tmpfs has no image file to copy"}
    assert KeptImage.from_json(none.to_json()) == none


def test_another_fslabs_aging_json_reads_and_keeps_what_it_does_not_know():
    older = {"target": {"fs": "xfs"}, "seconds": 2, "ops_attempted": 10,
             "ops_succeeded": 9, "stopped_by": "ops", "format": 2,
             "latency_us": {"read": [1, 2]}, "used_max": None}
    record = AgingRecord.from_json(older)
    assert record.target.fs == "xfs" and record.seconds == 2.0  # exact: a literal
    assert record.used_max is None and record.failures == {} and record.image is None
    assert record.extra == {"format": 2, "latency_us": {"read": [1, 2]}}
    assert record.to_json()["latency_us"] == {"read": [1, 2]}
    with pytest.raises(KeyError, match="seconds"):
        AgingRecord.from_json({"ops_attempted": 1, "ops_succeeded": 1, "stopped_by": "x"})
    with pytest.raises(ValueError):
        AgingRecord.from_json([])


def test_the_utilisation_is_read_off_its_config():
    assert full_record().utilization == pytest.approx(0.7)
    assert AgingRecord().utilization is None
