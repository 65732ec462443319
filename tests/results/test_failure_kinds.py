"""Results of format 6 carry a failed run's kind; older directories get it read off the
reason once, when loaded (results/legacy_failures.py), and nowhere else."""

import json

from fslab.core.record import RunRecord
from fslab.results.format_history import FORMAT
from fslab.results.store import FAILURE_KINDS, ResultsDir

# Reasons as fslab wrote them before kinds, and the kind each must come back as.
OLD = {
    "refused": ("failed", "provisioning ext4 mount_options=data=journal,delalloc failed: "
                "mount exited with 32: mount: /x: wrong fs type. kernel: EXT4-fs (loop3): "
                "can't mount with both data=journal and delalloc"),
    "provision": ("failed", "provisioning zfs failed: zfs-fuse exited with 1: no /dev/fuse"),
    "no_space": ("failed", "needs 512 MiB but ext4 has 100 MiB free"),
    "no_space_fio": ("failed", "fio exited 1: fio: io_u error on file /m/f.0.0: No space "
                               "left on device: write offset=1, buflen=4096"),
    "timeout": ("failed", "fio (slice 2): the watchdog ended fio after 33 s (its runtime)"),
    "error": ("failed", "FileNotFoundError: [Errno 2] No such file or directory: 'x'"),
    "tool": ("failed", "fio (slice 0): fio: pid=4, err=5/file:io_u.c:1889, error=I/O error"),
    "unsupported": ("unsupported", "bonnie++ needs a file system"),
    "ok": ("ok", ""),
}


def old_results(path, version):
    results = ResultsDir.create(path)
    (path / FORMAT.marker).write_text(json.dumps({"format": version}))
    for name, (status, reason) in OLD.items():
        results.run_dir(name).mkdir(parents=True)
        results.save_run(RunRecord(run_id=name, status=status, reason=reason))
    return ResultsDir.open(path)


def test_an_older_directory_gets_each_runs_kind_and_a_refusing_tools_words(tmp_path):
    results = old_results(tmp_path / "old", FAILURE_KINDS - 1)
    runs = results.load_runs().set_index("run_id")
    want = {name: name.removesuffix("_fio") if name != "ok" else "" for name in OLD}
    assert runs["failure"].to_dict() == want
    assert runs.loc["refused", "tool_said"].startswith("mount exited with 32: ")
    assert runs.loc["refused", "tool_said"].endswith(
        "can't mount with both data=journal and delalloc")
    assert set(runs.drop(index="refused")["tool_said"]) == {""}
    assert results.run_record("timeout").failure == "timeout"  # one run read alone, too


def test_a_current_directory_is_read_as_written_never_from_its_reasons(tmp_path):
    results = old_results(tmp_path / "new", FAILURE_KINDS)
    runs = results.load_runs().set_index("run_id")
    assert set(runs["failure"]) == {""}  # these records said no kind: none is made up
    assert {"machine_s", "measured_s", "wall_s"} <= set(runs.columns)
