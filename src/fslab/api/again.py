"""`fslab run --again DIR`: DIR's campaign as one more sitting (the same plan, a new seed,
new file systems) into DIR/sittings/N, then every sitting of DIR pooled into DIR/stats/
pooled.csv (api/pool.py). DIR itself is sitting 1."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from fslab.api.pool import pool_dirs
from fslab.core.errors import UserError
from fslab.plan.resume import resume_campaign
from fslab.results.store import SITTINGS

if TYPE_CHECKING:
    from fslab.api.pool import PoolWritten
    from fslab.plan.schema import Campaign


def sittings_of(directory: Path, finished: Callable[[Path], bool] | None = None
                ) -> list[Path]:
    """DIR and its further sittings that finished (DIR/sittings/N: by default each has
    stats/; `finished` says otherwise, e.g. a tune's confirmation analysed), in order."""
    done = finished or (lambda p: (p / "stats").is_dir())
    found = sorted((p for p in (Path(directory) / SITTINGS).glob("*")
                    if p.name.isdigit() and done(p)), key=lambda p: int(p.name))
    return [Path(directory), *found]


def next_sitting(directory: Path, seed: int | None, own: int | None) -> tuple[Path, int]:
    """(where DIR's next sitting goes, its seed): DIR/sittings/N, N one past every sitting
    begun there (one that did not finish keeps its number, and is not pooled), under
    `seed`, else a random one; refused in one line when it is DIR's own `own` (the same
    seed, the same sitting)."""
    taken = {int(p.name) for p in (Path(directory) / SITTINGS).glob("*") if p.name.isdigit()}
    number = max(taken | {1}) + 1
    chosen = seed if seed is not None else secrets.randbelow(2 ** 31 - 1) + 1
    if chosen == own:
        raise UserError(f"--seed {chosen} is {directory}'s own: a new sitting needs a new "
                        "seed")
    return Path(directory) / SITTINGS / str(number), chosen


def again_campaign(directory: Path, seed: int | None = None) -> tuple[Campaign, Path]:
    """(the campaign of DIR as a new sitting, where it goes): the saved plan with a new
    seed (`seed`, else a random one), the looks of a --resolve left out (a repeat measures
    the campaign's own iterations; --resolve may be given again)."""
    directory = Path(directory)
    if (directory / "pool.json").exists() and not (directory / "format.json").exists():
        raise UserError(f"{directory} is a pooled directory: give the results directory of "
                        "the campaign's first sitting")
    campaign = resume_campaign(directory)
    out, campaign.seed = next_sitting(directory, seed, campaign.seed)
    if campaign.looks:  # a campaign that resolved: its own iterations, not its looks'
        campaign.iterations = campaign.looks[0]
        campaign.looks, campaign.look_cells = [], []
    campaign.first_iteration = 1
    campaign.out = str(out)
    return campaign, out


def pool_again(directory: Path, catalogue: Path | None = None) -> PoolWritten | None:
    """Every sitting of DIR pooled into DIR (None with one sitting so far)."""
    found = sittings_of(directory)
    if len(found) < 2:
        return None
    return pool_dirs(found, Path(directory), "sitting", None, catalogue)
