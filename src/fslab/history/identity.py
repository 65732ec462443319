"""What a results directory is, for the history: its campaign id, labels and the
signatures that say which of its cells may be compared with which of another's.

The id is a digest of the files that describe the campaign (campaign.toml,
environment.json: the resolved plan and the machine at the time), so the same directory
copied or moved elsewhere is the same campaign, and two runs of one campaign file are
two campaigns (their environments were captured at different times).
"""

from __future__ import annotations

import hashlib
import json
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fslab.core.environment_record import Environment

# Files whose bytes name a campaign, in order; an import without them is named by its rows.
IDENTITY_FILES = ("campaign.toml", "environment.json")
# A target option that is not configuration but the thing under study: the simulator's
# `scale` stands for "the kernel made it slower", so it never splits a series.
NOT_CONFIGURATION = frozenset({"name", "scale"})
# Campaign settings that change what a workload measures (not how often or in what order).
MEASURING_SETTINGS = ("runtime", "file_size", "scale")
# What makes sittings sittings of one campaign: the same targets, workloads and settings
# of what is measured (not the seed, the iteration count, the looks or the labels).
PLAN_KEYS = ("name", "runtime", "file_size", "image_size", "fresh", "scale", "primary",
             "sweep", "cells", "target", "workload")


@dataclass(frozen=True)
class Identity:
    """One results directory as the catalogue records it."""

    campaign_id: str
    name: str
    started: str  # ISO time the environment was captured ('' when unknown)
    machine: str  # host name
    labels: dict[str, str] = field(default_factory=dict)  # machine facts, tools, user labels
    workload_signatures: dict[str, str] = field(default_factory=dict)  # workload -> digest
    target_signatures: dict[str, str] = field(default_factory=dict)  # target -> digest
    # A results directory is one sitting (its id is the campaign id); the host it sat on
    # (a simulated campaign's simulated host); the plan it shares with the other sittings
    # of its campaign (a digest of campaign.toml without its seed and iterations: PLAN_KEYS).
    sitting: str = ""
    host: str = ""
    plan: str = ""


def campaign_id(directory: Path) -> str:
    """A digest of the files that describe the campaign (16 hex digits)."""
    digest = hashlib.sha256()
    found = False
    for name in IDENTITY_FILES:
        path = directory / name
        if path.exists():
            digest.update(name.encode() + b"\0" + path.read_bytes())
            found = True
    if not found:
        digest.update((directory / "metrics.parquet").read_bytes())
    return digest.hexdigest()[:16]


def identify(directory: Path, extra_labels: dict[str, str] | None = None) -> Identity:
    """The identity of a results directory: id, machine labels, the user's labels
    (campaign.toml `labels`, then `extra_labels`, which win) and cell signatures."""
    environment = Environment.from_json(_read_json(directory / "environment.json"))
    campaign = _read_toml(directory / "campaign.toml")
    labels = {
        "host": environment.host, "cpu_model": environment.cpu_model,
        "disk_model": environment.disk_model, "kernel": environment.kernel,
        "fslab": environment.fslab,
        **{f"tool.{name}": version for name, version in sorted(environment.tools.items())},
    }
    labels.update({str(k): str(v) for k, v in (campaign.get("labels") or {}).items()})
    labels.update(extra_labels or {})
    found = campaign_id(directory)
    return Identity(
        campaign_id=found,
        name=str(campaign.get("name", directory.name)),
        started=environment.captured_at,
        machine=labels["host"],
        labels={k: v for k, v in labels.items() if v},
        workload_signatures=workload_signatures(campaign, _jobs_of(directory)),
        target_signatures=target_signatures(campaign),
        sitting=found,
        host=environment.sitting.host if environment.sitting and environment.sitting.host
        else labels["host"],
        plan=plan_signature(campaign) if campaign else "",
    )


def plan_signature(campaign: dict[str, Any]) -> str:
    """A digest of what a campaign measures (PLAN_KEYS): equal for its sittings, on any
    host (the simulator's `host` option names the machine, not the plan)."""
    plan = {key: campaign.get(key) for key in PLAN_KEYS}
    plan["workload"] = [{**{k: v for k, v in entry.items() if k != "study"},
                         "options": {k: v for k, v in (entry.get("options") or {})
                                     .items() if k != "host"}}
                        for entry in campaign.get("workload") or []]
    return digest(plan)


def digest(data: Any) -> str:
    """A short stable digest of JSON-able data (keys sorted)."""
    text = json.dumps(data, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def workload_signatures(campaign: dict[str, Any], jobs: Sequence[str] = ()
                        ) -> dict[str, str]:
    """Workload name -> digest of what defines it: its [[workload]] entry and the
    campaign settings that change what it measures. '*' holds the digest for workloads
    no entry names (an import). `jobs`: the jobs the directory measured, for a campaign
    written before entries listed theirs (its one preset entry runs them)."""
    settings = {key: campaign.get(key) for key in MEASURING_SETTINGS}
    found: dict[str, str] = {"*": digest(settings)}
    entries = list(campaign.get("workload") or [])
    unlisted = [e for e in entries if not _workload_names(e)]
    claimed = {n for e in entries for n in _workload_names(e)}
    for entry in entries:
        # derived from the preset (its jobs, its study): not what defines the workload
        definition = {k: v for k, v in entry.items() if k not in ("jobs", "study")}
        names = _workload_names(entry) or (  # an older campaign's one preset entry
            [j for j in jobs if j not in claimed] if len(unlisted) == 1 else [])
        for name in names:
            found[name] = digest({"entry": definition, **settings})
    return found


def target_signatures(campaign: dict[str, Any]) -> dict[str, str]:
    """Target name -> digest of its configuration (file system, mkfs and mount options,
    image size, options), leaving out what is not configuration (NOT_CONFIGURATION)."""
    return {str(entry.get("name")): digest({k: v for k, v in entry.items()
                                            if k not in NOT_CONFIGURATION})
            for entry in campaign.get("target") or []}


def _workload_names(entry: dict[str, Any]) -> list[str]:
    """The jobs an entry runs, as the resolved campaign lists them (`jobs`; `only`
    before that); a preset's entry from before either: none (they fall under "*")."""
    for key in ("jobs", "only"):
        if entry.get(key):
            return [str(name) for name in entry[key]]
    if entry.get("preset"):
        return []
    return [str(entry.get("name") or "job")]


def _jobs_of(directory: Path) -> list[str]:
    """The jobs a results directory measured (its analysis' runs table), [] when none."""
    runs = directory / "stats" / "runs.parquet"
    if not runs.exists():
        return []
    import pyarrow.parquet as pq  # one column read: a DuckDB connection alone took 33 ms

    column = "job" if "job" in pq.read_schema(runs).names else "workload"
    values = pq.read_table(runs, columns=[column]).column(0).unique().to_pylist()
    return [str(value) for value in values if value is not None]


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError):
        return {}
