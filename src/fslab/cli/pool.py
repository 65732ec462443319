"""`fslab pool`: several sittings of one campaign, pooled into answers that hold next time."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from fslab.cli.app import CatalogueOption, app, console
from fslab.core.errors import UserError


@app.command()
def pool(
    dirs: Annotated[list[Path] | None, typer.Argument(
        metavar="[DIR...]", help="Results directories: sittings of one campaign.")] = None,
    out: Annotated[Path | None, typer.Option(
        "--out", help="Where to write stats/pooled.csv and the pooled verdicts.")] = None,
    catalogue: CatalogueOption = None,
    campaign: Annotated[str | None, typer.Option(
        "--campaign", help="Pool this campaign's sittings from the catalogue.")] = None,
    host: Annotated[str | None, typer.Option(
        "--host", help="Only the sittings of this host (with --campaign).")] = None,
    by: Annotated[str, typer.Option(
        "--by", help="The random effect: 'sitting' (default) or 'host' (a fleet: the "
                     "interval for a machine not yet measured).")] = "sitting",
    margin: Annotated[str | None, typer.Option(
        "--margin", help="Within this the targets are the same (default: the "
                         "campaign's, else 10%).")] = None,
    planned: Annotated[int | None, typer.Option(
        "--planned", help="The sittings the error rate is spent over, fixed at the first "
                          "pooling into OUT (default 6): deciding again after each keeps "
                          "it.")] = None,
) -> None:
    """Pool sittings of one campaign (each results directory is one: fresh file systems,
    one machine, one stretch of time): per question the mean ratio with its interval, the
    spread between sittings (from the host's history in --catalogue, else a stated prior,
    with the sittings' own) and where the next sitting should fall, each decided by the
    verdicts' rule over the sittings in the order given. Writes OUT/stats/pooled.csv and
    pooled_verdicts.txt; `fslab report OUT` draws them."""
    from fslab import api
    from fslab.core.units import parse_margin

    if out is None:
        raise UserError("fslab pool needs --out DIR (where the pooled tables go)")
    fraction = None if margin is None else parse_margin(margin)
    if campaign:
        if dirs:
            raise UserError("give results directories or --campaign, not both")
        done = api.pool_catalogue(catalogue, campaign, out, host, by, fraction, planned)
    else:
        if host:
            raise UserError("--host picks sittings from the catalogue: use it with --campaign")
        done = api.pool_dirs(list(dirs or []), out, by, fraction, catalogue, None, planned)
    console.print("\n".join(done.lines), markup=False, highlight=False, soft_wrap=True)
    console.print(f"Wrote {out / 'stats' / 'pooled.csv'}", markup=False, highlight=False)
