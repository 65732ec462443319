"""`fslab pool`: several sittings (or machines) of one campaign pooled into answers that
hold next time (analysis/sittings), from results directories or from the catalogue.

Writes OUT/stats/pooled.csv (analysis.sittings.question.PooledQuestion's rows),
pooled_sittings.csv (each sitting's own interval: the forest plots), pooled_verdicts.txt
and OUT/pool.json (what was pooled, and how). Bad input is refused in one line before
anything is analysed or written: one sitting, a sitting given twice, or directories of
different campaigns (naming what differs).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from fslab.analysis.pipeline import analyse, inputs_of
from fslab.analysis.sittings.looks import PLANNED
from fslab.analysis.sittings.question import questions_of, table_of
from fslab.analysis.sittings.sitting import Sitting
from fslab.analysis.sittings.table import pooled_table
from fslab.analysis.sittings.words import pooled_lines
from fslab.core.errors import UserError
from fslab.core.units import DEFAULT_MARGIN, parse_margin
from fslab.history.identity import PLAN_KEYS, campaign_id, targets_of
from fslab.history.sittings import campaign_sittings, history_spread
from fslab.results.stats_files import load_analysis
from fslab.results.store import ResultsDir, write_atomic

if TYPE_CHECKING:
    import pandas as pd

    from fslab.analysis.sittings.question import PooledQuestion
    from fslab.analysis.sittings.table import By
    from fslab.core.environment_record import SittingSpread

POOL_FILE = "pool.json"
POOLED, FOREST, VERDICTS = "pooled.csv", "pooled_sittings.csv", "pooled_verdicts.txt"


@dataclass(frozen=True)
class PoolWritten:
    """What `fslab pool` wrote: where, the pooled questions (and pooled.csv as a table),
    each sitting's rows, the text."""

    out: Path
    questions: list[PooledQuestion]
    forest: pd.DataFrame
    lines: list[str]

    @property
    def pooled(self) -> pd.DataFrame:
        """stats/pooled.csv as written."""
        return table_of(self.questions)


def open_sitting(path: Path) -> Sitting:
    """A results directory's sitting, its pairs not read yet (`with_pairs`)."""
    results = ResultsDir.open(Path(path))
    environment = results.environment()
    host = (environment.sitting.host if environment.sitting else "") or environment.host
    return Sitting(campaign_id(Path(path)), host, path=Path(path),
                   settings=results.campaign_settings(),
                   workloads=frozenset(r.workload for r in results.run_records()))


def with_pairs(sitting: Sitting) -> Sitting:
    """The sitting with its pairs as its analysis left them, or, where stats/ is missing
    or stale, as an analysis in memory finds them (nothing is written into it)."""
    assert sitting.path is not None
    results = ResultsDir.open(sitting.path)
    analysis = load_analysis(results)
    if analysis is None:
        analysis = analyse(inputs_of(results))
    return sitting.with_pairs(analysis.pairs)


def same_sittings(sittings: list[Sitting]) -> str:
    """What makes these not distinct sittings ('' when they are): a directory given twice,
    or a copy of one (the same campaign id)."""
    seen: dict[str, Path | None] = {}
    for sitting in sittings:
        if sitting.sitting in seen:
            return (f"{sitting.path} and {seen[sitting.sitting]} are the same sitting "
                    f"(campaign id {sitting.sitting}): give each sitting once")
        seen[sitting.sitting] = sitting.path
    return ""


def plan_differences(first: Sitting, other: Sitting) -> list[str]:
    """What makes `other` not a sitting of `first`'s campaign, read before any analysis:
    targets, the workloads its runs measured, settings, each named."""
    found = []
    assert first.settings is not None and other.settings is not None
    mine, theirs = targets_of(first.settings), targets_of(other.settings)
    if set(mine) != set(theirs):
        found.append(f"targets ({_listed(mine)} vs {_listed(theirs)})")
    elif mine != theirs:
        changed = [name for name in mine if mine[name] != theirs[name]]
        found.append(f"targets' configuration ({', '.join(sorted(changed))})")
    if first.workloads != other.workloads:
        found.append(f"workloads ({_listed(first.workloads)} vs {_listed(other.workloads)})")
    settings = [key for key in PLAN_KEYS if key not in ("target", "workload", "name")
                and first.settings.table.get(key) != other.settings.table.get(key)]
    if settings:
        found.append(f"settings ({', '.join(settings)})")
    return found


