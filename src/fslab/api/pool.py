"""`fslab pool`: several sittings (or machines) of one campaign pooled into answers that
hold next time (analysis/sittings), from results directories or from the catalogue.

Writes OUT/stats/pooled.csv (analysis.sittings.table.POOLED_COLUMNS), pooled_sittings.csv
(each sitting's own interval: the forest plots), pooled_verdicts.txt and OUT/pool.json
(what was pooled, and how). Bad input is refused in one line before anything is written:
one sitting, or directories of different campaigns (naming what differs).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fslab.core.campaign_settings import CampaignSettings
from fslab.core.errors import UserError
from fslab.core.units import DEFAULT_MARGIN

if TYPE_CHECKING:
    import pandas as pd

    from fslab.analysis.sittings.repeat import SittingSpread

POOL_FILE = "pool.json"
POOLED, FOREST, VERDICTS = "pooled.csv", "pooled_sittings.csv", "pooled_verdicts.txt"


@dataclass(frozen=True)
class PoolWritten:
    """What `fslab pool` wrote: where, the pooled table, each sitting's rows, the text."""

    out: Path
    pooled: pd.DataFrame
    forest: pd.DataFrame
    lines: list[str]


@dataclass(frozen=True)
class Sitting:
    """One results directory as a sitting: its id, host, campaign (typed: its margin
    parsed once) and pairs."""

    path: Path
    sitting: str
    host: str
    campaign: CampaignSettings
    pairwise: pd.DataFrame


def read_sitting(path: Path) -> Sitting:
    """A results directory's sitting: its pairs as its analysis left them (analysed once
    when stats/ is missing or stale)."""
    from fslab.history.identity import campaign_id
    from fslab.results.stats_files import load_analysis
    from fslab.results.store import ResultsDir

    results = ResultsDir.open(Path(path))
    analysis = load_analysis(results)
    if analysis is None:
        from fslab.analysis.pipeline import analyze_results

        analysis = analyze_results(results)
    environment = results.environment()
    campaign = results.campaign_settings()
    host = (environment.sitting.host if environment.sitting else "") or environment.host
    return Sitting(Path(path), campaign_id(Path(path)), host, campaign, analysis.pairwise)


def differences(first: Sitting, other: Sitting) -> list[str]:
    """What makes `other` not a sitting of `first`'s campaign: targets, workloads,
    metrics (the primary questions) or settings, each named."""
    from fslab.history.identity import PLAN_KEYS, target_signatures

    def questions(sitting: Sitting) -> set[tuple[str, str, str]]:
        rows = sitting.pairwise[sitting.pairwise["primary"].astype(bool)]
        return {(str(w), str(o), str(m)) for w, o, m in
                rows[["workload", "op", "metric"]].itertuples(index=False)}

    found = []
    mine, theirs = target_signatures(first.campaign.table), target_signatures(other.campaign.table)
    if set(mine) != set(theirs):
        found.append(f"targets ({_listed(mine)} vs {_listed(theirs)})")
    elif mine != theirs:
        changed = [name for name in mine if mine[name] != theirs[name]]
        found.append(f"targets' configuration ({', '.join(sorted(changed))})")
    a, b = questions(first), questions(other)
    if {q[0] for q in a} != {q[0] for q in b}:
        found.append(f"workloads ({_listed({q[0] for q in a})} vs {_listed({q[0] for q in b})})")
    elif a != b:
        found.append(f"metrics ({_listed({q[2] for q in a ^ b})})")
    settings = [key for key in PLAN_KEYS if key not in ("target", "workload", "name")
                and first.campaign.table.get(key) != other.campaign.table.get(key)]
    if settings:
        found.append(f"settings ({', '.join(settings)})")
    return found


def _listed(names: Any) -> str:
    return ",".join(sorted(map(str, names))) or "none"


