"""`fslab age`: provision a target, age it, probe its fragmentation, keep an image.

An aging run is a results directory like a campaign's (store.py), holding one run:

    OUT/format.json, campaign.toml (the target and the aging settings), environment.json
    OUT/runs/aging/         the engine's raw output: oplog.parquet (every successful
                            operation's time and latency), utilization.csv,
                            fragmentation.json (the probes), aging.json (its record),
                            and run.json with the rows the parse stage made of them
    OUT/metrics.parquet     those rows (parsers/aging_kind.py), OUT/stats/ their analysis
    OUT/image.img, image.json   the aged file system, to start campaigns from

so `fslab analyze`, `compare` and `report` serve it through the code every results
directory goes through.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from fslab.aging.config import OPS, AgingConfig
from fslab.aging.engine import Engine, run_fstrim
from fslab.aging.log import AgingLog, summary
from fslab.aging.room import make_room
from fslab.analysis.pipeline import analyze_results
from fslab.core.aging_record import AgingRecord, KeptImage, Parameters, Probe
from fslab.core.campaign_settings import CampaignSettings
from fslab.core.errors import UserError
from fslab.core.metrics import add_rows, empty_columns, rows
from fslab.core.record import RunRecord
from fslab.core.run_parts import TargetDescription, WorkloadMetadata
from fslab.host import system
from fslab.host.environment import capture
from fslab.host.lab import Lab
from fslab.parsers.aging_kind import (
    AGING_RECORD,
    OP_LOG,
    PROBES,
    UTILIZATION,
    AgingFigures,
    aging_summary,
    in_time_order,
)
from fslab.parsers.raw_files import DirFiles, RawOutputError
from fslab.parsers.registry import parse_run
from fslab.probes.freespace import of_mounted as free_space
from fslab.probes.usedspace import file_size_distribution, used_space_probe
from fslab.results.store import ResultsDir, write_atomic, write_json
from fslab.targets import Mounted, TargetSpec, images, make_target

AGING_RUN = "aging"  # the run id of an aging run, and its directory under runs/
WORKLOAD = "aging"
PRIMARY = "op_lat_p50_ns"  # what a comparison of aging runs is about, per operation


def run_dir(out: Path) -> Path:
    """Where an aging directory keeps its run's raw output."""
    return Path(out) / "runs" / AGING_RUN


@dataclass(frozen=True)
class Aged:
    """An aging just run, in memory: its record (aging.json), its probes
    (fragmentation.json) and its op log (oplog.parquet), what a campaign summarises
    without reading the files it wrote back."""

    record: AgingRecord
    probes: list[Probe]
    log: AgingLog

    def figures(self) -> AgingFigures:
        """The figures' summary (parsers/aging_kind.aging_summary), as the parse stage
        makes it of the files."""
        ops, latency_ns = in_time_order(
            np.asarray(self.log.t, dtype=np.float64),
            np.asarray([OPS[code] for code in self.log.op], dtype=object),
            np.asarray(self.log.latency_ns, dtype=np.int64))
        return aging_summary(self.record, self.probes, ops, latency_ns)


def age(spec: TargetSpec, config: AgingConfig, out: Path, lab: Lab | None = None,
        image: str = "sparse", confirmed_devices: frozenset[str] = frozenset(),
        force_device: bool = False, parameters: Parameters | None = None,
        room: int = 0) -> AgingRecord:
    """Age a fresh target into the results directory `out`; return the run's record
    (with `parameters`, every setting and its source: aging/levels.py, in aging.json;
    with `room`, random aged files deleted until that many bytes are free, before the
    image is kept: aging/room.py)."""
    if out.exists() and any(out.iterdir()):
        raise UserError(f"{out} already exists and is not empty: choose another --out")
    if image not in images.KINDS:
        raise UserError(f"--image must be {', '.join(images.KINDS[:-1])} or "
                        f"{images.KINDS[-1]}")
    config.validate()
    if spec.fs == "raw":
        raise UserError("fslab age ages a file system; raw is the bare loop device: choose "
                        "a file system (ext4, xfs, btrfs, zfs, ntfs, exfat, fat32, tmpfs, "
                        "dir:PATH)")
    if image == "metadata" and not images.has_metadata_dump(spec.fs):
        raise UserError(f"no metadata image tool for {spec.fs}; use --image sparse or zstd")
    target = make_target(spec, confirmed_devices=confirmed_devices, force_device=force_device)
    target.check()
    if image == "zstd":
        system.require_tool("zstd")
    lab = lab or Lab()
    results = ResultsDir.create(out)
    results.write_campaign(campaign_settings(out.name, spec, config, image))
    raw = run_dir(out)
    raw.mkdir(parents=True)
    session = lab.open_session()
    started = time.time()
    mounted = target.provision(session)
    try:
        record = age_mounted(mounted, config, raw, parameters).record
        if room and mounted.path is not None:
            record = replace(record, released=make_room(mounted.path, room, config.seed + 1,
                                                        record.root_capacity))
            write_json(raw / AGING_RECORD, record.to_json())
        if image != "none":
            record = replace(record, image=capture_image(session, mounted, out, image,
                                                         spec.fs))
            write_json(raw / AGING_RECORD, record.to_json())
    finally:
        target.teardown(session, mounted)
        session.close()
    write_environment(results, lab, spec.name, mounted.description, target.tools)
    save_aging_run(results, aging_run_record(out.name, spec, mounted.description, config,
                                             started))
    if record.image is not None:  # what the image is: to reproduce it and know its state
        write_json(out / "image.json", image_record(record, record.image, spec, out))

    analyze_results(results)
    return record


