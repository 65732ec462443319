"""`fslab tune` as plain functions: what was asked (flags over the campaign's [tune]),
what it will take (--dry-run), the tune itself, and a tune to resume."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from fslab.core.errors import UserError

if TYPE_CHECKING:
    from fslab.core.environment_record import SittingSpread
    from fslab.host.lab import Lab
    from fslab.plan.schema import Campaign
    from fslab.run.runner import Progress
    from fslab.tune.request import Request as TuneRequest


def tune(campaign: Campaign, request: TuneRequest, out: Path, *, lab: Lab | None = None,
         progress: Progress | None = None, resume: bool = False) -> list[str]:
    """`fslab tune`: screen, race and confirm (fslab/tune/) into `out`; the lines that
    answer it (also in out/stats: tune.csv, tune_set.csv, tune_options.csv, tuned.toml;
    out/tune.html). With `resume`, the tune saved in `out` goes on from what is on disk."""
    from fslab.host.lab import Lab
    from fslab.report.tune_page import render
    from fslab.results.store import write_atomic
    from fslab.tune import outputs, tables
    from fslab.tune import request as requests
    from fslab.tune.budget import Budget
    from fslab.tune.by_question import per_run_seconds, tune_campaign
    from fslab.tune.refused import without_refused

    out = Path(out)
    if not resume:
        if (out / requests.TUNE_FILE).exists() or (out.exists() and any(out.iterdir())):
            raise UserError(f"{out} already holds results: pass --resume to continue it, "
                            "or another --out")
        requests.save(out, request)
        import tomli_w

        write_atomic(out / "campaign.toml", tomli_w.dumps(campaign.to_dict()))
    lab = lab or Lab()
    space, campaign = without_refused(request.space([t.fs for t in campaign.targets]),
                                      campaign, lab)  # levels the kernel refuses: dropped
    budget = Budget(request.max_runs, request.budget_s, per_run_seconds(campaign))
    tuned = tune_campaign(campaign, space, budget, request.margin, out, lab, progress)
    lines = [*space.notes, *outputs.write(out, campaign, tuned)]
    write_atomic(out / "tune.html", render(campaign.name, tables.page_tables(tuned), lines))
    return lines


def tune_request(table: dict[str, object], flags: dict[str, list[str]], **limits: Any
                 ) -> TuneRequest:
    """What `fslab tune` was asked, from its flags over the campaign's [tune] table
    (tune/request.py)."""
    from fslab.tune.request import request_of

    return request_of(table, flags, **limits)


def tune_plan(campaign: Campaign, request: TuneRequest) -> list[str]:
    """`fslab tune --dry-run`: the stages and what each may take; touches nothing."""
    from fslab.tune.by_question import per_run_seconds
    from fslab.tune.measure import questions_of
    from fslab.tune.request import dry_run

    space = request.space([t.fs for t in campaign.targets])
    return dry_run(space, request, per_run_seconds(campaign), len(questions_of(campaign)))


def tune_resumed(out: Path) -> tuple[Campaign, TuneRequest]:
    """The campaign and request of the tune in `out` (`fslab tune --resume --out DIR`)."""
    from fslab.plan.loading import load_campaign
    from fslab.plan.schema import Overrides
    from fslab.tune.request import load

    request = load(Path(out))
    return load_campaign(Path(out) / "campaign.toml", Overrides()), request


def tune_again(directory: Path, *, lab: Lab | None = None, progress: Progress | None = None,
               seed: int | None = None, catalogue: Path | None = None) -> list[str]:
    """`fslab tune --again DIR`: DIR's recommendation and its ablation confirmed in a new
    sitting (DIR/sittings/N, a new seed: api/again.next_sitting, as `fslab run --again`)
    and each option's contribution pooled over every sitting that finished into
    DIR/stats/tune_options.csv (tune/again.py); with two sittings and a `catalogue`, τ is
    borrowed from this host's history. The lines to print."""
    from fslab.api.again import next_sitting, sittings_of
    from fslab.host.lab import Lab
    from fslab.results.store import write_atomic
    from fslab.tune.again import again, confirmed
    from fslab.tune.refused import without_refused

    directory = Path(directory)
    if not (directory / "stats" / "tune_options.csv").exists():
        raise UserError(f"{directory} holds no finished tune (stats/tune_options.csv): "
                        "give the --out of a `fslab tune` that ended")
    campaign, request = tune_resumed(directory)
    earlier = sittings_of(directory, confirmed)
    out, campaign.seed = next_sitting(directory, seed, campaign.seed)
    lab = lab or Lab()
    space, campaign = without_refused(request.space([t.fs for t in campaign.targets]),
                                      campaign, lab)  # as the tune it confirms dropped them
    spread = _host_spread(catalogue, directory) if len(earlier) == 1 else None
    table, lines = again(directory, campaign, space, request.margin, [*earlier, out],
                         lab, progress, spread)
    write_atomic(directory / "stats" / "tune_options.csv", table.to_csv(index=False))
    return lines


def _host_spread(catalogue: Path | None, directory: Path) -> SittingSpread | None:
    """The between-sitting spread of the host the tune ran on, from the catalogue (None:
    none given)."""
    if catalogue is None or not Path(catalogue).exists():
        return None
    from fslab.history.sittings import history_spread
    from fslab.results.store import ResultsDir
    from fslab.tune.measure import CONFIRM

    for found in sorted(Path(directory).rglob(f"{CONFIRM}/format.json")):
        environment = ResultsDir.open(found.parent).environment()
        host = (environment.sitting.host if environment.sitting else "") or environment.host
        return history_spread(catalogue, host)
    return None
