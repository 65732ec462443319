"""The campaign: what to compare (targets × workloads × iterations), from TOML or flags.

A campaign file is validated strictly (a misspelt key is an error, not a silent default)
and then resolved: every default filled in, sizes in bytes, the seed chosen. The resolved
form is what the results directory keeps, so `--resume` and a re-run rebuild exactly the
same plan.
"""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

from pydantic import ValidationError

from fslab.core.campaign_settings import LookCell
from fslab.core.errors import UserError
from fslab.core.metrics import HEADLINE_METRICS, metric_named
from fslab.core.toml_file import read_toml
from fslab.core.units import parse_duration, parse_margin, parse_size
from fslab.plan import as_published
from fslab.plan.levels import level_text
from fslab.plan.schema import (
    AUTO_FILE_SIZE_CAP,
    DEFAULT_PRESET,
    FILL_FRACTION,
    Campaign,
    CampaignFile,
    Overrides,
    TuneTable,
    WorkloadEntry,
)
from fslab.plan.sweep import campaign_factors, check_sweep, swept, takes_workload_factor
from fslab.plan.target_entries import resolve_targets, slug
from fslab.targets import IMAGE_LESS
from fslab.workloads.aging_levels import age_levels
from fslab.workloads.fio.distributed import parse_hosts
from fslab.workloads.suites import get_suite


def load_campaign(path: Path | None, overrides: Overrides | None = None) -> Campaign:
    """Read a campaign file (or none), apply flag overrides, and resolve it."""
    overrides = overrides or Overrides()
    raw: dict[str, object] = {}
    base_dir = Path.cwd()
    if path is not None:
        raw = read_toml(path, "campaign")
        base_dir = path.resolve().parent
    try:
        parsed = CampaignFile.model_validate(raw)
    except ValidationError as exc:
        raise UserError(f"{path or 'campaign'}: {_first_error(exc)}") from exc
    if not (overrides.as_published or parsed.scale == "published"):
        return resolve(parsed, overrides, base_dir)

    parsed, plan = as_published.apply(parsed, overrides)
    resolved = resolve(parsed, replace(overrides, preset=None), base_dir)
    resolved.published = plan
    return resolved if overrides.image_size else as_published.fit_images(resolved, plan)


def resolve(parsed: CampaignFile, overrides: Overrides, base_dir: Path) -> Campaign:
    """Fill in defaults, apply overrides, and check everything that can be checked early."""
    if overrides.iterations is not None and overrides.iterations < 1:
        raise UserError("--iterations must be at least 1")
    image_size = parse_size(overrides.image_size or parsed.image_size)
    targets, target_sweeps = resolve_targets(parsed.target, overrides.fs, image_size)
    target_sweeps = {name: lists for name, lists in target_sweeps.items()
                     if name in {t.name for t in targets}}
    sweep = {name: [level_text(v) for v in values] for name, values in parsed.sweep.items()}
    sweep.update(overrides.sweeps or {})
    workloads = _resolve_workloads(parsed.workload, overrides, base_dir)
    runtime = parse_duration(overrides.runtime or parsed.runtime)
    file_size_text = overrides.file_size or parsed.file_size
    campaign = Campaign(
        name=parsed.name,
        iterations=overrides.iterations or parsed.iterations,
        runtime=runtime,
        seed=overrides.seed if overrides.seed is not None else (
            parsed.seed if parsed.seed is not None else random.SystemRandom().randrange(2**31)),
        fresh=overrides.fresh or parsed.fresh,
        image_size=image_size,
        file_size=0,
        targets=targets,
        workloads=workloads,
        out=overrides.out or parsed.out,
        base_dir=base_dir,
        hosts=parse_hosts(overrides.hosts or parsed.hosts) if (overrides.hosts or parsed.hosts)
        else [],  # a malformed host is one clear error, now
        ceiling=parsed.ceiling if overrides.ceiling is None else overrides.ceiling,
        primary=list(overrides.primary or parsed.primary),
        pilot=parsed.pilot,
        rounds=overrides.rounds or parsed.rounds,
        run_timeout=parse_duration(parsed.run_timeout) if parsed.run_timeout else 0,
        scale=parsed.scale,
        labels={**{str(k): str(v) for k, v in parsed.labels.items()},
                **(overrides.labels or {})},
        margin=parse_margin(overrides.margin or parsed.margin),
        sweep=sweep,
        target_sweeps=target_sweeps,
        looks=list(parsed.resolve.looks) if parsed.resolve else [],
        look_cells=[[LookCell(*cell) for cell in cells] for cells in parsed.resolve.cells]
        if parsed.resolve else [],
        cells=[entry.key() for entry in parsed.cells],
        first_iteration=parsed.first_iteration,
        tune=TuneTable.from_table(parsed.tune),
        age_levels={name: dict(values) for name, values in parsed.age_levels.items()},
        age_reuse=parsed.age_reuse,
    )
    campaign.primary = [metric_named(m) or m for m in campaign.primary]  # as printed too
    if unknown := [m for m in campaign.primary if m not in HEADLINE_METRICS]:
        raise UserError(f"unknown primary metric {', '.join(unknown)}: use "
                        f"{', '.join(HEADLINE_METRICS)}")
    if campaign.fresh not in ("run", "iteration", "campaign"):
        raise UserError(f"bad fresh policy {campaign.fresh!r}: use run, iteration or campaign")
    factors = campaign_factors(campaign.sweep, campaign.target_sweeps)  # names, levels: checked
    campaign.factor_scopes = {f.name: "target" if f.on_targets else "job"
                              for f in factors if len(f.levels) > 1}
    campaign.file_size = (
        _auto_file_size(campaign) if str(file_size_text) == "auto" else parse_size(file_size_text)
    )
    age_levels(campaign.age_levels)  # each level the campaign defines, checked
    check_sweep(campaign)
    return campaign


