"""Decisions: every primary pair ends in one of three answers, read off its printed
simultaneous interval, and an unresolved one says what it would take.

- faster / slower: the interval excludes 1 (the pair's adjusted test rejects);
- equivalent: the interval lies inside [1/(1 + margin), 1 + margin] — the same within
  the margin (equivalence by the interval, as two one-sided tests at the same level:
  Schuirmann 1987), so it can never contradict the interval;
- unresolved: neither. Then `needs_iterations` is the fewest iterations at which that
  pair's own test (paired or Welch, its own degrees of freedom, the campaign's adjusted
  level) resolves it 4 times in 5 if the true ratio is the one measured, from its
  measured spread (analysis.pairs.needs.needs_iterations), and `needs_seconds` what the
  extra iterations cost at this campaign's own run times. More than 100 iterations: ∞.
  The command that spends them is `--resolve` (analysis.pairs.sequential): more iterations
  read again at the same α would call differences more often than it says.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

import pandas as pd

from fslab.analysis.cells.stats import geomean
from fslab.analysis.pairs.model import ALPHA, IMPORTED, PairResult, compare
from fslab.analysis.pairs.needs import PairSpread, needs_iterations
from fslab.core.metrics import HIGHER
from fslab.core.units import turned

if TYPE_CHECKING:
    from fslab.core.record import RunRecord

K = TypeVar("K")

FASTER, SLOWER, EQUIVALENT, UNRESOLVED = "faster", "slower", "equivalent", "unresolved"
IMPROVED, REGRESSED, SAME, BEHIND = "improved", "regressed", "same", "behind"
# The one word table: how each reader says the rule's four answers. Between targets
# (verdicts, pairwise.csv); over time (a new result against an old one: compare,
# history); a tuner's candidate against the reference; a configuration against the best
# (best.csv, a race: faster or slower than the best can only mean behind it).
BETWEEN, OVER_TIME, AGAINST_REFERENCE, AGAINST_BEST = ("between", "over time",
                                                       "against the reference",
                                                       "against the best")
WORDS = {
    BETWEEN: {FASTER: FASTER, SLOWER: SLOWER, EQUIVALENT: EQUIVALENT, UNRESOLVED: UNRESOLVED},
    OVER_TIME: {FASTER: IMPROVED, SLOWER: REGRESSED, EQUIVALENT: SAME,
                UNRESOLVED: UNRESOLVED},
    AGAINST_REFERENCE: {FASTER: FASTER, SLOWER: SLOWER, EQUIVALENT: SAME,
                        UNRESOLVED: UNRESOLVED},
    AGAINST_BEST: {FASTER: BEHIND, SLOWER: BEHIND, EQUIVALENT: EQUIVALENT,
                   UNRESOLVED: UNRESOLVED},
}
DECISION_COLUMNS = ["decision", "margin", "needs_iterations", "needs_seconds", "machine_s"]

METHOD = ("Decisions: a primary pair is faster or slower when its simultaneous interval "
          "excludes 1, the same within the margin (default ±10 %) when the interval lies "
          "inside it (equivalence by the interval: two one-sided tests at the same level), "
          "else unresolved — then 'needs N iterations' is where that pair's own test "
          "resolves it 4 times in 5 if the measured ratio and spread hold, and the time is "
          "from this campaign's own runs.")


def decide(pairwise: pd.DataFrame, better: dict[str, str], margin: float,
           seconds: dict[tuple[str, str], float],
           next_alpha: float | None = None,
           machine: dict[tuple[str, str], float] | None = None) -> pd.DataFrame:
    """pairwise.csv with DECISION_COLUMNS: primary pairs decided, the others (estimates,
    not questions) left blank. `better` maps metric -> 'higher'/'lower'; `seconds` is
    seconds_per_iteration of the campaign's run records, `machine` machine_seconds (what
    each decision's runs took: machine_s). A campaign that resolves states what an
    unresolved pair needs at its next look's campaign-wide α, `next_alpha`
    (analysis.pairs.sequential)."""
    out = pairwise.copy()
    for column in DECISION_COLUMNS:
        out[column] = pd.Series([None] * len(out), dtype=object)
    if out.empty:
        return out
    for index, row in out.iterrows():
        if not bool(row["primary"]):
            continue
        decision = decision_of(row, better.get(str(row["metric"]), HIGHER), margin)
        needs = math.nan
        if decision == UNRESOLVED:
            level = float(row["alpha"]) if next_alpha is None else \
                next_alpha / float(row["family"])
            needs = needs_of(row, margin, level)
        cost = math.nan
        if math.isfinite(needs):
            per = sum(seconds.get((str(row["workload"]), str(t)), math.nan)
                      for t in (row["a"], row["b"]))
            cost = (needs - current_iterations(row)) * per
        elif math.isinf(needs):
            cost = math.inf
        out.at[index, "decision"] = decision
        out.at[index, "margin"] = margin
        out.at[index, "needs_iterations"] = needs
        out.at[index, "needs_seconds"] = cost
        out.at[index, "machine_s"] = sum(
            (machine or {}).get((str(row["workload"]), str(t)), math.nan)
            for t in (row["a"], row["b"]))
    return out


def decision_of(row: pd.Series, better: str, margin: float) -> str:
    """faster/slower (a relative to b, in the metric's own direction), equivalent or
    unresolved, from the pair's printed interval."""
    return decided(bool(row["estimable"]), bool(row["significant"]), float(row["ratio"]),
                   float(row["ratio_ci_low"]), float(row["ratio_ci_high"]), better, margin)


def decided(estimable: bool, significant: bool, ratio: float, low: float, high: float,
            better: str, margin: float) -> str:
    """The one rule every table decides by: faster/slower (a relative to b) when the
    interval excludes 1, equivalent when it lies inside the margin, else unresolved."""
    if not estimable:
        return UNRESOLVED
    if significant:
        return FASTER if (ratio > 1) == (better == HIGHER) else SLOWER
    return EQUIVALENT if within_margin(low, high, margin) else UNRESOLVED


def within_margin(low: float, high: float, margin: float) -> bool:
    """Whether the interval [low, high] lies inside [1/(1 + margin), 1 + margin]."""
    return low >= 1 / (1 + margin) and high <= 1 + margin


def current_iterations(row: pd.Series) -> int:
    """The iterations the pair's test rests on now."""
    blocked = int(row.get("n_pairs", 0) or 0)
    return blocked if blocked >= 2 else min(int(row["n_a"]), int(row["n_b"]))


def pair_spread(row: pd.Series) -> PairSpread:
    """What a pairwise.csv row's test rests on (analysis.pairs.needs.PairSpread)."""
    return spread(int(row.get("n_pairs", 0) or 0), float(row["se_log"]), int(row["n_a"]),
                  int(row["n_b"]), float(row["sd_log_a"]), float(row["sd_log_b"]))


def spread(n_pairs: int, se_log: float, n_a: int, n_b: int, sd_log_a: float,
           sd_log_b: float) -> PairSpread:
    """What a pair's test rests on: paired (2 or more iterations in common), the SD of its
    per-iteration log differences; else each side's variance of logs."""
    if n_pairs >= 2:
        return PairSpread(n_pairs, paired_sd=se_log * math.sqrt(n_pairs))
    return PairSpread(min(n_a, n_b), var_a=sd_log_a ** 2, var_b=sd_log_b ** 2)


def needs_of(row: pd.Series, margin: float, level: float | None = None) -> float:
    """The iterations that resolve this pair 4 times in 5 (module docstring), its test at
    `level` (default: the pair's own)."""
    level = float(row["alpha"]) if level is None else level
    return needs_iterations(float(row["ratio"]), pair_spread(row), level, margin)


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
            sliced = bool(record.workload_metadata.get("slices"))
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


def word(decision: str, reading: str = BETWEEN) -> str:
    """How `reading` (WORDS) says one of the rule's answers."""
    return WORDS[reading][decision]


def swapped(decision: str) -> str:
    """The answer said the other way round (b against a): faster and slower trade places."""
    return {FASTER: SLOWER, SLOWER: FASTER}.get(decision, decision)


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


@dataclass(frozen=True)
class PairAnswer:
    """One pair decided: the ratio first/second with its interval, the rule's answer
    (the first relative to the second, in the metric's direction) and, unresolved, the
    iterations a side that would resolve it 4 times in 5."""

    ratio: float
    low: float
    high: float
    decision: str
    needs: float
    pair: PairResult | None = None  # what the model found (None: not comparable)
    note: str = ""  # why there is no interval

    def word(self, reading: str = BETWEEN) -> str:
        return word(self.decision, reading)

    @property
    def estimable(self) -> bool:
        return self.pair is not None and self.pair.estimable


def spread_of(pair: PairResult) -> PairSpread:
    """What a compared pair's test rests on (spread)."""
    return spread(pair.n_pairs, pair.se_log, pair.n_a, pair.n_b, pair.sd_log_a,
                  pair.sd_log_b)


def answer_of(pair: PairResult, first: str, better: str, margin: float,
              needs_level: float | None = None) -> PairAnswer:
    """The rule's answer for one pair the model compared, turned so that its ratio is
    `first` (pair.a or pair.b) over the other: the one place a compared pair becomes a
    ratio, an interval, a decision and what an unresolved one needs (at `needs_level`,
    default the pair's own)."""
    ratio, low, high = pair.ratio, pair.ratio_ci_low, pair.ratio_ci_high
    if pair.b == first:
        ratio, low, high = turned(ratio, low, high)
    decision = decided(pair.estimable, pair.significant, ratio, low, high, better, margin)
    needs = math.nan
    if decision == UNRESOLVED and pair.estimable:
        needs = needs_iterations(ratio, spread_of(pair),
                                 pair.alpha if needs_level is None else needs_level, margin)
    return PairAnswer(ratio, low, high, decision, needs, pair, pair.note)


def decide_pair(first: Mapping[int, float], second: Mapping[int, float], better: str,
                margin: float, *, paired: bool = True, alpha: float = ALPHA,
                family: int = 1, not_blocks: str = IMPORTED) -> PairAnswer:
    """Two groups ({iteration: value}) to their answer: the ratio first/second of
    geometric means with its interval from the one model of pairs (paired on the
    iterations both ran when `paired`, else Welch; Bonferroni over `family`), the rule's
    decision and what an unresolved one needs. Two groups that cannot be compared get
    the ratio of their geometric means, no interval and `unresolved`, with the reason."""
    found = compare({"first": dict(first), "second": dict(second)}, paired, alpha,
                    family=family, not_blocks=not_blocks)
    if isinstance(found, str):
        centre = geomean(first.values()) / geomean(second.values()) \
            if geomean(second.values()) else math.nan
        return PairAnswer(centre, math.nan, math.nan, UNRESOLVED, math.nan, None, found)
    (pair,) = found.pairs
    return answer_of(pair, "first", better, margin)
