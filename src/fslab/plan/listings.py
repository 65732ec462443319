"""Terminal listings of what fslab offers: target kinds and presets (rich renderables)."""

from __future__ import annotations

from rich.console import Group
from rich.markup import escape
from rich.table import Table

from fslab.host import system
from fslab.targets import availability_table, device_kinds
from fslab.workloads.aging_levels import LEVELS
from fslab.workloads.provenance import STUDIES
from fslab.workloads.suites import suites


def targets_table() -> Group:
    """Every kind of target and whether it can run on this machine (and why not), then
    where a kernel file system is made: on an image in the lab, or on a real device."""
    table = Table(title=escape("Targets (names for --fs and [[target]] fs = ...)"),
                  title_justify="left")
    for column in ("name", "what", "here"):
        table.add_column(column)
    root_note = "" if system.is_root() else " (needs root)"
    for name, text, reason in availability_table():
        here = f"[red]no: {escape(reason)}[/red]" if reason else "[green]yes[/green]"
        if not reason and name != "dir":
            here += root_note
        table.add_row(name, escape(text), here)
    return Group(table, places_table(system.is_root()))


def places_table(root: bool) -> Table:
    """Where a kernel file system is made, what that measures and what is formatted: the
    device kind is a target option, not a name for --fs, so it is listed here."""
    table = Table(title=escape(f"Where {', '.join(device_kinds())} are made (and what "
                               "that measures)"), title_justify="left")
    for column in ("on", "how", "measures", "formats", "here"):
        table.add_column(column)
    table.add_row(
        "image", escape("default: a sparse image file in the lab directory (--lab DIR; "
                        "$FSLAB_LAB, else /var/lib/fslab), through a loop device with "
                        "direct I/O"),
        "the disk that holds the lab, under a file of its file system",
        "only the images fslab creates", "[green]yes[/green]" + ("" if root else
                                                                   " (needs root)"))
    table.add_row(
        "device", escape('[[target]] device = "/dev/sdX", run with --confirm-device '
                         "/dev/sdX (one device per target)"),
        "the device itself, nothing between",
        escape("the device: all its data is lost; refused when it or a partition is "
               "mounted, swap, held by md/dm, or carries a signature (--force-device)"),
        "[green]yes[/green]" if root else "[red]no: needs root[/red]")
    return table


def presets_tables() -> Group:
    """One table per preset: each job's parameters, each with where it comes from, and the
    study's own scale (`--as-published`)."""
    tables = []
    for suite in suites().values():
        published = suite.published
        scale = ("; --as-published: " + ", ".join(
            f"{name} {_value(param.value)} [{param.source.label()}]"
            for name, param in published.params().items())) if published else ""
        table = Table(title=f"{suite.name}: {suite.description}", title_justify="left",
                      caption=escape(f"source: {suite.source}; options: {suite.options}"
                                     + scale), caption_justify="left")
        table.add_column("workload")
        table.add_column("parameters")
        for name, parameters in suite.parameters.items():
            table.add_row(name, escape("; ".join(
                f"{key}={_value(param.value)} [{param.source.label()}]"
                for key, param in parameters.items())))
        tables.append(table)

    for level in LEVELS.values():  # a campaign's `age = [...]`; fslab age --as-published
        table = Table(title=escape(f"age level {level.name}: {level.description}"),
                      title_justify="left", caption=escape(
                          "; ".join(f"not here: {line}" for line in level.cannot)),
                      caption_justify="left")
        table.add_column("setting")
        table.add_column(escape("value [source]"))
        for key, param in level.settings.items():
            table.add_row(key, escape(f"{_value(param.value)} [{param.source.label()}]"))
        tables.append(table)
    return Group(*tables)


def presets_json() -> str:
    """Every preset, every parameter with its source, and its published scale, as JSON."""
    import json

    return json.dumps({
        "studies": {key: {"title": s.title, "by": s.by} for key, s in STUDIES.items()},
        "presets": {name: suite.to_json() for name, suite in suites().items()},
        "age_levels": {name: level.to_json() for name, level in LEVELS.items()},
    }, indent=1)


def _value(value: object) -> str:
    return ",".join(map(str, value)) if isinstance(value, tuple) else str(value)
