"""`fslab run --again DIR`: DIR's campaign as one more sitting (the same plan, a new seed,
new file systems) into DIR/sittings/N, then every sitting of DIR pooled into DIR/stats/
pooled.csv (api/pool.py). DIR itself is sitting 1."""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import TYPE_CHECKING

from fslab.core.errors import UserError

if TYPE_CHECKING:
    from fslab.api.pool import PoolWritten
    from fslab.plan.loading import Campaign

SITTINGS = "sittings"


def sittings_of(directory: Path) -> list[Path]:
    """DIR and its further sittings (DIR/sittings/N that finished: each has stats/), in
    order."""
    found = sorted((p for p in (Path(directory) / SITTINGS).glob("*")
                    if p.name.isdigit() and (p / "stats").is_dir()), key=lambda p: int(p.name))
    return [Path(directory), *found]


def again_campaign(directory: Path, seed: int | None = None) -> tuple[Campaign, Path]:
    """(the campaign of DIR as a new sitting, where it goes): the saved plan with a new
    seed (`seed`, else a random one), the looks of a --resolve left out (a repeat measures
    the campaign's own iterations; --resolve may be given again)."""
    from fslab.plan.resume import resume_campaign

    directory = Path(directory)
    if (directory / "pool.json").exists() and not (directory / "format.json").exists():
        raise UserError(f"{directory} is a pooled directory: give the results directory of "
                        "the campaign's first sitting")
    campaign = resume_campaign(directory)
    taken = {int(p.name) for p in (directory / SITTINGS).glob("*") if p.name.isdigit()}
    number = max(taken | {1}) + 1
    used = {campaign.seed}
    campaign.seed = seed if seed is not None else secrets.randbelow(2 ** 31 - 1) + 1
    if campaign.seed in used:
        raise UserError(f"--seed {campaign.seed} is DIR's own: a new sitting needs a new seed")
    if campaign.looks:  # a campaign that resolved: its own iterations, not its looks'
        campaign.iterations = campaign.looks[0]
        campaign.looks, campaign.look_cells = [], []
    campaign.first_iteration = 1
    out = directory / SITTINGS / str(number)
    campaign.out = str(out)
    return campaign, out


def pool_again(directory: Path, catalogue: Path | None = None) -> PoolWritten | None:
    """Every sitting of DIR pooled into DIR (None with one sitting so far)."""
    from fslab.api.pool import pool_dirs

    found = sittings_of(directory)
    if len(found) < 2:
        return None
    return pool_dirs(found, Path(directory), "sitting", None, catalogue)