def _resolve_workloads(
    entries: list[WorkloadEntry], overrides: Overrides, base_dir: Path
) -> list[WorkloadEntry]:
    if overrides.job_files:  # --job-file: each file a [[workload]] job_file = ... (a
        # relative path from where fslab runs), beside --preset's jobs when both are given
        entries = [WorkloadEntry(job_file=str(Path(path).resolve()))
                   for path in overrides.job_files]
        if overrides.preset:
            entries.insert(0, WorkloadEntry(preset=overrides.preset))
        if overrides.workloads:
            entries = _filter_entries(entries, overrides.workloads)
    elif overrides.preset or not entries:
        preset = overrides.preset or DEFAULT_PRESET
        entries = [WorkloadEntry(preset=preset, only=overrides.workloads)]
    elif overrides.workloads:
        entries = _filter_entries(entries, overrides.workloads)
    resolved = []
    for entry in entries:
        if bool(entry.preset) == bool(entry.job_file or entry.job_text):
            raise UserError("each [[workload]] needs exactly one of preset = ... or job_file = ...")
        if entry.preset:
            suite = get_suite(entry.preset)
            jobs = suite.job_names(entry.options)
            unknown = [j for j in entry.only or [] if j not in jobs]
            if unknown:
                raise UserError(f"preset {suite.name} has no workload {', '.join(unknown)}: "
                                f"it has {', '.join(jobs)}")
            resolved.append(entry.model_copy(update={"jobs": list(entry.only or jobs),
                                                     "study": suite.study}))
            continue
        resolved.append(_inline_job_file(entry, base_dir))
    names = [n for entry in resolved for n in workload_names(entry)]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise UserError(f"workload names must be unique; repeated: {', '.join(duplicates)}")
    return resolved


def _filter_entries(entries: list[WorkloadEntry], wanted: list[str]) -> list[WorkloadEntry]:
    kept = []
    for entry in entries:
        names = [n for n in workload_names(entry) if n in wanted]
        if entry.preset and names:
            kept.append(entry.model_copy(update={"only": names}))
        elif names:
            kept.append(entry)
    found = {n for e in kept for n in workload_names(e)}
    missing = [n for n in wanted if n not in found]
    if missing:
        raise UserError(f"no workload named {', '.join(missing)} in the campaign")
    return kept


def _inline_job_file(entry: WorkloadEntry, base_dir: Path) -> WorkloadEntry:
    """Keep the job file's text in the campaign, so results reproduce without the file."""
    if entry.job_text is not None:
        return entry
    assert entry.job_file is not None
    path = Path(entry.job_file)
    path = path if path.is_absolute() else base_dir / path
    try:
        text = path.read_text()
    except OSError as exc:
        raise UserError(f"cannot read job file {path}: {exc.strerror}") from exc
    name = entry.name or slug(path.stem)
    return entry.model_copy(update={"job_text": text, "name": name, "job_file": str(path)})


def workload_names(entry: WorkloadEntry) -> list[str]:
    """The workload names an entry expands to."""
    if entry.preset:
        return list(entry.only or get_suite(entry.preset).job_names(entry.options))
    return [entry.name or slug(Path(entry.job_file or "job").stem)]


def max_numjobs(entries: list[WorkloadEntry]) -> int:
    """The most processes any suite job runs (for sizing files to fit the images)."""
    largest = 1
    for entry in entries:
        if entry.preset:
            suite = get_suite(entry.preset)
            for name in entry.only or suite.job_names(entry.options):
                largest = max(largest, suite.numjobs_of(name))
    return largest


def processes_at_once(campaign: Campaign) -> int:
    """The most fio processes whose files lie on one target at once: a job's numjobs, and
    with a sweep the sum over its variants (measured in the same rounds, each laid out
    first: run/rounds.py)."""
    from itertools import product

    factors = [f for f in campaign_factors(campaign.sweep, {}) if not f.on_targets]
    largest = max_numjobs(campaign.workloads)
    for entry in campaign.workloads:
        if not entry.preset:
            continue
        own = [f for f in factors if takes_workload_factor(entry, f.name)]
        fixed = next((f.levels[0] for f in own if f.name == "numjobs"
                      and len(f.levels) == 1), None)
        varied = swept(own)
        suite = get_suite(entry.preset)
        for job in entry.only or suite.job_names(entry.options):
            total = 0
            for combination in product(*(f.levels for f in varied)):
                levels = dict(zip((f.name for f in varied), combination, strict=True))
                count = str(levels.get("numjobs", fixed or suite.numjobs_of(job)))
                if not count.isdigit() or int(count) < 1:
                    raise UserError(f"numjobs {count!r}: a whole number of at least 1")
                total += int(count)
            largest = max(largest, total)
    return largest


def _auto_file_size(campaign: Campaign) -> int:
    """Per-job file size that fits every image: capped, in whole MiB."""
    images = [t.size for t in campaign.targets if t.fs not in IMAGE_LESS and not t.device]
    if not images:
        return AUTO_FILE_SIZE_CAP
    fitting = int(min(images) * FILL_FRACTION / max(1, processes_at_once(campaign)))
    return max(1024**2, min(AUTO_FILE_SIZE_CAP, fitting) // 1024**2 * 1024**2)


def _first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"])
    message = error["msg"]
    if error["type"] == "extra_forbidden":
        message = "unknown key"
    return f"{where}: {message}" if where else message
