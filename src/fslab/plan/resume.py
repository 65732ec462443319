"""`--resume` the way people resume: re-run the command they typed, with --resume added.

The saved campaign (DIR/campaign.toml) is what continues. Options given with --resume
are checked against it: equal ones are fine (the original command line, as typed, is
accepted), a larger --iterations extends the campaign, and only options that would
change what was measured are refused, each named with both values.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from fslab.core.errors import UserError
from fslab.plan.loading import load_campaign
from fslab.plan.order import make_plan
from fslab.plan.schema import Campaign, Overrides
from fslab.results.store import ResultsDir


def resume_campaign(out: Path, campaign_file: Path | None = None,
                    overrides: Overrides | None = None) -> Campaign:
    """The saved campaign of `out`, checked against the options given with --resume."""
    results = ResultsDir.open(out)
    if not results.campaign_path().exists():
        raise UserError(f"{out} has no campaign.toml to resume")
    saved = load_campaign(results.campaign_path(), Overrides(out=str(out)))
    given = overrides or Overrides()
    if campaign_file is None and not _any_given(given):
        return saved
    # The campaign the user's options describe, with the saved seed where none is given
    # (an unseeded campaign draws one: that is not a conflict).
    seed = given.seed if given.seed is not None else saved.seed
    wanted = load_campaign(campaign_file, dataclasses.replace(given, seed=seed,
                                                              out=str(out)))
    conflicts = []
    for key, ours, theirs in _differences(saved, wanted, campaign_file, given):
        if key == "iterations" and theirs > ours:
            continue  # extends the campaign
        conflicts.append(f"{key}: saved {_show(ours)}, given {_show(theirs)}")
    if conflicts:
        raise UserError(f"--resume: the options conflict with the campaign saved in {out} "
                        f"({'; '.join(conflicts)}); drop them or use another --out")
    saved.iterations = max(saved.iterations, wanted.iterations)
    return saved


def _any_given(given: Overrides) -> bool:
    return any(v is not None for k, v in vars(given).items() if k != "out")


def _differences(saved: Campaign, wanted: Campaign, campaign_file: Path | None,
                 given: Overrides) -> list[tuple[str, Any, Any]]:
    """(what, saved, given) for every resolved setting the user's options determine."""
    ours, theirs = saved.to_dict(), wanted.to_dict()
    ours.pop("out", None)
    theirs.pop("out", None)
    if campaign_file is None:  # flags only: compare what the flags set
        keys = {"fs": "target", "preset": "workload", "workloads": "workload",
                "iterations": "iterations", "runtime": "runtime", "image_size": "target",
                "file_size": "file_size", "seed": "seed", "fresh": "fresh",
                "hosts": "hosts", "as_published": "scale"}
        fields = sorted({keys[k] for k, v in vars(given).items()
                         if v is not None and k in keys})
    else:
        fields = sorted(set(ours) | set(theirs))
    return [(field, ours.get(field), theirs.get(field)) for field in fields
            if ours.get(field) != theirs.get(field)]


def _show(value: Any) -> str:
    if isinstance(value, list) and value and isinstance(value[0], dict):
        return ", ".join(str(v.get("name") or v.get("preset") or v) for v in value)
    return str(value)


def progress_line(campaign: Campaign, out: Path) -> str:
    """'12 of 45 runs done; continuing with iteration 1, run 13' (or nothing left)."""
    plan = make_plan(campaign)
    done = ResultsDir.open(out).completed_run_ids()
    left = [run for run in plan.runs if run.run_id not in done]
    total = len(plan.runs)
    finished = total - len(left)
    if not left:
        return f"{finished} of {total} runs done; nothing left to run"
    first = left[0]
    return (f"{finished} of {total} runs done; continuing with iteration "
            f"{first.iteration}, run {first.position + 1} ({first.run_id})")
