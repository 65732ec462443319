"""`fslab run --as-published`: a preset at its study's own scale and protocol.

The study's runtime, file sizes, repetitions, file systems and tool settings replace the
quick defaults (a flag the user gives still wins); its protocol replaces fslab's: one run
per job as written (no interleaved slices), no ceiling runs, a new file system when the
study made one. What this machine cannot do is one line each, and the rest still runs.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from fslab.core.errors import UserError
from fslab.core.units import format_bytes
from fslab.host.lab import DEFAULT_LAB
from fslab.plan.schema import DEFAULT_PRESET, MAX_FILL, PublishedPlan, WorkloadEntry
from fslab.plan.workload_entries import build_workloads
from fslab.targets import IMAGE_LESS, availability_table
from fslab.workloads.provenance import Published
from fslab.workloads.published import PUBLISHED
from fslab.workloads.suites import Suite, get_suite

if TYPE_CHECKING:
    from fslab.plan.schema import Campaign, CampaignFile, Overrides

GiB = 1024**3


def published_suite(parsed: CampaignFile, overrides: Overrides) -> tuple[Suite, Published]:
    """The one preset the campaign asks for, and its published scale."""
    names = ([overrides.preset] if overrides.preset else
             sorted({w.preset for w in parsed.workload if w.preset}) or [DEFAULT_PRESET])
    if len(names) != 1 or any(not w.preset for w in parsed.workload if not overrides.preset):
        raise UserError("--as-published runs one preset at its study's scale: give "
                        "--preset NAME (this campaign has "
                        f"{', '.join(n for n in names if n) or 'job files'})")
    suite = get_suite(names[0])
    if suite.published is None:
        studied = ", ".join(sorted(s for s in _published_names()))
        raise UserError(f"{suite.name} is fslab's own: it has no published scale "
                        f"(presets from a study: {studied})")
    return suite, suite.published


def _published_names() -> list[str]:
    return list(PUBLISHED)


def apply(parsed: CampaignFile, overrides: Overrides) -> tuple[CampaignFile, PublishedPlan]:
    """The campaign file with the study's values where the user gave none."""
    suite, spec = published_suite(parsed, overrides)
    plan = PublishedPlan(suite.name, spec)
    update: dict[str, object] = {"scale": "published", "rounds": 1, "ceiling": False}
    if spec.runtime is not None:
        update["runtime"] = spec.runtime.value
    if spec.file_size is not None:
        update["file_size"] = spec.file_size.value
    update["iterations"] = spec.iterations.value
    if spec.fresh is not None:
        update["fresh"] = spec.fresh.value
    # A value the campaign file sets itself (or a resumed campaign saved) stays.
    update = {k: v for k, v in update.items() if k not in parsed.model_fields_set}
    update["scale"] = "published"
    options = {key: param.value for key, param in (spec.options or {}).items()}
    entries = ([WorkloadEntry(preset=suite.name)] if overrides.preset or not parsed.workload
               else parsed.workload)
    update["workload"] = [e.model_copy(update={"options": {**options, **e.options}})
                          for e in entries]
    if not parsed.target and not overrides.fs:
        unavailable = {name: why for name, _, why in availability_table() if why}
        kinds = [k for k in spec.filesystems.value if k not in unavailable]
        plan.cannot += [f"{k}: {unavailable[k]}" for k in spec.filesystems.value
                        if k in unavailable]
        if not kinds:
            raise UserError(f"none of {suite.name}'s file systems can run here: "
                            + "; ".join(plan.cannot))
        targets: list[Any] = [{"fs": kind, **{key: param.value for key, param in (
            spec.targets or {}).get(kind, {}).items()}} for kind in kinds]
        update["target"] = targets
    else:
        targets = list(parsed.target)
    if spec.fstrim is not None and spec.fstrim.value:  # every target trims unless it says
        update["target"] = [_trimmed(target) for target in targets]
    plan.cannot = list(spec.cannot) + plan.cannot
    data = parsed.model_dump()
    data.update(update)
    return type(parsed).model_validate(data), plan


def _trimmed(target: Any) -> Any:
    """A target (a table, or a file's entry) with fstrim = true unless it sets fstrim."""
    if isinstance(target, dict):
        return {**target, "fstrim": target.get("fstrim", True)}
    return target if target.fstrim is not None else target.model_copy(update={"fstrim": True})


def fit_images(campaign: Campaign, plan: PublishedPlan) -> Campaign:
    """Images big enough for the study's files (a campaign with the user's --size keeps
    it), and a line when the lab's disk cannot hold them all at once."""
    import os

    need = max((w.required_bytes() for w in build_workloads(campaign)), default=0)
    size = max(campaign.image_size, -(-int(need / MAX_FILL) // GiB) * GiB)
    campaign.image_size = size
    campaign.targets = [replace(t, size=max(t.size, size)) if t.fs not in IMAGE_LESS
                        and not t.device else t for t in campaign.targets]

    root = DEFAULT_LAB
    probe = root if root.exists() else root.parent
    try:
        stat = os.statvfs(probe)
        free = stat.f_bavail * stat.f_frsize
    except OSError:
        return campaign
    written = need * sum(int(t.options.get("devices") or 0) or (
        2 if "mirror" in t.fs or "raid1" in t.fs else 1)
        for t in campaign.targets if t.fs not in IMAGE_LESS)
    if written > free:
        plan.cannot.append(f"the study's files take up to {format_bytes(written)} of images "
                           f"at once; the lab's disk ({probe}) has {format_bytes(free)} free")
    return campaign
