"""`fslab tune` as plain functions: what was asked (flags over the campaign's [tune]),
what it will take (--dry-run), the tune itself, and a tune to resume."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from fslab.api.again import next_sitting, sittings_of
from fslab.api.tuning import finished_tune
from fslab.core.errors import UserError
from fslab.history.identity import identify
from fslab.history.option_effects import LEVEL, OPTION, Contrast, record, spread_for
from fslab.host.lab import Lab
from fslab.report.tune_page import render
from fslab.results.store import SITTINGS, write_atomic, write_campaign
from fslab.run.campaign_run import simulated_host
from fslab.tune import outputs, tables
from fslab.tune import request as requests
from fslab.tune.again import again, confirmed, contrast_rows, first_carry, recommended_of, shares
from fslab.tune.budget import Budget
from fslab.tune.by_question import per_run_seconds, question_dir, tune_campaign
from fslab.tune.measure import CONFIRM, question_of, questions_of, read
from fslab.tune.refused import without_refused
from fslab.tune.request import dry_run

if TYPE_CHECKING:
    from fslab.analysis.sittings.spread import SittingEstimate
    from fslab.core.environment_record import SittingSpread
    from fslab.plan.schema import Campaign
    from fslab.run.runner import Progress
    from fslab.tune.request import Request as TuneRequest
    from fslab.tune.space import Space
    from fslab.tune.tuner import Tuned


def tune(campaign: Campaign, request: TuneRequest, out: Path, *, lab: Lab | None = None,
         progress: Progress | None = None, resume: bool = False,
         catalogue: Path | None = None) -> list[str]:
    """`fslab tune`: screen, race and confirm (fslab/tune/) into `out`; the lines that
    answer it (also in out/stats: tune.csv, tune_set.csv, tune_options.csv, tuned.toml;
    out/tune.html). With `resume`, the tune saved in `out` goes on from what is on disk.
    With `catalogue`, this host's history of option effects says what carries to the next
    sitting (tune/carry.py; a --subject-to bound is then for the next sitting), and this
    sitting's option contrasts are recorded in it (history/option_effects.py)."""
    out = Path(out)
    if not resume:
        if (out / requests.TUNE_FILE).exists() or (out.exists() and any(out.iterdir())):
            raise UserError(f"{out} already holds results: pass --resume to continue it, "
                            "or another --out")
        requests.save(out, request)
        write_campaign(out, campaign.settings())
    lab = lab or Lab()
    space, campaign = without_refused(request.space([t.fs for t in campaign.targets]),
                                      campaign, lab)  # levels the kernel refuses: dropped
    budget = Budget(request.max_runs, request.budget_s, per_run_seconds(campaign))
    history = _History(catalogue, _host_of(campaign)) if catalogue is not None else None
    tuned = tune_campaign(campaign, space, budget, request.margin, out, lab, progress,
                          history.levels if history is not None else None)
    fs_of = {t.name: t.fs for t in campaign.targets}
    for one in tuned:
        known = history.options(fs_of[one.question.target], one.question.job) \
            if history is not None else None
        one.carried, one.history = first_carry(one, known), known is not None
    lines = [*space.notes, *outputs.write(out, campaign, tuned)]
    if catalogue is not None:
        lines.append(_record(catalogue, campaign, space, out, [out], {
            (one.question.target, one.question.job): [_first_shares(one)] for one in tuned}))
    write_atomic(out / "tune.html", render(campaign.name, tables.page_tables(tuned), lines))
    return lines


@dataclass(frozen=True)
class _History:
    """This host's history of option effects in a catalogue (history/option_effects.py),
    the tunes being pooled left out."""

    catalogue: Path
    host: str
    leave_out: frozenset[str] = frozenset()

    def options(self, fs: str, job: str) -> SittingSpread | None:
        return spread_for(self.catalogue, self.host, fs, job, leave_out=self.leave_out)

    def levels(self, fs: str, job: str) -> SittingSpread | None:
        return spread_for(self.catalogue, self.host, fs, job, LEVEL, self.leave_out)


def _host_of(campaign: Campaign) -> str:
    """The host a campaign sits on: a simulator campaign's simulated host, else this one."""
    import socket

    return simulated_host(campaign) or socket.gethostname()


def _first_shares(one: Tuned) -> dict[int, SittingEstimate]:
    confirmation = one.confirmation
    if confirmation.measured is None:
        return {}
    return shares(confirmation.measured, confirmation.recommended, one.margin)


