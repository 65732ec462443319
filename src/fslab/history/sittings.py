"""Sittings in the catalogue: a campaign's sittings (every results directory recorded
with its name and plan: history/identity.py), each one's pairs from its own runs (the
one model of pairs: analysis.pairs.comparisons), and a host's between-sitting spread
read from every campaign it sat two or more sittings of (analysis.sittings.repeat).
"""

from __future__ import annotations

import math
from collections.abc import Collection
from pathlib import Path
from typing import TYPE_CHECKING

from fslab.analysis.pairs.comparisons import compared_pairs
from fslab.analysis.sittings.repeat import PRIOR, HistoryGroup, spread_between_sittings
from fslab.analysis.sittings.sitting import SITTING_PAIRS, Sitting, sittings_of, table_of
from fslab.core.errors import UserError
from fslab.history.catalogue import connect
from fslab.history.sitting_pairs import cached_pairs

if TYPE_CHECKING:
    import duckdb
    import pandas as pd

    from fslab.core.environment_record import SittingSpread


def campaign_sittings(path: Path | None, name: str, host: str | None = None,
                      plan: str | None = None) -> tuple[list[Sitting], str]:
    """(the sittings in the order they started, each with its pairs; what was left out)
    of the campaign `name` (on `host`) of `plan`, by default the plan its newest sitting
    has; refused in one line when there is none."""
    where = "name = $name" + (" AND host = $host" if host else "")
    parameters = {"name": name, **({"host": host} if host else {})}
    with connect(path) as db:
        found = db.execute(f"SELECT campaign_id, sitting, host, plan, started, added FROM "
                           f"campaigns WHERE {where} ORDER BY started, campaign_id",
                           parameters).df()
        if found.empty:
            on = f" on host {host}" if host else ""
            raise UserError(f"no campaign named {name!r}{on} in the catalogue "
                            "(`fslab history list` shows them)")
        plan = plan or found["plan"].iloc[-1]
        chosen = found[found["plan"] == plan] if plan is not None else found.iloc[-1:]
        rows = sittings_rows(db, path, chosen)
    # in the order they started: each pool of the first k is a look (analysis/sittings)
    order = {str(s): i for i, s in enumerate(chosen["sitting"])}
    rows = rows.sort_values("sitting", key=lambda s: s.astype(str).map(order),
                            kind="stable", ignore_index=True)
    left = len(found) - len(chosen)
    note = (f"{left} sitting{'s' * (left != 1)} of an earlier plan of {name} left out "
            "(other targets, workloads or settings)") if left else ""
    return sittings_of(rows), note


def sittings_rows(db: duckdb.DuckDBPyConnection, path: Path | None, chosen: pd.DataFrame
                  ) -> pd.DataFrame:
    """Rows of SITTING_PAIRS of the `chosen` campaigns (campaign_id, sitting, host, added):
    each sitting's pairs as derived once (history/sitting_pairs.py), fitted on its runs
    where they were not yet."""
    import pandas as pd

    about = {str(r.campaign_id): r for r in chosen.itertuples()}

    def fit(ids: list[str]) -> dict[str, pd.DataFrame]:
        runs = db.execute("SELECT * FROM runs WHERE campaign_id IN (SELECT unnest($ids))",
                          {"ids": ids}).df()
        return {c: sitting_pairs(runs[runs["campaign_id"] == c], str(about[c].sitting),
                                 str(about[c].host)) for c in ids}

    frames = [f for f in cached_pairs(path, chosen, fit) if not f.empty]
    if not frames:
        return pd.DataFrame(columns=SITTING_PAIRS)
    # one order whatever the parquet reader or the cache gave: every sum over these rows
    # is then the same float on every call (a spread read twice must be equal)
    order = ["sitting", "workload", "op", "metric", "a", "b"]
    return pd.concat(frames, ignore_index=True).sort_values(
        order, kind="stable", ignore_index=True)


def sitting_pairs(runs: pd.DataFrame, sitting: str, host: str) -> pd.DataFrame:
    """One sitting's pairs from its runs as the catalogue holds them (its primary
    questions as recorded), as rows of SITTING_PAIRS."""
    primary = runs[runs["primary"].astype(bool)]
    asked = {(str(w), str(o), str(m)) for w, o, m in
             primary[["workload", "op", "metric"]].drop_duplicates().itertuples(index=False)}
    _, pairs = compared_pairs(runs, runs=runs.reset_index(drop=True), asked=asked)
    return table_of([Sitting(sitting, host).with_pairs(pairs)])


def history_spread(path: Path | None, host: str, leave_out: Collection[str] = ()
                   ) -> SittingSpread:
    """This host's between-sitting spread of the primary pairs' ratios, and each
    workload's, from every campaign it sat two or more sittings of (`leave_out`: sittings
    not to count — the ones being judged or pooled); the prior alone when there is none
    (analysis.sittings.repeat). One read of the catalogue; each sitting's pairs derived
    once (history/sitting_pairs.py)."""
    where = Path(path) if path else None
    try:
        with connect(where) as db:
            chosen = _host_sittings(db, host, leave_out)
            rows = sittings_rows(db, where, chosen) if not chosen.empty else None
    except UserError:
        return PRIOR
    if rows is None or rows.empty:
        return PRIOR
    campaign_of = dict(zip(chosen["sitting"].astype(str), chosen["name"].astype(str) + "\0"
                           + chosen["plan"].astype(str), strict=True))
    groups, sittings = history_groups(rows[rows["primary"].astype(bool)], campaign_of)
    return spread_between_sittings(groups, len(sittings)) if groups else PRIOR


