"""The run record (run.json): read back as written, older and damaged records handled."""

import pytest

from fslab.core.record import RunRecord
from fslab.core.run_parts import Busy, TargetDescription, Witness, WorkloadMetadata


def test_a_record_reads_back_as_written_and_keeps_keys_it_does_not_know():
    record = RunRecord(run_id="i001-ext4-randread", campaign="c", target="ext4", fs="ext4",
                       iteration=1, workload="randread", status="failed", reason="ENOSPC",
                       started=1.5, caches_dropped=True,
                       workload_metadata=WorkloadMetadata.from_json({"io": {"direct": True}}),
                       metrics=[{"metric": "iops", "value": 1.0}])
    data = record.to_json() | {"added_by_a_newer_fslab": [1, 2]}
    again = RunRecord.from_json(data)
    assert again.to_json() == data
    assert again.extra == {"added_by_a_newer_fslab": [1, 2]}
    assert "source" not in record.to_json()  # import-only keys stay out of a run's record


def test_failure_kind_words_and_steps_read_back_and_a_step_that_is_not_seconds_goes():
    record = RunRecord(run_id="r", status="failed", reason="provisioning ext4 failed: ...",
                       failure="refused", tool_said="mount exited with 32: kernel: no",
                       steps={"mkfs": 0.25, "mount": 0.5, "measure": 2.0})
    again = RunRecord.from_json(record.to_json())
    assert (again.failure, again.tool_said) == ("refused", "mount exited with 32: kernel: no")
    assert again.machine_s == 2.75 and again.measured_s == 2.0
    damaged = RunRecord.from_json({"run_id": "r", "steps": {"mkfs": "slow", "ramp": True,
                                                            "measure": 1}})
    assert damaged.steps == {"measure": 1.0}


def test_an_older_record_gets_defaults_and_identity_falls_back_to_the_description():
    old = RunRecord.from_json({"run_id": "r1", "iteration": 2, "started": 3,
                               "target_description": {"fs": "xfs", "fs_impl": "kernel"},
                               "metrics": [{"value": 1}, "damaged row"]})
    assert (old.status, old.reason, old.caches_dropped, old.started) == ("ok", "", False, 3.0)
    assert (old.failure, old.tool_said, old.steps, old.machine_s) == ("", "", {}, 0.0)
    assert old.identity().fs == "xfs" and old.identity().fs_impl == "kernel"
    assert old.metrics == [{"value": 1}]  # the damaged row goes, the run stays


@pytest.mark.parametrize("data", [
    [], {"status": "ok"}, {"run_id": 7}, {"run_id": "r", "iteration": "2"},
    {"run_id": "r", "caches_dropped": "yes"}, {"run_id": "r", "iteration": True},
    {"run_id": "r", "metrics": {"a": 1}},
])
def test_a_record_of_the_wrong_shape_is_a_value_error(data):
    with pytest.raises(ValueError):
        RunRecord.from_json(data)


def test_the_parts_of_a_record_are_typed_and_an_older_records_read():
    """run.json's witness, target description and workload metadata read back typed, as
    written; a witness of a record before the busiest processes were a record of their
    own ('name 41 %') reads too, and one written again is data, never text to parse."""
    old = RunRecord.from_json({
        "run_id": "r", "witness": {"seconds": 2.0, "others_cpu_pct": 41.0,
                                   "busiest": ["stress-ng 41 %"], "disturbed": True,
                                   "reasons": ["other processes used 41 % of a CPU"],
                                   "psi_cpu_pct": None, "rerun_of": {"seconds": 1.0,
                                                                     "unsteady": "stepped"}},
        "target_description": {"target": "m", "fs": "ext4", "devices": ["/dev/loop3",
                                                                       "/dev/loop4"],
                               "image_size": 2**30, "mkfs_command": ["mkfs.ext4"]},
        "workload_metadata": {"primary_metric": {"hpc-read": "bw_bytes"},
                              "steady": {"steady": False, "reason": "stepped 0.5×"},
                              "slices": {"runs": 3}, "io": {"direct": False}}})
    assert old.witness.busiest == [Busy("stress-ng", 41.0)] and old.disturbed
    assert old.witness.rerun_of is not None and old.witness.rerun_of.unsteady == "stepped"
    assert old.witness.psi_cpu_pct != old.witness.psi_cpu_pct  # NaN, written as null
    assert old.target_description.devices == ("/dev/loop3", "/dev/loop4")
    assert old.target_description.details["mkfs_command"] == ["mkfs.ext4"]
    said = old.workload_metadata
    assert said.section_primaries == {"hpc-read": "bw_bytes"} and said.sliced
    assert (old.steady, old.unsteady_because) == (False, "stepped 0.5×")
    again = RunRecord.from_json(old.to_json())
    assert again.to_json() == old.to_json()
    assert again.to_json()["witness"]["busiest"] == [{"name": "stress-ng", "cpu_pct": 41.0}]
    assert TargetDescription.from_json(old.to_json()["target_description"]) == \
        old.target_description
    assert Witness().to_json() == {} and WorkloadMetadata().to_json() == {}


@pytest.mark.parametrize("fs", ["null", "tmpfs", "raw", "ext4", "ntfs", "btrfs-raid1", "zfs"])
def test_each_target_describes_itself_as_the_record_and_it_reads_back(fs, tmp_path):
    """A target builds its TargetDescription itself (fields typed, its own facts in
    `details`), and the record's JSON form reads back to the same record."""
    import inspect

    from fslab.targets import TargetSpec, make_target

    spec = TargetSpec(name=f"my-{fs}", fs=fs, size=512 * 1024**2,
                      options={"scale": 1.5} if fs == "null" else {})
    target = make_target(spec)
    described = target.describe()
    assert (described.target, described.fs.split("-")[0]) == (f"my-{fs}", fs.split("-")[0])
    assert described.fs_impl and described.details
    assert "from_json" not in inspect.getsource(type(target).describe)
    assert TargetDescription.from_json(described.to_json()) == described
