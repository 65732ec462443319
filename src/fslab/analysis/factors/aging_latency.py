"""The aging thesis's own comparisons, decided (stats/aging_latency.csv): each operation's
latency during aging — its median over one aging (parsers/aging_kind.aging_summary:
`medians`) — compared across the campaign's iterations between agings that differ in one
thing only:

- the file system (ext4 against xfs at one level: the thesis's Table 7.2 and section 7.5,
  "XFS and EXT4 are quite similar");
- the level of `age` (thesis-99 against thesis-80 on one file system: Table 7.1, "with
  higher utilisation of file systems, performance degrading effect becomes observable");
- the `fstrim` factor (untrimmed against trimmed: Table 7.4 and section 7.7, "regular
  running of fstrim have indeed beneficial effects");
- any other factor of the targets the agings differ in, the same way.

Each iteration ages every file system of the campaign with the same seed at a level (its
operations the same), so the two agings of an iteration are a pair: the ratio a/b of
their medians is one observation, and the interval is the pairs' paired t on the log
ratios across iterations (analysis.pairs.decisions.decide_pair, latency: lower is
better), Bonferroni over every row of the table, decided by the verdicts' rule and
margin in the verdicts' words: a "faster" (its median latency lower), "slower",
"equivalent" (the interval inside the margin) or "unresolved". One aging per cell (an
aging run, age_reuse) gives no interval and says so. The thesis's own ratio is beside
each row where its tables give one (its devices were HDDs and SSDs, not this machine's
disk). Coverage and words are checked by simulation with known ratios
(tests/analysis/test_aging_latency_decided.py).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import pandas as pd

from fslab.analysis.pairs.decisions import decide_pair
from fslab.analysis.pairs.model import ALPHA
from fslab.analysis.pairs.pair import UNRESOLVED
from fslab.analysis.statistic import Measured, Statistic
from fslab.core.campaign_settings import CampaignSettings
from fslab.core.cell_keys import TARGET, factor_scopes
from fslab.core.metrics import LOWER
from fslab.core.units import DEFAULT_MARGIN, parse_margin

COLUMNS = ["op", "comparison", "a", "b", "at", "ratio", "ratio_ci_low", "ratio_ci_high",
           "decision", "p_adj", "n", "median_a_ns", "median_b_ns", "thesis_ratio",
           "thesis_table", "alpha", "family", "note", "detail"]
FILE_SYSTEM = "file system"
METHOD = ("The thesis's comparisons (aging_latency.csv): each operation's median latency "
          "over one aging, compared between agings that differ in one thing only (the "
          "file system, the level of age, fstrim, another factor of the targets): the "
          "ratio a/b of the two agings of each iteration (the same seed: the same "
          "operations), a paired t interval on their logs across iterations, Bonferroni "
          "over every row, decided by the verdicts' rule and margin (faster: a's median "
          "latency lower).")

# The thesis's medians (ms), Petrovič 2017: Table 7.1 (HDD, 80 % against 99 %), Table 7.2
# (SSD, XFS against EXT4), Table 7.4 (XFS on SSD, trimmed against not trimmed).
THESIS_OPS = ("random_write", "truncate", "read", "create", "random_read", "append",
              "delete")
THESIS_80_99 = dict(zip(THESIS_OPS, ((11.40, 11.84), (8.62, 8.93), (8.03, 8.54),
                                     (11.73, 11.98), (6.42, 6.56), (17.66, 17.93),
                                     (0.10, 0.13)), strict=True))
THESIS_XFS_EXT4 = dict(zip(THESIS_OPS, ((0.434, 0.594), (0.70, 0.32), (1.37, 1.56),
                                        (0.38, 0.40), (0.30, 0.46), (1.49, 1.76),
                                        (0.097, 0.049)), strict=True))
THESIS_TRIMMED_NOT = dict(zip(THESIS_OPS, ((0.43, 0.52), (0.70, 1.05), (1.37, 1.85),
                                           (0.33, 0.34), (0.30, 0.38), (1.49, 1.99),
                                           (0.097, 0.102)), strict=True))


@dataclass(frozen=True)
class Aging:
    """One aging of a campaign: its file system, its target's levels, its iteration and
    each operation's median latency (ns)."""

    base: str
    levels: tuple[tuple[str, str], ...]
    iteration: int
    medians: dict[str, float]


def agings_of(records: Iterable[Any], settings: dict[str, Any]) -> list[Aging]:
    """Every aging the records hold with its medians (a campaign place's, or an aging
    run's), keyed by its target's levels (the job's aside); one that fell short of its
    level is not an aging at that level and is left out."""
    scopes = CampaignSettings.from_table(settings).scopes
    out = []
    for record in records:
        summary = record.workload_metadata.section("aging")
        medians = summary.get("medians") if isinstance(summary, dict) else None
        if not medians or summary.get("short"):  # a level it did not reach: not that level
            continue
        kinds = factor_scopes(scopes, list(record.levels))
        levels = tuple(sorted((f, str(v)) for f, v in record.levels.items()
                              if kinds[f] == TARGET))
        out.append(Aging(str(record.target_base or record.target), levels,
                         int(record.iteration), {str(op): float(found[0])
                                                 for op, found in medians.items()
                                                 if found and float(found[0]) > 0}))
    return out