def question_differences(first: Sitting, other: Sitting) -> list[str]:
    """What makes `other`'s primary questions not `first`'s: workloads or metrics."""
    def questions(sitting: Sitting) -> set[tuple[str, str, str]]:
        return {(p.workload, p.op, p.metric) for p in sitting.pairs if p.primary}

    a, b = questions(first), questions(other)
    if {q[0] for q in a} != {q[0] for q in b}:
        return [f"workloads ({_listed({q[0] for q in a})} vs {_listed({q[0] for q in b})})"]
    return [f"metrics ({_listed({q[2] for q in a ^ b})})"] if a != b else []


def _listed(names: Iterable[object]) -> str:
    return ",".join(sorted(map(str, names))) or "none"


def _refuse_unlike(sittings: list[Sitting], differences: Callable[[Sitting, Sitting], list[str]]
                   ) -> None:
    for other in sittings[1:]:
        found = differences(sittings[0], other)
        if found:
            raise UserError(f"{other.path} is not a sitting of {sittings[0].path}'s campaign: "
                            f"{'; '.join(found)} differ")


def pool(dirs: list[Path], out: Path | None, *, catalogue: Path | None = None,
         campaign: str | None = None, host: str | None = None, by: str = "sitting",
         margin: str | None = None, planned: int | None = None) -> PoolWritten:
    """`fslab pool`: the sittings given as results directories (pool_dirs), or with
    `campaign` the catalogue's sittings of it (pool_catalogue); what goes with which is
    refused in one line."""
    if out is None:
        raise UserError("fslab pool needs --out DIR (where the pooled tables go)")
    fraction = None if margin is None else parse_margin(margin)
    if campaign:
        if dirs:
            raise UserError("give results directories or --campaign, not both")
        return pool_catalogue(catalogue, campaign, out, host, by, fraction, planned)
    if host:
        raise UserError("--host picks sittings from the catalogue: use it with --campaign")
    return pool_dirs(list(dirs), out, by, fraction, catalogue, None, planned)


def pool_dirs(dirs: list[Path], out: Path, by: str = "sitting", margin: float | None = None,
              catalogue: Path | None = None, family: int | None = None,
              planned: int | None = None) -> PoolWritten:
    """`fslab pool DIR DIR … --out OUT`: pool the sittings of one campaign, in the order
    given (the order they sat: each pool of the first k is a look), module docstring;
    `catalogue`: where the host's history is; `family`: the primary questions'
    Bonferroni family (default: how many there are; 1: each at 95 %); `planned`: the
    sittings the error is spent over (default: what OUT/pool.json recorded at the first
    pooling, else analysis.sittings.looks.PLANNED). Everything is checked before
    anything is analysed or written."""
    unit = unit_of(by)
    planned = _planned(out, planned)
    if len(dirs) < 2:
        raise UserError(f"pooling needs two or more sittings of one campaign; got "
                        f"{len(dirs)} ({', '.join(map(str, dirs)) or 'none'}): "
                        "`fslab run --again DIR` runs another")
    sittings = [open_sitting(path) for path in dirs]
    twice = same_sittings(sittings)
    if twice:
        raise UserError(twice)
    _refuse_unlike(sittings, plan_differences)
    _refuse_hosts(unit, [s.host for s in sittings])
    sittings = [with_pairs(s) for s in sittings]
    _refuse_unlike(sittings, question_differences)
    spread = None
    if unit == "sitting" and len({s.host for s in sittings}) == 1:
        spread = _spread(catalogue, sittings[0].host, {s.sitting for s in sittings})
    first = sittings[0].settings
    assert first is not None  # a results directory's
    return write_pool(sittings, out, unit, margin if margin is not None else first.margin,
                      first.name, [str(s.path) for s in sittings], spread, family,
                      first.looks[0] if first.looks else first.iterations or None, planned)


