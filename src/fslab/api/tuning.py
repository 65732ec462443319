"""`fslab tune`'s one request: what the flags and the campaign's [tune] table ask (a new
tune, one to resume in --out, or --again DIR: DIR's recommendation in a new sitting),
where it goes, and the rules on which flags go with which, each refused in one line
before anything is touched."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from fslab.api.campaigns import PLAN_FLAGS, default_out
from fslab.core.errors import UserError
from fslab.core.units import DEFAULT_MARGIN
from fslab.plan.loading import load_campaign
from fslab.plan.schema import Campaign, Overrides
from fslab.tune.request import Request, load, request_of

FINISHED = Path("stats") / "tune_options.csv"  # a tune that ended wrote it last
WALL_TIME_NOTE = ("fslab: note: tune's --budget is now --wall-time (the wall time the tune "
                  "may take); `fslab run --budget` is measuring time")


@dataclass(frozen=True)
class TuneFlags:
    """What `fslab tune` was given, flag by flag (None or False: not given)."""

    factors: dict[str, list[str]] | None = None  # --factor NAME=V1,V2 (repeatable)
    wall_time: str | None = None
    old_budget: str | None = None  # --budget: the old name of --wall-time
    max_runs: int | None = None
    margin: str | None = None
    objective: str | None = None
    subject_to: list[str] | None = None
    allow_unsafe: bool = False
    overrides: Overrides = field(default_factory=Overrides)  # --fs, --preset, --seed …
    out: Path | None = None
    resume: bool = False
    dry_run: bool = False
    again: Path | None = None
    catalogue: Path | None = None


@dataclass(frozen=True)
class TuneJob:
    """A tune to run (api.tune's arguments, or api.tune_again's with `again`) and the notes
    to say first."""

    campaign: Campaign
    request: Request
    out: Path  # the tune's directory (--again: DIR; default: results/tune-NAME-TIME)
    resume: bool = False
    again: bool = False  # `out`'s recommendation in a new sitting (api.tune_again)
    seed: int | None = None  # --again: the new sitting's seed (None: a random one)
    catalogue: Path | None = None
    notes: tuple[str, ...] = ()  # for stderr, before anything runs


def tune_request(campaign_file: Path | None, flags: TuneFlags) -> TuneJob:
    """The tune `fslab tune [CAMPAIGN.toml] [flags]` asks for (module doc): --again DIR
    takes DIR's own campaign and request and refuses what would change them; --resume,
    the tune saved in --out; else the file's [tune] table with the flags over it, its
    space checked before anything is made."""
    wall_time, notes = _wall_time(flags)
    if flags.again is not None:
        _check_again(campaign_file, flags, wall_time)
        campaign, request = finished_tune(flags.again)
        return TuneJob(campaign, request, flags.again, again=True,
                       seed=flags.overrides.seed, catalogue=flags.catalogue, notes=notes)
    if flags.resume:
        if flags.out is None:
            raise UserError("--resume needs --out DIR: the tune to continue")
        campaign, request = tune_resumed(flags.out)
    else:
        campaign = load_campaign(campaign_file, flags.overrides)
        request = request_of(
            campaign.tune, flags.factors or {}, margin=flags.margin,
            campaign_margin=campaign.margin or DEFAULT_MARGIN, budget=wall_time,
            max_runs=flags.max_runs, objective=flags.objective, bounds=flags.subject_to,
            allow_unsafe=flags.allow_unsafe)
    request.space([t.fs for t in campaign.targets])  # refused here, before anything
    return TuneJob(campaign, request, flags.out or default_out(campaign, "tune"),
                   resume=flags.resume, catalogue=flags.catalogue, notes=notes)


def _wall_time(flags: TuneFlags) -> tuple[str | None, tuple[str, ...]]:
    """--wall-time, or its old name --budget with a note (in `fslab run`, --budget is
    measuring time: one flag name, one meaning)."""
    if flags.old_budget is None:
        return flags.wall_time, ()
    if flags.wall_time is not None:
        raise UserError("give --wall-time alone (--budget is its old name)")
    return flags.old_budget, (WALL_TIME_NOTE,)


def _check_again(campaign_file: Path | None, flags: TuneFlags, wall_time: str | None
                 ) -> None:
    """--again confirms DIR's own tune: a campaign file, --out, --resume or anything that
    would change the tune is refused, each flag named."""
    if flags.resume or campaign_file is not None or flags.out is not None:
        raise UserError("--again DIR confirms DIR's own tune in a new sitting: drop the "
                        "campaign file, --out and --resume")
    given = {"--factor": flags.factors, "--wall-time": wall_time,
             "--max-runs": flags.max_runs, "--margin": flags.margin,
             "--objective": flags.objective, "--subject-to": flags.subject_to,
             "--allow-unsafe": flags.allow_unsafe or None,
             **{flag: getattr(flags.overrides, name) for name, flag in PLAN_FLAGS.items()},
             "--dry-run": flags.dry_run or None}
    changed = [flag for flag, value in given.items() if value is not None]
    if changed:
        raise UserError(f"--again confirms {flags.again}'s own tune: drop "
                        f"{', '.join(changed)} (a new sitting confirms the same "
                        "recommendation, new seed)")


def tune_resumed(out: Path) -> tuple[Campaign, Request]:
    """The campaign and request of the tune in `out` (`fslab tune --resume --out DIR`)."""
    request = load(Path(out))
    return load_campaign(Path(out) / "campaign.toml", Overrides()), request


def finished_tune(directory: Path) -> tuple[Campaign, Request]:
    """The campaign and request of a tune that ended in `directory` (refused in one line
    otherwise)."""
    if not (Path(directory) / FINISHED).exists():
        raise UserError(f"{directory} holds no finished tune (stats/tune_options.csv): "
                        "give the --out of a `fslab tune` that ended")
    return tune_resumed(directory)
