"""Decisions of a campaign: the method the report states, what each decision's runs cost
(machine seconds, seconds per iteration: run.json's steps), and two groups of values
decided as one pair (`decide_pair`: compare and the tuner's tables).

The rule itself and the record it decides are analysis.pairs.pair (`Pair`, `decide`):
every primary pair ends faster, slower, the same within the margin, or unresolved with
the iterations that would resolve it and what they cost at this campaign's own run times.
More than 100 iterations: ∞. The command that spends them is `--resolve`
(analysis.pairs.sequential): more iterations read again at the same α would call
differences more often than it says.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, TypeVar

import pandas as pd

from fslab.analysis.cells.stats import geomean
from fslab.analysis.pairs.model import ALPHA, IMPORTED, compare
from fslab.analysis.pairs.pair import decide
from fslab.core.metrics import HIGHER
from fslab.core.pair import Pair

if TYPE_CHECKING:
    from fslab.core.record import RunRecord

K = TypeVar("K")

METHOD = ("Decisions: a primary pair is faster or slower when its simultaneous interval "
          "excludes 1, the same within the margin (default ±10 %) when the interval lies "
          "inside it (equivalence by the interval: two one-sided tests at the same level), "
          "else unresolved — then 'needs N iterations' is where that pair's own test "
          "resolves it 4 times in 5 if the measured ratio and spread hold, and the time is "
          "from this campaign's own runs.")


def machine_seconds(records: list[RunRecord]) -> dict[tuple[str, str], float]:
    """(workload, target) -> the machine seconds of its runs (run.json's steps, added up:
    setup and measuring); the seconds a question's decision cost are its two cells'."""
    out: dict[tuple[str, str], float] = {}
    for record in records:
        if record.machine_s > 0:
            key = (record.workload, record.target)
            out[key] = out.get(key, 0.0) + float(record.machine_s)
    return out


def seconds_per_iteration(records: list[RunRecord]) -> dict[tuple[str, str], float]:
    """(workload, target) -> the median machine seconds one of its runs costs in this
    campaign: its steps added up (run.json), or for records without steps its wall time —
    runs measured together in interleaved rounds share the rounds' wall time, each the
    group's time over its number of runs (every record of a round spans it all)."""
    timed: dict[tuple[str, str], list[float]] = {}
    for record in records:
        if record.status == "ok" and record.machine_s > 0:
            timed.setdefault((record.workload, record.target), []).append(record.machine_s)
    groups: dict[tuple[int, str], list[RunRecord]] = {}
    for record in records:
        if (record.workload, record.target) in timed:
            continue
        if record.finished > record.started > 0 and record.status == "ok":
            sliced = record.workload_metadata.sliced
            key = (record.iteration, (record.job or record.workload) if sliced
                   else record.run_id)
            groups.setdefault(key, []).append(record)
    times: dict[tuple[str, str], list[float]] = {}
    for members in groups.values():
        wall = max(r.finished for r in members) - min(r.started for r in members)
        for record in members:
            times.setdefault((record.workload, record.target), []).append(
                wall / len(members))
    times.update(timed)
    return {key: float(pd.Series(values).median()) for key, values in times.items()}


def resolve_command(needs: float) -> str:
    """What to type to spend those iterations (the directory is the reader's): a
    follow-up that measures only the unresolved questions and keeps the error rate
    (analysis.pairs.sequential; more iterations read at the same α would not)."""
    return "fslab run --resume --out DIR --resolve"


def best_of(scores: Mapping[K, float], better: str) -> K | None:
    """The key with the best score in the metric's direction (NaN scores never win;
    None when there is none)."""
    finite = {key: score for key, score in scores.items() if score == score}
    if not finite:
        return None
    pick = max if better == HIGHER else min
    return pick(finite, key=lambda key: finite[key])


def sign(better: str) -> float:
    """+1 where higher is better, -1 where lower is: a score to maximise either way."""
    return 1.0 if better == HIGHER else -1.0


def decide_pair(first: Mapping[int, float], second: Mapping[int, float], better: str,
                margin: float, *, paired: bool = True, alpha: float = ALPHA,
                family: int = 1, not_blocks: str = IMPORTED) -> Pair:
    """Two groups ({iteration: value}) as one decided pair, a = "first": the ratio
    first/second of geometric means with its interval from the one model of pairs (paired
    on the iterations both ran when `paired`, else Welch; Bonferroni over `family`), the
    rule's decision and what an unresolved one needs. Two groups that cannot be compared
    get the ratio of their geometric means, no interval (not `compared`: the note says
    why) and `unresolved`."""
    found = compare({"first": dict(first), "second": dict(second)}, paired, alpha,
                    family=family, not_blocks=not_blocks, better=better)
    if isinstance(found, str):
        below = geomean(second.values())
        return decide(Pair(a="first", b="second", better=better, note=found,
                           ratio=geomean(first.values()) / below if below else float("nan")),
                      margin)
    (pair,) = found.pairs
    return decide(pair, margin)