def pool_dirs(dirs: list[Path], out: Path, by: str = "sitting", margin: float | None = None,
              catalogue: Path | None = None) -> PoolWritten:
    """`fslab pool DIR DIR … --out OUT`: pool the sittings of one campaign (module
    docstring); `catalogue`: where the host's history is, for two sittings."""
    import pandas as pd

    from fslab.analysis.sittings.table import sitting_rows

    if len(dirs) < 2:
        raise UserError(f"pooling needs two or more sittings of one campaign; got "
                        f"{len(dirs)} ({', '.join(map(str, dirs)) or 'none'}): "
                        "`fslab run --again DIR` runs another")
    sittings = [read_sitting(path) for path in dirs]
    for other in sittings[1:]:
        found = differences(sittings[0], other)
        if found:
            raise UserError(f"{other.path} is not a sitting of {sittings[0].path}'s campaign: "
                            f"{'; '.join(found)} differ")
    from fslab.analysis.pairs.pair import pairs_of

    rows = pd.concat([sitting_rows(pairs_of(s.pairwise), s.sitting, s.host)
                      for s in sittings], ignore_index=True)
    name, given = sittings[0].campaign.name, sittings[0].campaign.margin
    spread = _spread(catalogue, sittings) if len(sittings) == 2 and by == "sitting" else None
    return write_pool(rows, out, by, given if margin is None else margin, name,
                      [str(s.path) for s in sittings], spread)


def pool_catalogue(catalogue: Path | None, campaign: str, out: Path, host: str | None = None,
                   by: str = "sitting", margin: float | None = None) -> PoolWritten:
    """`fslab pool --catalogue C --campaign NAME [--host H]`: every sitting the catalogue
    holds of the campaign's newest plan (on host H)."""
    from fslab.history.sittings import campaign_rows

    rows, note = campaign_rows(catalogue, campaign, host)
    count = rows["sitting"].nunique() if not rows.empty else 0
    if count < 2:
        raise UserError(f"pooling needs two or more sittings of one campaign; the catalogue "
                        f"holds {count} of {campaign}" + (f" on {host}" if host else "")
                        + ": `fslab run --again DIR` runs another")
    done = write_pool(rows, out, by, DEFAULT_MARGIN if margin is None else margin, campaign,
                      sorted(set(rows["sitting"].astype(str))), None)
    if note:
        done.lines.insert(1, note + ".")
    return done


def _spread(catalogue: Path | None, sittings: list[Sitting]) -> SittingSpread | None:
    """The host's between-sitting spread from the catalogue (None: no catalogue there)."""
    if catalogue is None or not Path(catalogue).exists():
        return None
    from fslab.history.sittings import history_spread

    return history_spread(catalogue, sittings[0].host)


def write_pool(rows: pd.DataFrame, out: Path, by: str, margin: float, campaign: str,
               sources: list[str], spread: SittingSpread | None) -> PoolWritten:
    """Pool `rows` and write OUT's files (module docstring)."""
    from fslab.analysis.sittings.table import pooled_table
    from fslab.analysis.sittings.words import pooled_lines
    from fslab.results.store import write_atomic

    if by not in ("sitting", "host"):
        raise UserError(f"--by {by}: pool by 'sitting' or 'host'")
    if by == "host" and rows["host"].nunique() < 2:
        raise UserError(f"--by host needs sittings of two or more hosts; these are all of "
                        f"{rows['host'].iloc[0] if len(rows) else 'none'}")
    pooled, forest = pooled_table(rows, by, margin, spread)  # type: ignore[arg-type]
    lines = pooled_lines(pooled, campaign)
    stats = Path(out) / "stats"
    stats.mkdir(parents=True, exist_ok=True)
    write_atomic(stats / POOLED, pooled.to_csv(index=False))
    write_atomic(stats / FOREST, forest.to_csv(index=False))
    write_atomic(stats / VERDICTS, "\n".join(lines) + "\n")
    write_atomic(Path(out) / POOL_FILE, json.dumps(
        {"campaign": campaign, "by": by, "margin": margin, "sittings": sources}, indent=1))
    return PoolWritten(Path(out), pooled, forest, lines)


def is_pool_only(path: Path) -> bool:
    """A directory `fslab pool --out` wrote that is not a results directory itself."""
    return (path / POOL_FILE).exists() and not (path / "format.json").exists()


def read_pool(path: Path) -> tuple[str, pd.DataFrame, pd.DataFrame, list[str]]:
    """(campaign name, pooled, forest, the pooled verdicts' lines) of a pooled directory."""
    import pandas as pd

    about = json.loads((path / POOL_FILE).read_text())
    stats = path / "stats"
    return (str(about.get("campaign", path.name)), pd.read_csv(stats / POOLED),
            pd.read_csv(stats / FOREST), (stats / VERDICTS).read_text().splitlines())