def pool_catalogue(catalogue: Path | None, campaign: str, out: Path, host: str | None = None,
                   by: str = "sitting", margin: float | None = None,
                   planned: int | None = None) -> PoolWritten:
    """`fslab pool --catalogue C --campaign NAME [--host H]`: every sitting the catalogue
    holds of the campaign's newest plan (on host H), in the order they started; the
    sittings of one host are pooled with its history of other campaigns' sittings."""
    unit = unit_of(by)
    planned = _planned(out, planned)
    sittings, note = campaign_sittings(catalogue, campaign, host)
    count = len(sittings)
    if count < 2:
        raise UserError(f"pooling needs two or more sittings of one campaign; the catalogue "
                        f"holds {count} of {campaign}" + (f" on {host}" if host else "")
                        + ": `fslab run --again DIR` runs another")
    _refuse_hosts(unit, [s.host for s in sittings])
    hosts = {s.host for s in sittings}
    spread = (_spread(catalogue, hosts.pop(), {s.sitting for s in sittings})
              if unit == "sitting" and len(hosts) == 1 else None)
    done = write_pool(sittings, out, unit, DEFAULT_MARGIN if margin is None else margin,
                      campaign, [s.sitting for s in sittings], spread, planned=planned)
    if note:
        done.lines.insert(1, note + ".")
    return done


def unit_of(by: str) -> By:
    """--by as the pool's unit, refused in one line unless 'sitting' or 'host'."""
    if by == "sitting":
        return "sitting"
    if by == "host":
        return "host"
    raise UserError(f"--by {by}: pool by 'sitting' or 'host'")


def _refuse_hosts(by: By, hosts: list[str]) -> None:
    if by == "host" and len(set(hosts)) < 2:
        raise UserError(f"--by host needs sittings of two or more hosts; these are all of "
                        f"{hosts[0] if hosts else 'none'}")


def _spread(catalogue: Path | None, host: str, pooled: set[str]) -> SittingSpread | None:
    """The host's between-sitting spread from the catalogue, the sittings being pooled
    left out (None: no catalogue there)."""
    if catalogue is None or not Path(catalogue).exists():
        return None

    return history_spread(catalogue, host, leave_out=pooled)


def write_pool(sittings: list[Sitting], out: Path, by: By, margin: float, campaign: str,
               sources: list[str], spread: SittingSpread | None, family: int | None = None,
               next_iterations: int | None = None, planned: int | None = None
               ) -> PoolWritten:
    """Pool the sittings and write OUT's files (module docstring); `planned`:
    _planned's."""
    planned = _planned(out, planned)
    questions, forest = pooled_table(sittings, by, margin, spread, family, next_iterations,
                                     planned)
    lines = pooled_lines(questions, campaign)
    stats = Path(out) / "stats"
    stats.mkdir(parents=True, exist_ok=True)
    write_atomic(stats / POOLED, table_of(questions).to_csv(index=False))
    write_atomic(stats / FOREST, forest.to_csv(index=False))
    write_atomic(stats / VERDICTS, "\n".join(lines) + "\n")
    write_atomic(Path(out) / POOL_FILE, json.dumps(
        {"campaign": campaign, "by": by, "margin": margin, "sittings": sources,
         "planned": planned}, indent=1))
    return PoolWritten(Path(out), questions, forest, lines)


def _planned(out: Path, planned: int | None) -> int:
    """The sittings the error is spent over: `planned`, else what OUT's first pooling
    recorded (the plan is fixed at the start), else looks.PLANNED; refused below 2."""
    if planned is None:
        recorded = Path(out) / POOL_FILE
        if recorded.exists():
            planned = json.loads(recorded.read_text()).get("planned")
    if planned is None:
        return PLANNED
    if int(planned) < 2:
        raise UserError(f"--planned {planned}: plan two or more sittings")
    return int(planned)


def is_pool_only(path: Path) -> bool:
    """A directory `fslab pool --out` wrote that is not a results directory itself."""
    return (path / POOL_FILE).exists() and not (path / "format.json").exists()


def read_pool(path: Path) -> tuple[str, list[PooledQuestion], pd.DataFrame, list[str]]:
    """(campaign name, the pooled questions, forest, the pooled verdicts' lines) of a
    pooled directory."""
    import pandas as pd

    about = json.loads((path / POOL_FILE).read_text())
    stats = path / "stats"
    return (str(about.get("campaign", path.name)), questions_of(pd.read_csv(stats / POOLED)),
            pd.read_csv(stats / FOREST), (stats / VERDICTS).read_text().splitlines())
