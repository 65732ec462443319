"""Sittings in the catalogue: a campaign's sittings (every results directory recorded
with its name and plan: history/identity.py), each one's pairs from its own runs (the
one model of pairs: analysis.pairs.comparisons), and a host's between-sitting spread
read from every campaign it sat two or more sittings of (analysis.sittings.repeat).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from fslab.core.errors import UserError
from fslab.history.catalogue import connect

if TYPE_CHECKING:
    import pandas as pd

    from fslab.analysis.sittings.repeat import SittingSpread


def campaign_rows(path: Path | None, name: str, host: str | None = None,
                  plan: str | None = None) -> tuple[pd.DataFrame, str]:
    """(rows of SITTING_PAIRS, what was left out) for every sitting of the campaign
    `name` (on `host`) of `plan`, by default the plan its newest sitting has; refused in
    one line when there is none."""
    import pandas as pd

    from fslab.analysis.sittings.table import SITTING_PAIRS

    where = "name = $name" + (" AND host = $host" if host else "")
    parameters = {"name": name, **({"host": host} if host else {})}
    with connect(path) as db:
        found = db.execute(f"SELECT campaign_id, sitting, host, plan, started FROM campaigns "
                           f"WHERE {where} ORDER BY started, campaign_id", parameters).df()
        if found.empty:
            on = f" on host {host}" if host else ""
            raise UserError(f"no campaign named {name!r}{on} in the catalogue "
                            "(`fslab history list` shows them)")
        plan = plan or found["plan"].iloc[-1]
        chosen = found[found["plan"] == plan] if plan is not None else found.iloc[-1:]
        runs = db.execute("SELECT * FROM runs WHERE campaign_id IN (SELECT unnest($ids))",
                          {"ids": list(chosen["campaign_id"])}).df()
    left = len(found) - len(chosen)
    note = (f"{left} sitting{'s' * (left != 1)} of an earlier plan of {name} left out "
            "(other targets, workloads or settings)") if left else ""
    frames = [sitting_pairs(runs[runs["campaign_id"] == row.campaign_id], str(row.sitting),
                            str(row.host)) for row in chosen.itertuples()]
    frames = [frame for frame in frames if not frame.empty]
    rows = (pd.concat(frames, ignore_index=True) if frames
            else pd.DataFrame(columns=SITTING_PAIRS))
    return rows, note


def sitting_pairs(runs: pd.DataFrame, sitting: str, host: str) -> pd.DataFrame:
    """One sitting's pairs from its runs as the catalogue holds them (its primary
    questions as recorded), as rows of SITTING_PAIRS."""
    from fslab.analysis.pairs.comparisons import compared_pairs
    from fslab.analysis.sittings.table import sitting_rows

    primary = runs[runs["primary"].astype(bool)]
    asked = {(str(w), str(o), str(m)) for w, o, m in
             primary[["workload", "op", "metric"]].drop_duplicates().itertuples(index=False)}
    _, pairs = compared_pairs(runs, runs=runs.reset_index(drop=True), asked=asked)
    return sitting_rows(pairs, sitting, host)


def history_spread(path: Path | None, host: str, leave_out: str = "") -> SittingSpread:
    """This host's between-sitting spread of the primary pairs' ratios from every
    campaign it sat two or more sittings of (`leave_out`: a sitting not to count, the one
    being judged); the prior alone when there is none (analysis.sittings.repeat)."""
    from fslab.analysis.sittings.repeat import PRIOR
    from fslab.analysis.sittings.repeat import spread_between_sittings as spread

    where = Path(path) if path else None
    try:
        with connect(where) as db:
            found = db.execute(
                "SELECT name, plan, count(*) AS k FROM campaigns WHERE host = $host AND "
                "plan IS NOT NULL AND sitting <> $leave GROUP BY ALL HAVING count(*) >= 2",
                {"host": host, "leave": leave_out}).df()
    except UserError:
        return PRIOR
    import dataclasses

    groups = []
    sittings: set[str] = set()
    for row in found.itertuples():
        rows, _ = campaign_rows(where, str(row.name), host, str(row.plan))
        rows = rows[(rows["sitting"] != leave_out) & rows["primary"].astype(bool)]
        for _, pair in rows.groupby(["workload", "op", "metric", "a", "b"], sort=False):
            if len(pair) >= 2:
                groups.append((pair["estimate"].tolist(), pair["se"].tolist()))
                sittings |= set(pair["sitting"].astype(str))
    found_spread = spread(groups)
    return dataclasses.replace(found_spread, sittings=len(sittings)) if groups else found_spread


def host_spreads(path: Path | None) -> list[tuple[str, SittingSpread]]:
    """Every host of the catalogue with its between-sitting spread (`fslab history list`)."""
    with connect(Path(path) if path else None) as db:
        hosts = [str(h) for (h,) in db.execute(
            "SELECT DISTINCT host FROM campaigns WHERE host IS NOT NULL ORDER BY 1").fetchall()]
    return [(host, history_spread(path, host)) for host in hosts]
