"""`fslab tune` as plain functions: what was asked (flags over the campaign's [tune]),
what it will take (--dry-run), the tune itself, and a tune to resume."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from fslab.core.errors import UserError

if TYPE_CHECKING:
    from fslab.host.lab import Lab
    from fslab.plan.campaign import Campaign
    from fslab.run.runner import Progress
    from fslab.tune.request import Request as TuneRequest


def tune(campaign: Campaign, request: TuneRequest, out: Path, *, lab: Lab | None = None,
         progress: Progress | None = None, resume: bool = False) -> list[str]:
    """`fslab tune`: screen, race and confirm (fslab/tune/) into `out`; the lines that
    answer it (also in out/stats: tune.csv, tuned.toml; out/tune.html). With `resume`,
    the tune saved in `out` goes on from what is on disk."""
    from fslab.host.lab import Lab
    from fslab.tune import answer
    from fslab.tune import request as requests
    from fslab.tune.driver import Settings
    from fslab.tune.driver import tune as run_tune

    out = Path(out)
    if not resume:
        if (out / requests.TUNE_FILE).exists() or (out.exists() and any(out.iterdir())):
            raise UserError(f"{out} already holds results: pass --resume to continue it, "
                            "or another --out")
        requests.save(out, request)
        import tomli_w

        from fslab.results.store import write_atomic as write

        write(out / "campaign.toml", tomli_w.dumps(campaign.to_dict()))
    space = request.space([t.fs for t in campaign.targets])
    answers = run_tune(campaign, space, Settings(request.margin, request.max_runs,
                                                 request.budget_s), out, lab or Lab(),
                       progress)
    lines = [*space.notes, *answer.write(out, campaign, answers, request.margin)]
    from fslab.report.tune_page import render
    from fslab.results.store import write_atomic

    write_atomic(out / "tune.html", render(campaign.name, answer.page_tables(answers), lines))
    return lines


def tune_request(table: dict[str, Any], flags: dict[str, list[str]], **limits: Any
                 ) -> TuneRequest:
    """What `fslab tune` was asked, from its flags over the campaign's [tune] table
    (tune/request.py)."""
    from fslab.tune.request import request_of

    return request_of(table, flags, **limits)


def tune_plan(campaign: Campaign, request: TuneRequest) -> list[str]:
    """`fslab tune --dry-run`: the stages and what each may take; touches nothing."""
    from fslab.tune.driver import per_run_seconds
    from fslab.tune.request import dry_run
    from fslab.tune.stages import questions_of

    space = request.space([t.fs for t in campaign.targets])
    return dry_run(space, request, per_run_seconds(campaign), len(questions_of(campaign)))


def tune_resumed(out: Path) -> tuple[Campaign, TuneRequest]:
    """The campaign and request of the tune in `out` (`fslab tune --resume --out DIR`)."""
    from fslab.plan.campaign import Overrides, load_campaign
    from fslab.tune.request import load

    request = load(Path(out))
    return load_campaign(Path(out) / "campaign.toml", Overrides()), request
