"""`fslab age`: provision a target, age it, probe its fragmentation, keep an image."""

from __future__ import annotations

import json
import os
import stat
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from fslab import system
from fslab.aging import dirformat, images
from fslab.aging.config import OPS, AgingConfig
from fslab.aging.engine import Engine, run_fstrim, summary
from fslab.aging.fiemap import NotMeasurable, extents, file_layout, layout_score
from fslab.aging.freespace import probe as free_space
from fslab.errors import UserError
from fslab.lab import Lab
from fslab.store import write_atomic, write_json
from fslab.targets import Mounted, TargetSpec, make_target


def used_space_probe(root: Path) -> dict[str, Any]:
    """Per-file FIEMAP extent counts, extent sizes and the layout score, or why not."""
    layouts, sizes, counts = [], [], []
    try:
        for path in root.rglob("f*"):
            if not path.is_file():
                continue
            records = extents(path)
            if not records:
                continue
            layouts.append(file_layout(records))
            counts.append(len(records))
            sizes += [e.length for e in records]
    except NotMeasurable as exc:
        return {"measurable": False, "reason": f"not measurable here: FIEMAP {exc}"}
    optimal = sum(1 for f in layouts if f.contiguous_pairs == max(0, f.blocks - 1))
    return {"measurable": True, "files": len(layouts), "layout_score": layout_score(layouts),
            "optimal_share": optimal / len(layouts) if layouts else float("nan"),
            "extents_per_file": counts, "extent_sizes": sizes}


def file_size_distribution(root: Path) -> list[dict[str, int]]:
    """The aged files' sizes in power-of-two buckets (from, to, files, bytes): what a
    study of aging reports beside fragmentation (seed 004). Empty files count in 0–0."""
    from fslab.aging.freespace import histogram_of

    sizes = []
    for directory, _, names in os.walk(root):
        for name in names:
            info = os.lstat(os.path.join(directory, name))
            if stat.S_ISREG(info.st_mode):
                sizes.append(info.st_size)
    empty = [{"from_bytes": 0, "to_bytes": 0, "files": sizes.count(0), "bytes": 0}]
    return empty * (0 in sizes) + [
        {"from_bytes": low, "to_bytes": high, "files": count, "bytes": total}
        for low, high, count, total in histogram_of([size for size in sizes if size > 0])]


def age(spec: TargetSpec, config: AgingConfig, out: Path, lab: Lab | None = None,
        image: str = "sparse", confirmed_devices: frozenset[str] = frozenset(),
        force_device: bool = False) -> dict[str, Any]:
    """Age a fresh target into `out`: logs, fragmentation over time, an image."""
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
    out.mkdir(parents=True, exist_ok=True)
    lab = lab or Lab()
    session = lab.open_session()
    mounted = target.provision(session)
    snapshots: list[dict[str, Any]] = []
    try:
        assert mounted.path is not None
        root = mounted.path / "aged"
        device = str(mounted.description.get("device", ""))
        pool = str(mounted.description.get("pool", ""))
        image_dir = next((str(Path(r.path).parent) for r in mounted.resources
                       if r.kind == "file"), "")

        def probe(ops_done: int) -> dict[str, Any]:
            os.sync()
            free = free_space(mounted.description.get("fs", spec.fs), device,
                              str(mounted.path), pool, image_dir)
            used = used_space_probe(root)
            snapshots.append({"ops": ops_done, "t": time.time(), "free": asdict(free),
                              "used": used})
            return snapshots[-1]

        engine = Engine(config, root, probe=probe, fstrim=run_fstrim(mounted.path))
        log = engine.run()
        probe(log.ops_done)
        record = {**dirformat.AGING.stamp(), "target": mounted.description,
                  "config": _jsonable(asdict(config)), **summary(log, config),
                  "file_sizes": file_size_distribution(root)}
        write_outputs(out, log, record, snapshots)
        if image != "none":
            record["image"] = capture_image(session, mounted, out, image, spec.fs)
            write_json(out / "aging.json", record)
            # What the image is: enough to reproduce it and to know its state.
            write_json(out / "image.json", image_record(record, spec, snapshots, out))
    finally:
        target.teardown(session, mounted)
        session.close()
    return record


def image_record(record: dict[str, Any], spec: TargetSpec,
                 snapshots: list[dict[str, Any]], out: Path) -> dict[str, Any]:
    """image.json: what the image is, how it was made, and how to use it as a target."""
    kept = record["image"]
    return {
        "image": kept, "fs": spec.fs, "seed": record["config"].get("seed"),
        "config": record["config"], "ops_done": record["ops_done"],
        "op_sequence_sha256": record["op_sequence_sha256"],
        "made_on": record.get("target", {}),  # mkfs command and version, mount options
        "as_target": (f'[[target]]\nname = "{spec.fs}-aged"\nfs = "{spec.fs}"\n'
                      f'image = "{out.resolve() / kept.get("path", "")}"\n'),
        "last_fragmentation": snapshots[-1] if snapshots else None,
        "file_sizes": record.get("file_sizes", [])}


def write_outputs(out: Path, log: Any, record: dict[str, Any],
                  snapshots: list[dict[str, Any]]) -> None:
    """aging.json, oplog.parquet (t, op, latency_ns), latency.csv (per operation: mean
    and median with 95 % intervals), utilization.csv, fragmentation.json."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from fslab.aging.latency import latency_table

    table = pa.table({"t_s": pa.array(log.t, pa.float64()),
                      "op": pa.array([OPS[c] for c in log.op], pa.string()),
                      "latency_ns": pa.array(log.latency_ns, pa.int64())})
    pq.write_table(table, out / "oplog.parquet")
    latency = latency_table(table.to_pandas())
    write_atomic(out / "latency.csv", latency.to_csv(index=False, float_format="%.6g"))
    record["latency_us"] = json.loads(latency.to_json(orient="records"))  # NaN -> null
    rows = ["t_s,ops,used_share"] + [f"{t:.3f},{n},{u:.5f}" for t, n, u in log.utilization]
    write_atomic(out / "utilization.csv", "\n".join(rows) + "\n")
    write_json(out / "fragmentation.json", snapshots)
    write_json(out / "aging.json", record)


def capture_image(session: Any, mounted: Mounted, out: Path, kind: str,
                  fs: str) -> dict[str, Any]:
    """Unmount, then keep the aged state (see fslab.aging.images for the kinds)."""
    for resource in reversed(list(mounted.resources)):
        if resource.kind == "mount":
            session.release(resource)
            mounted.resources.remove(resource)
    image = next((Path(r.path) for r in mounted.resources if r.kind == "file"), None)
    if image is None:
        return {"kind": "none", "reason": f"{fs} has no image file to copy"}
    device = str(mounted.description.get("device", image))
    return images.keep(image, device, fs, out, kind)


def _jsonable(value: Any) -> Any:
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    return value