def comparisons(agings: list[Aging], declared: dict[str, list[str]]
                ) -> list[tuple[str, str, str, str, list[Aging], list[Aging]]]:
    """(what differs, a, b, at: the rest, a's agings, b's) for every two cells that
    differ in one thing only: the file system (a before b by name) or one factor (the
    later of its declared levels as a: 99 % over 80 %, fstrim off over on)."""
    cells: dict[tuple[str, tuple[tuple[str, str], ...]], list[Aging]] = {}
    for aging in agings:
        cells.setdefault((aging.base, aging.levels), []).append(aging)
    keys = sorted(cells)
    out = []
    for i, first in enumerate(keys):
        for second in keys[i + 1:]:
            what = _differs(first, second)
            if what is None:
                continue
            rest = " ".join(f"{f}={v}" for f, v in first[1] if f != what)
            if what == FILE_SYSTEM:
                out.append((what, first[0], second[0], rest, cells[first], cells[second]))
                continue
            one, other = dict(first[1])[what], dict(second[1])[what]
            order = declared.get(what, [])
            later = (order.index(one) if one in order else 0) > (
                order.index(other) if other in order else 0)
            a, b = (first, second) if later else (second, first)
            at = " ".join(filter(None, [a[0], rest]))
            out.append((what, dict(a[1])[what], dict(b[1])[what], at, cells[a], cells[b]))
    return out


def _differs(first: tuple[str, tuple[tuple[str, str], ...]],
             second: tuple[str, tuple[tuple[str, str], ...]]) -> str | None:
    """The one thing two cells differ in (the file system or a factor), None otherwise."""
    one, other = dict(first[1]), dict(second[1])
    if set(one) != set(other):
        return None
    factors = [f for f in one if one[f] != other[f]]
    if first[0] != second[0]:
        return FILE_SYSTEM if not factors else None
    return factors[0] if len(factors) == 1 else None


def thesis_ratio(what: str, a: str, b: str, op: str) -> tuple[float, str]:
    """The thesis's own a/b of this comparison's median latency, and its table (NaN, ''
    where it gives none)."""
    if what == FILE_SYSTEM and {a, b} == {"ext4", "xfs"} and op in THESIS_XFS_EXT4:
        xfs, ext4 = THESIS_XFS_EXT4[op]
        return (ext4 / xfs if a == "ext4" else xfs / ext4), "7.2 (SSD)"
    if what == "age" and {a, b} == {"thesis-80", "thesis-99"} and op in THESIS_80_99:
        low, high = THESIS_80_99[op]
        return (high / low if a == "thesis-99" else low / high), "7.1 (HDD)"
    if what == "fstrim" and {a, b} == {"0", "1"} and op in THESIS_TRIMMED_NOT:
        trimmed, untrimmed = THESIS_TRIMMED_NOT[op]
        return (untrimmed / trimmed if a == "0" else trimmed / untrimmed), "7.4 (XFS, SSD)"
    return math.nan, ""


def latency_table(measured: Measured) -> pd.DataFrame:
    """stats/aging_latency.csv (module doc); empty without two comparable agings."""
    settings = CampaignSettings.from_table(measured.settings)
    margin = parse_margin(measured.settings.get("margin", DEFAULT_MARGIN))
    found = comparisons(agings_of(measured.records, measured.settings), settings.levels)
    planned = []
    for what, a, b, at, first, second in found:
        ops = sorted(set.intersection(*(set(x.medians) for x in first + second)))
        planned += [(what, a, b, at, op, {x.iteration: x.medians[op] for x in first},
                     {x.iteration: x.medians[op] for x in second}) for op in ops]
    family = max(1, len(planned))
    rows = [_row(item, margin, family) for item in planned]
    return pd.DataFrame(rows, columns=COLUMNS)


def _row(item: tuple[Any, ...], margin: float, family: int) -> dict[str, Any]:
    what, a, b, at, op, first, second = item
    pair = decide_pair(first, second, LOWER, margin, paired=True, family=family)
    thesis, table = thesis_ratio(what, a, b, op)
    common = sorted(set(first) & set(second))
    row = {"op": op, "comparison": what, "a": a, "b": b, "at": at, "ratio": pair.ratio,
           "ratio_ci_low": pair.ratio_ci_low, "ratio_ci_high": pair.ratio_ci_high,
           "decision": pair.decision or UNRESOLVED, "p_adj": pair.p_adj, "n": len(common),
           "median_a_ns": _median(first, common), "median_b_ns": _median(second, common),
           "thesis_ratio": thesis, "thesis_table": table, "alpha": ALPHA / family,
           "family": family, "note": pair.note}
    row["detail"] = detail(row)
    return row


def _median(values: dict[int, float], common: list[int]) -> float:
    found = [values[i] for i in common]
    return float(pd.Series(found).median()) if found else math.nan


def detail(row: dict[str, Any]) -> str:
    """'create, ext4 against xfs at age=thesis-99: ext4 slower, 1.31× the median latency
    (CI 1.1–1.6×) on 6 iterations; the thesis: 1.05× (Table 7.2 (SSD))'."""
    a, b = row["a"], row["b"]
    if row["comparison"] != FILE_SYSTEM:
        a, b = f"{row['comparison']}={a}", f"{row['comparison']}={b}"
    what = {"faster": f"{a} faster", "slower": f"{a} slower",
            "equivalent": "the same within the margin"}.get(row["decision"], "unresolved")
    interval = (f" (CI {row['ratio_ci_low']:.3g}–{row['ratio_ci_high']:.3g}×)"
                if row["ratio_ci_low"] == row["ratio_ci_low"] else f" ({row['note']})")
    at = f" at {row['at']}" if row["at"] else ""
    text = (f"{row['op']}, {a} against {b}{at}: {what}, {row['ratio']:.3g}× the median "
            f"latency{interval} on {row['n']} iteration{'s' * (row['n'] != 1)}")
    if row["thesis_ratio"] == row["thesis_ratio"]:
        text += f"; the thesis: {row['thesis_ratio']:.3g}× (Table {row['thesis_table']})"
    return text


STATISTIC = Statistic("aging_latency", METHOD, latency_table)
