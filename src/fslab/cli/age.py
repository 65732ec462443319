"""`fslab age`: age a fresh file system like years of use, then say what it did."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from fslab.cli.app import LabOption, app, console, escape
from fslab.core.aging_record import AgingRecord, KeptImage
from fslab.core.units import format_bytes
from fslab.report.terminal import summary_tables


@app.command()
def age(
    fs: Annotated[str, typer.Option("--fs", help="File system to age (ext4, xfs, btrfs, ...).")],
    out: Annotated[Path, typer.Option(help="Directory for the aging log, probes and image.")],
    size: Annotated[str, typer.Option(help="Image size.")] = "2G",
    utilization: Annotated[float | None, typer.Option(
        help="Keep used space at or below this share, e.g. 0.8.")] = None,
    ops: Annotated[int | None, typer.Option(help="Stop after this many operations.")] = None,
    duration: Annotated[str | None, typer.Option(help="Stop after this long, e.g. 2h.")] = None,
    bytes_limit: Annotated[str | None, typer.Option(
        "--bytes", help="Stop after writing this much, e.g. 10G.")] = None,
    seed: Annotated[int, typer.Option(help="Seed of the operation sequence.")] = 1,
    config: Annotated[Path | None, typer.Option(
        help="Aging configuration (TOML: mix, file choice, sizes, directories...).")] = None,
    mix: Annotated[Path | None, typer.Option(help="Operation mix as a CSV of op,share.")] = None,
    stop_file: Annotated[Path | None, typer.Option(help="Stop when this file appears.")] = None,
    pause_file: Annotated[Path | None, typer.Option(
        help="Pause while this file exists.")] = None,
    fstrim_every: Annotated[int | None, typer.Option(help="fstrim every N operations.")] = None,
    fstrim_seconds: Annotated[float | None, typer.Option(
        help="fstrim every N seconds.")] = None,
    probe_every: Annotated[int | None, typer.Option(
        help="Fragmentation probe every N operations (and always at the end).")] = None,
    image: Annotated[str | None, typer.Option(
        help="Keep the aged state: sparse (full copy; the default), zstd (the same, "
             "compressed), metadata (the fs's metadata dump: layout without contents; "
             "--as-published's), or none.")
    ] = None,
    as_published: Annotated[bool, typer.Option(
        "--as-published", help="The aging thesis's own aging (Petrovič 2017): fs-drift's "
        "operations, a Gaussian file choice with a moving centre, log-normal sizes, fstrim "
        "at each probe, 80 % utilisation (--utilization 0.99: its other level); every "
        "parameter and its source in aging.json.")] = False,
    recipe: Annotated[str | None, typer.Option(
        help="mix (fs-drift-like operations), interleaved (a tree grown piece by piece in "
             "shuffled rounds; the default) or versioned (git-pull-like versions).")] = None,
    written: Annotated[str | None, typer.Option(
        help="Stop after writing this multiple of the capacity, e.g. 20x.")] = None,
    layout_target: Annotated[float | None, typer.Option(
        "--layout-target", help="Stop when the layout score falls to this.")] = None,
    plateau: Annotated[float | None, typer.Option(
        help="Stop when layout score and free extents change less than this share over "
             "the last probes, e.g. 0.01.")] = None,
    mkfs_options: Annotated[str | None, typer.Option(
        "--mkfs-options", help="Extra mkfs options, as for a [[target]].")] = None,
    mount_options: Annotated[str | None, typer.Option(
        "--mount-options", help="Mount options, as for a [[target]].")] = None,
    direct_io: Annotated[bool | None, typer.Option(
        "--direct-io/--no-direct-io", help="Loop device direct I/O (default on).")] = None,
    device: Annotated[str | None, typer.Option(
        help="Age a real block device instead of an image (with --confirm-device).")] = None,
    confirm_device: Annotated[str | None, typer.Option(
        "--confirm-device", help="Repeat the device to confirm it may be formatted.")] = None,
    force_device: Annotated[bool, typer.Option(
        "--force-device", help="Format a device that carries a signature.")] = False,
    lab: LabOption = None,
) -> None:
    """Age a fresh file system like years of use; log, probe fragmentation, keep an image."""
    from fslab import api

    request = api.aging_request(api.AgingFlags(
        seed=seed, config=config, mix=mix, recipe=recipe, ops=ops, duration=duration,
        bytes_limit=bytes_limit, written=written, layout_target=layout_target,
        plateau=plateau, utilization=utilization, stop_file=stop_file, pause_file=pause_file,
        fstrim_every=fstrim_every, fstrim_seconds=fstrim_seconds, probe_every=probe_every,
        as_published=as_published), fs, size, mkfs_options, mount_options, direct_io, device,
        image)
    devices = frozenset([confirm_device]) if confirm_device else frozenset()
    record = api.age(request.spec, request.config, out, lab=api.make_lab(lab),
                     image=request.image, confirmed_devices=devices,
                     force_device=force_device, parameters=request.parameters)
    if request.parameters:
        console.print(f"As published: the aging thesis's aging at "
                      f"{request.config.utilization:.0%} utilisation; every parameter and its "
                      f"source in {out}/runs/aging/aging.json (parameters)")
        for line in request.cannot:
            console.print(f"  not here: {escape(line)}")
    _aged(fs, record, out)


def _aged(fs: str, record: AgingRecord, out: Path) -> None:
    """What the aging did, its summary table and what it wrote."""
    from fslab import api

    console.print(
        f"Aged {fs}: {record.ops_attempted} operations attempted, "
        f"{record.ops_succeeded} succeeded, {record.ops_failed} failed, in "
        f"{record.seconds:.1f} s ({record.ops_per_s:.0f} successful ops/s, "
        f"{format_bytes(record.bytes_written)} written; stopped by "
        f"{record.stopped_by}); op sequence {record.op_sequence_sha256[:16]}…")
    for what, count in record.failures.items():
        console.print(f"  failed: {escape(what)} × {count}")
    done = api.stats_of(out)
    if done is not None:
        console.print(summary_tables(done.summary))
    kept = record.image or KeptImage("none")
    console.print(f"Wrote {out}: runs/aging/ (oplog.parquet, utilization.csv, "
                  f"fragmentation.json, aging.json), metrics.parquet, stats/"
                  + (f", {kept.path}" if kept.path else "")
                  + f"; fslab report {out} for the charts")
    if kept.reason:
        console.print(f"No image kept: {escape(kept.reason)}")
