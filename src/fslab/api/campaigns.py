"""`fslab run`'s one request: which campaign the file and the flags describe — a new one,
the one saved in --out (--resume), or DIR's own as a new sitting (--again DIR) —, where
its results go and how it runs (run.orchestrator.RunOptions); and the rules on which
flags go with which, each refused in one line before anything is touched."""

from __future__ import annotations

import time
from dataclasses import dataclass, fields
from pathlib import Path

from fslab.api.again import again_campaign
from fslab.core.errors import UserError
from fslab.plan.loading import load_campaign
from fslab.plan.resume import progress_line, resume_campaign
from fslab.plan.schema import Campaign, Overrides
from fslab.run.orchestrator import RunOptions

# The flags that would change a campaign's plan, by their Overrides field: --again repeats
# the plan as it was, so each is refused with it (only --seed and --resolve go with it).
PLAN_FLAGS = {"fs": "--fs", "preset": "--preset", "workloads": "--workloads",
              "iterations": "--iterations", "runtime": "--runtime", "image_size": "--size",
              "file_size": "--file-size", "fresh": "--fresh", "hosts": "--hosts",
              "primary": "--primary", "rounds": "--rounds", "ceiling": "--no-ceiling",
              "as_published": "--as-published", "labels": "--label", "margin": "--margin",
              "sweeps": "--sweep", "job_files": "--job-file"}


@dataclass(frozen=True)
class RunRequest:
    """A campaign to run (api.run's arguments) and what to say before it runs."""

    campaign: Campaign
    out: Path | None  # --out (--again: DIR/sittings/N); None: the campaign's, else default_out
    options: RunOptions
    resumed: str = ""  # --resume: how far the saved campaign got (plan/resume.py)

    @property
    def published(self) -> list[str]:
        """--as-published: the study's values and what cannot be done here."""
        return self.campaign.published.lines() if self.campaign.published else []


def campaign_for(campaign_file: Path | None, overrides: Overrides, options: RunOptions,
                 out: Path | None = None) -> RunRequest:
    """The campaign of `fslab run [CAMPAIGN.toml] [flags]`: with `options.again`, that
    directory's own plan as a new sitting (a new seed, `overrides.seed` if given); with
    `options.resume`, the campaign saved in `out` (the flags checked against it); else
    the file with the flags over it (plan/loading.py)."""
    _check_goals(options)
    if options.again is not None:
        _check_again(options.again, campaign_file, overrides, options, out)
        campaign, where = again_campaign(options.again, overrides.seed)
        return RunRequest(campaign, where, options)
    if not options.resume:
        return RunRequest(load_campaign(campaign_file, overrides), out, options)
    if out is None:
        raise UserError("--resume needs --out DIR: the results directory to continue")
    campaign = resume_campaign(out, campaign_file, overrides)
    return RunRequest(campaign, out, options, progress_line(campaign, out))


def _check_goals(options: RunOptions) -> None:
    for flag, value in (("--until-ci", options.until_ci),
                        ("--until-detectable", options.until_detectable)):
        if value is not None and value <= 0:
            raise UserError(f"{flag} must be a percentage above 0, e.g. 5")


def _check_again(again: Path, campaign_file: Path | None, overrides: Overrides,
                 options: RunOptions, out: Path | None) -> None:
    """--again repeats DIR's plan: what would change it is refused, each flag named."""
    adaptive = [flag for flag, value in (("--until-ci", options.until_ci),
                                         ("--until-detectable", options.until_detectable))
                if value is not None]
    if adaptive:
        raise UserError(f"--again repeats {again}'s plan: drop {', '.join(adaptive)} (a new "
                        "sitting runs the same iterations; --resolve may follow it)")
    if options.resume or campaign_file is not None or out is not None:
        raise UserError("--again DIR runs DIR's own campaign as a new sitting: drop the "
                        "campaign file, --out and --resume")
    given = {f.name for f in fields(overrides) if getattr(overrides, f.name) is not None}
    changed = [flag for name, flag in PLAN_FLAGS.items() if name in given]
    if changed:
        raise UserError(f"--again repeats {again}'s plan: drop {', '.join(changed)} (a "
                        "new sitting runs the same plan with a new seed)")


def default_out(campaign: Campaign, kind: str = "") -> Path:
    """Where a campaign's results go when no --out is given: results/NAME-TIME (a tune's:
    results/tune-NAME-TIME)."""
    return Path("results") / "-".join(
        [*([kind] if kind else []), campaign.name, time.strftime('%Y%m%d-%H%M%S')])