def age_mounted(mounted: Mounted, config: AgingConfig, raw: Path,
                parameters: Parameters | None = None) -> Aged:
    """Run the engine on a provisioned target, probing as it goes; keep its raw output
    (aging.json: the record, with `parameters` when given) and return it in memory."""
    assert mounted.path is not None
    root = mounted.path / "aged"
    snapshots: list[Probe] = []

    def probe(ops_done: int) -> Probe:
        snapshots.append(Probe(ops=ops_done, t=time.time(), free=free_space(mounted),
                               used=used_space_probe(root)))
        return snapshots[-1]

    engine = Engine(config, root, probe=probe, fstrim=run_fstrim(mounted.path))
    log = engine.run()
    probe(log.ops_done)
    record = replace(summary(log, config), target=mounted.description,
                     root_capacity=engine.root_capacity,
                     file_sizes=file_size_distribution(root),
                     last_fragmentation=snapshots[-1], parameters=parameters or None)
    write_raw(raw, log, record, snapshots)
    return Aged(record, snapshots, log)


def write_raw(raw: Path, log: AgingLog, record: AgingRecord, snapshots: list[Probe]) -> None:
    """The engine's raw output: oplog.parquet (t, op, latency_ns of every successful
    operation), utilization.csv, fragmentation.json and the record (aging.json)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({"t_s": pa.array(log.t, pa.float64()),
                      "op": pa.array([OPS[c] for c in log.op], pa.string()),
                      "latency_ns": pa.array(log.latency_ns, pa.int64())})
    pq.write_table(table, raw / OP_LOG)
    rows = ["t_s,ops,used_share"] + [f"{t:.3f},{n},{u:.5f}" for t, n, u in log.utilization]
    write_atomic(raw / UTILIZATION, "\n".join(rows) + "\n")
    write_json(raw / PROBES, snapshots)
    write_json(raw / AGING_RECORD, record.to_json())


def campaign_settings(name: str, spec: TargetSpec, config: AgingConfig,
                      image: str) -> CampaignSettings:
    """campaign.toml of an aging directory: what reproduces it (TOML has no null: unset
    settings are left out)."""
    target = {"name": spec.name, "fs": spec.fs, "image_size": spec.size,
              "mkfs_options": list(spec.mkfs_options), "mount_options": spec.mount_options,
              "device": spec.device, "path": spec.path, **_jsonable(spec.options)}
    target = {k: v for k, v in target.items() if v is not None}
    aging = {k: v for k, v in config.to_json().items() if v is not None}
    return CampaignSettings.from_table({
        "name": name, "kind": "aging", "iterations": 1, "fresh": "aging run",
        "seed": config.seed, "image": image, "primary": [PRIMARY], "target": [target],
        "aging": aging})


def write_environment(results: ResultsDir, lab: Lab, name: str,
                      description: TargetDescription, tools: tuple[str, ...]) -> None:
    """environment.json: the machine and tools, and the target as it was provisioned."""
    environment = capture(lab.root, tools)
    environment.targets = {name: description}
    results.write_environment(environment)


def aging_run_record(campaign: str, spec: TargetSpec, description: TargetDescription,
                     config: AgingConfig, started: float) -> RunRecord:
    """The record of the one run an aging directory holds (its rows come from parsing)."""
    return RunRecord(
        run_id=AGING_RUN, campaign=campaign, target=spec.name,
        fs=description.fs or spec.fs, fs_impl=description.fs_impl,
        workload=WORKLOAD, iteration=1, family=WORKLOAD, started=started,
        finished=time.time(), target_description=description,
        workload_metadata=WorkloadMetadata(primary_metric=PRIMARY,
                                           more={"seed": config.seed}))


def save_aging_run(results: ResultsDir, record: RunRecord) -> None:
    """Parse the run's raw output (the parse stage every run goes through), save its
    record with the rows, and write the metrics table."""
    columns = empty_columns()
    try:
        parsed = parse_run(DirFiles(results.run_dir(record.run_id)))
    except RawOutputError as exc:
        record.status, record.reason = "failed", str(exc)
    else:
        record.workload_metadata = record.workload_metadata.merged(parsed.metadata)
        add_rows(columns, record.identity(), parsed.measurements, os.uname().nodename)
    record.metrics = rows(columns)
    results.save_run(record)
    results.rebuild_metrics()


def image_record(record: AgingRecord, kept: KeptImage, spec: TargetSpec,
                 out: Path) -> dict[str, object]:
    """image.json: what the image is, how it was made, and how to use it as a target."""
    return {
        "image": kept.to_json(), "fs": spec.fs, "seed": record.config.get("seed"),
        "config": record.config, "ops_done": record.ops_done,
        "op_sequence_sha256": record.op_sequence_sha256,
        "made_on": record.target.to_json(),  # mkfs command and version, mount options
        "as_target": (f'[[target]]\nname = "{spec.fs}-aged"\nfs = "{spec.fs}"\n'
                      f'image = "{out.resolve() / kept.path}"\n'),
        "last_fragmentation": record.last_fragmentation,
        "file_sizes": record.file_sizes}


def capture_image(session: Any, mounted: Mounted, out: Path, kind: str,
                  fs: str) -> KeptImage:
    """Unmount, then keep the aged state (see fslab.targets.images for the kinds)."""
    for resource in reversed(list(mounted.resources)):
        if resource.kind == "mount":
            session.release(resource)
            mounted.resources.remove(resource)
    image = next((Path(r.path) for r in mounted.resources if r.kind == "file"), None)
    if image is None:
        return KeptImage("none", reason=f"{fs} has no image file to copy")
    device = mounted.description.device or str(image)
    return images.keep(image, device, fs, out, kind)


def _jsonable(value: Any) -> Any:
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    return value