def _record(catalogue: Path, campaign: Campaign, space: Space, out: Path,
            sittings: list[Path], found: dict[tuple[str, str], list[dict[int, SittingEstimate]]]
            ) -> str:
    """Record each sitting's option contrasts of each question in the catalogue (`found`:
    each question's shares, a dict per sitting of `sittings`), never failing the tune: a
    catalogue that cannot be written is said in one line."""
    questions = questions_of(campaign)
    fs_of = {t.name: t.fs for t in campaign.targets}
    options = pd.read_csv(out / "stats" / "tune_options.csv")
    written = 0
    try:
        for (target, job), each in found.items():
            mine = options[(options["target"] == target) & (options["workload"] == job)]
            recommended = recommended_of(mine, space)
            first = question_dir(sittings[0], questions, target, job) / CONFIRM
            if not any(recommended) or not (first / "environment.json").exists():
                continue
            tune_id = identify(first).campaign_id
            for root, shares in zip(sittings, each, strict=True):
                where = question_dir(root, questions, target, job) / CONFIRM
                if not (where / "environment.json").exists():
                    continue
                identity = identify(where)
                question = question_of(where, target, job, space.objective)
                ids = Contrast(OPTION, tune_id, identity.campaign_id, identity.started,
                               identity.host, fs_of.get(target, ""), target, job, "", "",
                               math.nan, math.nan, 0)
                rows = contrast_rows(space, recommended, shares,
                                     read(where, space, question, 10 ** 6), ids)
                if record(catalogue, rows) is not None:
                    written += len(rows)
    except (UserError, OSError, ValueError) as exc:
        return f"the option contrasts were not recorded in {catalogue}: {exc}"
    if not written:
        return f"nothing recorded in {catalogue}: the tune changed no option"
    return (f"recorded {written} option contrast{'s' * (written != 1)} of this tune's "
            f"sittings in {catalogue} (this host's history of option effects)")


def tune_plan(campaign: Campaign, request: TuneRequest) -> list[str]:
    """`fslab tune --dry-run`: what the space says of itself, then the stages and what each
    may take; touches nothing."""
    space = request.space([t.fs for t in campaign.targets])
    return [*space.notes, *dry_run(space, request, per_run_seconds(campaign),
                                   len(questions_of(campaign)))]


def tune_again(directory: Path, *, lab: Lab | None = None, progress: Progress | None = None,
               seed: int | None = None, catalogue: Path | None = None) -> list[str]:
    """`fslab tune --again DIR`: DIR's recommendation measured in a new sitting (DIR/
    sittings/N, a new seed: api/again.next_sitting, as `fslab run --again`) against
    itself without each change and against the reference, and what holds next time
    decided on the sittings after the one that chose (tune/again.py, tune/carry.py) into
    DIR/stats/tune_options.csv; with a `catalogue`, the spread between sittings from this
    host's history of option effects (else the stated prior), and every sitting's
    contrasts recorded there. The lines to print."""
    directory = Path(directory)
    campaign, request = finished_tune(directory)
    earlier = sittings_of(directory, confirmed)
    out, campaign.seed = next_sitting(directory, seed, campaign.seed)
    lab = lab or Lab()
    space, campaign = without_refused(request.space([t.fs for t in campaign.targets]),
                                      campaign, lab)  # as the tune it confirms dropped them
    history = _History(catalogue, *_first_sitting(directory)) if catalogue is not None \
        else None
    table, lines, found = again(directory, campaign, space, request.margin,
                                [*earlier, out], lab, progress,
                                history.options if history is not None else None)
    write_atomic(directory / "stats" / "tune_options.csv", table.to_csv(index=False))
    if catalogue is not None:
        lines.append(_record(catalogue, campaign, space, directory, [*earlier, out], found))
    return lines


def _first_sitting(directory: Path) -> tuple[str, frozenset[str]]:
    """(the host a tune's first sitting sat on, its questions' tune ids): the spread is
    this host's, the tune's own sittings left out of it (they are the ones pooled)."""
    found = [identify(f.parent) for f in sorted(Path(directory).rglob(
        f"{CONFIRM}/environment.json")) if SITTINGS not in f.relative_to(directory).parts]
    host = found[0].host if found else ""
    return host, frozenset(i.campaign_id for i in found)