def _host_sittings(db: duckdb.DuckDBPyConnection, host: str, leave_out: Collection[str]
                   ) -> pd.DataFrame:
    """The host's sittings of every campaign (name and plan) it sat two or more of, but
    those left out."""
    return db.execute(
        "SELECT campaign_id, sitting, host, name, plan, added FROM campaigns WHERE "
        "host = $host AND plan IS NOT NULL AND NOT list_contains($leave, sitting) "
        "QUALIFY count(*) OVER (PARTITION BY name, plan) >= 2 "
        "ORDER BY name, plan, started, campaign_id",
        {"host": host, "leave": sorted(set(leave_out))}).df()


def level_spread(path: Path | None, host: str, leave_out: Collection[str] = ()
                 ) -> SittingSpread:
    """How far a target's level moves between two sittings on this host: the spread of
    a change new/base that nothing changed (what `fslab compare` and `fslab history
    changes` count), and each workload's, from every campaign it sat two or more
    sittings of (`leave_out`: the sittings being judged). Each sitting's level of a
    primary target × workload × op × metric is the mean of its runs' logs; a change
    between two sittings moves by both sittings' effects on a level, so each level is
    read on a scale of √2 (its τ is then the change's, on a ratio's scale like a pair's:
    the simulator's `sitting = S` gives √2 S either way) and the moments, history
    weights and prior are analysis.sittings.repeat's, every target a contrast of its
    own. The stated prior alone when there is no such campaign."""
    try:
        with connect(Path(path) if path else None) as db:
            chosen = _host_sittings(db, host, leave_out)
            if chosen.empty:
                return PRIOR
            levels = db.execute(
                "WITH per_run AS (SELECT campaign_id, run_id, target, workload, op, "
                "metric, ln(avg(value)) AS log FROM runs WHERE \"primary\" AND value > 0 "
                "AND campaign_id IN (SELECT unnest($ids)) GROUP BY ALL) "
                "SELECT campaign_id, target, workload, op, metric, count(*) AS n, "
                "avg(log) AS mean, stddev_samp(log) AS sd FROM per_run GROUP BY ALL "
                "ORDER BY campaign_id, target, workload, op, metric",
                {"ids": list(chosen["campaign_id"].astype(str))}).df()
    except UserError:
        return PRIOR
    campaign_of = dict(zip(chosen["campaign_id"].astype(str), chosen["name"].astype(str)
                           + "\0" + chosen["plan"].astype(str), strict=True))
    found: dict[tuple[str, str], dict[tuple[str, str, str], list[tuple[float, float]]]] = {}
    for row in levels[levels["n"] >= 2].itertuples(index=False):
        group = found.setdefault((campaign_of[str(row.campaign_id)], str(row.workload)), {})
        group.setdefault((str(row.target), str(row.op), str(row.metric)), []).append(
            (math.sqrt(2) * float(row.mean), math.sqrt(2) * float(row.sd) / math.sqrt(row.n)))
    groups = [HistoryGroup(workload, [[y for y, _ in v] for v in kept.values()],
                           [[e for _, e in v] for v in kept.values()], len(kept))
              for (_, workload), questions in sorted(found.items())
              if (kept := {q: v for q, v in questions.items() if len(v) >= 2})]
    return spread_between_sittings(groups, int(chosen["sitting"].nunique())) if groups \
        else PRIOR


def history_groups(rows: pd.DataFrame, campaign_of: dict[str, str]
                   ) -> tuple[list[HistoryGroup], set[str]]:
    """(the groups a spread is read from, the sittings they hold): rows of SITTING_PAIRS
    of several campaigns (`campaign_of`: each sitting's campaign) as one group per
    campaign × workload, each question's sittings in it, with its independent contrasts
    (its targets less one, at most its pairs)."""
    found: dict[tuple[str, str], dict[tuple[str, ...], list[tuple[str, float, float]]]] = {}
    for row in rows[["sitting", "workload", "op", "metric", "a", "b", "estimate", "se"]
                    ].itertuples(index=False):
        sitting = str(row.sitting)
        group = found.setdefault((campaign_of.get(sitting, ""), str(row.workload)), {})
        group.setdefault((str(row.op), str(row.metric), str(row.a), str(row.b)), []).append(
            (sitting, float(row.estimate), float(row.se)))
    groups, used = [], set()
    for (_, workload), questions in sorted(found.items()):
        kept = {q: v for q, v in questions.items() if len({s for s, _, _ in v}) >= 2}
        if not kept:
            continue
        pairs = {(a, b) for _, _, a, b in kept}
        targets = {t for pair in pairs for t in pair}
        groups.append(HistoryGroup(workload, [[y for _, y, _ in v] for v in kept.values()],
                                   [[e for _, _, e in v] for v in kept.values()],
                                   max(1, min(len(pairs), len(targets) - 1))))
        used |= {s for v in kept.values() for s, _, _ in v}
    return groups, used


def host_spreads(path: Path | None) -> list[tuple[str, SittingSpread]]:
    """Every host of the catalogue with its between-sitting spread (`fslab history list`)."""
    with connect(Path(path) if path else None) as db:
        hosts = [str(h) for (h,) in db.execute(
            "SELECT DISTINCT host FROM campaigns WHERE host IS NOT NULL ORDER BY 1").fetchall()]
    return [(host, history_spread(path, host)) for host in hosts]
