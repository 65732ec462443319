"""What a user asked a tune for, from `fslab tune` flags and a campaign's [tune] table,
kept in the tune's directory (tune.json beside the campaign) so `--resume --out DIR`
continues the same tune; and what it will take (`--dry-run`)."""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path

from fslab.core.errors import UserError
from fslab.core.units import format_duration, parse_duration, parse_margin
from fslab.plan.schema import TuneTable
from fslab.results.store import write_atomic
from fslab.tune.confirm import LEAST_ROUNDS
from fslab.tune.space import Space, space_of
from fslab.tune.tuner import FIRST_LOOK, plan_stages
from fslab.tune.unsafe import check_space

TUNE_FILE = "tune.json"


@dataclass
class Request:
    """A tune's space and limits, as given."""

    factors: dict[str, list[str]]
    margin: float
    max_runs: int | None = None
    budget_s: float | None = None
    objective: str = ""
    bounds: list[str] = field(default_factory=list)
    allow_unsafe: bool = False

    def space(self, fs: list[str]) -> Space:
        """The space, checked: names and levels as --sweep takes them; an unsafe level
        refused unless allowed (tune/unsafe.py)."""
        space = space_of(self.factors, self.objective, self.bounds, self.allow_unsafe)
        space.notes.extend(check_space({f.name: list(f.levels) for f in space.factors},
                                       fs, self.allow_unsafe))
        return space


def request_of(table: TuneTable, flags: dict[str, list[str]], *, margin: str | None,
               campaign_margin: float, budget: str | None, max_runs: int | None,
               objective: str | None, bounds: list[str] | None,
               allow_unsafe: bool) -> Request:
    """Flags over the campaign's [tune] table (plan.schema.TuneTable): its factors, then
    --factor's; each limit a flag gives over the table's."""
    factors = {name: [str(v) for v in levels] for name, levels in table.factors.items()}
    factors.update(flags)
    budget_text = budget if budget is not None else table.budget
    runs = max_runs if max_runs is not None else table.max_runs
    if runs is not None and int(runs) < 1:
        raise UserError("--max-runs must be at least 1")
    if budget_text is None and runs is None:
        budget_text = "30m"
    the_margin = parse_margin(margin) if margin is not None else (
        parse_margin(table.margin) if table.margin is not None else campaign_margin)
    return Request(factors, the_margin, int(runs) if runs is not None else None,
                   float(parse_duration(budget_text)) if budget_text is not None else None,
                   objective or str(table.objective or ""),
                   list(bounds or table.subject_to or []),
                   bool(allow_unsafe or table.allow_unsafe))


def save(out: Path, request: Request) -> None:
    out.mkdir(parents=True, exist_ok=True)
    write_atomic(out / TUNE_FILE, json.dumps(asdict(request), indent=1))


def load(out: Path) -> Request:
    """The request a tune in `out` was started with (--resume)."""
    path = out / TUNE_FILE
    try:
        data = json.loads(path.read_text())
        return Request(**data)
    except (OSError, ValueError, TypeError) as exc:
        raise UserError(f"{out} holds no tune to resume ({path}: {exc})") from None


def dry_run(space: Space, request: Request, per_run_s: float, questions: int) -> list[str]:
    """The stages and what each may take: configurations, file systems, runs, time, and
    what a small budget's plan gave up."""
    runs = request.max_runs if request.max_runs is not None else int(
        (request.budget_s or 0) / max(per_run_s, 1e-3))
    runs //= max(1, questions)
    lines = [f"{len(space.factors)} factors, {space.size} configurations in all "
             f"(reference: {', '.join(f'{f.name}={f.reference}' for f in space.factors)}); "
             f"{questions} question(s); about {runs} runs each within the budget, "
             f"{format_duration(per_run_s)} a run"]
    stages = plan_stages(space, runs)
    if not stages.screen_rows:
        lines.append("screen: none (the whole space fits the budget)")
        candidates = space.size
    else:
        lines.append(f"screen: {len(stages.screen_rows)} configurations × "
                     f"{stages.screen_rounds} round{'s' * (stages.screen_rounds > 1)} = "
                     f"{stages.screen_runs} runs, each on a fresh file system, about "
                     f"{format_duration(stages.screen_runs * per_run_s)}")
        candidates = 2 ** len(space.factors)
    if stages.raced:
        lines.append(f"race: {stages.race_width(candidates)} configurations at once in "
                     f"rounds of one fresh file system each, more near the leaders as others"
                     f" are dropped, at most {stages.race_runs} runs, about "
                     f"{format_duration(stages.race_runs * per_run_s)}; first look after "
                     f"{FIRST_LOOK} rounds")
    else:
        lines.append("race: none (the screen's cautious reading goes to the confirmation)")
    kept = runs - stages.screen_runs - stages.race_runs
    lines.append(f"confirm: the winner, the reference, the race's best and the winner "
                 f"without each of its changes, then the recommendation as it stands where "
                 f"it differs, {LEAST_ROUNDS} rounds or more each, {kept} runs kept for it, "
                 f"about {format_duration(kept * per_run_s)}")
    if stages.given_up:
        lines.append("the budget is too small for the full plan; it gives up "
                     + "; ".join(stages.given_up))
    if math.isinf(per_run_s):
        lines.append("the time of a run is not known before one ran")
    return lines
