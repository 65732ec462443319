"""The pooled answers in words, as the verdicts say theirs (analysis/verdicts.py): per
primary question, "ext4 1.21× faster than xfs on average (99 % CI 1.14–1.28×); next
time 1.05–1.40×: holds next time", the family it was adjusted over, and the machine time
each decision cost."""

from __future__ import annotations

import math

import pandas as pd

from fslab.analysis.pairs.pair import EQUIVALENT, UNRESOLVED
from fslab.analysis.sittings.pooled import TWO
from fslab.analysis.verdicts import advantage_words
from fslab.core.metrics import HIGHER, METRIC_UNITS, title
from fslab.core.units import format_bound as bound
from fslab.core.units import format_duration, turned

HOLDS_NEXT, MAY_NOT_NEXT = "holds next time", "may not hold next time"
UNIT_WORDS = {"sitting": ("sitting", "sittings"), "host": ("machine", "machines")}


def pooled_lines(pooled: pd.DataFrame, campaign: str = "") -> list[str]:
    """The pooled verdicts' text (pooled_verdicts.txt): the family, then per workload its
    primary questions, then the machine time."""
    primary = pooled[pooled["primary"].astype(bool)] if not pooled.empty else pooled
    if primary.empty:
        return ["No primary question was measured by two or more sittings: nothing pooled."]
    by = str(primary["by"].iloc[0])
    one, many = UNIT_WORDS.get(by, (by, by + "s"))
    level = 100 * (1 - float(primary["alpha"].min()))
    ks = sorted(set(primary["k"].astype(int)))
    lines = [f"Pooled {'/'.join(map(str, ks))} {many}{f' of {campaign}' if campaign else ''}: "
             f"{len(primary)} question{'s' * (len(primary) != 1)}, Bonferroni-adjusted "
             f"together — each interval is a {level:.4g} % interval. 'On average': the "
             f"mean over {many}; 'next time': where the next {one}'s estimate should fall."]
    if (primary["note"] == TWO).any():
        lines.append(f"Only two {many}: {TWO.split(': ', 1)[1]}.")
    for workload, rows in primary.groupby("workload", sort=False):
        lines.append(f"== {workload} ==")
        for _, row in rows.iterrows():
            lines.append("  " + pooled_sentence(row, one))
    lines.append(decided_line(primary))
    return lines


def pooled_sentence(row: pd.Series, unit: str = "sitting") -> str:
    """One pooled question in the verdicts' words."""
    metric = str(row["metric"])
    better = METRIC_UNITS.get(metric, ("", HIGHER))[1]
    x, y = str(row["a"]), str(row["b"])
    ratio, low, high = (float(row["ratio"]), float(row["ratio_ci_low"]),
                        float(row["ratio_ci_high"]))
    next_low, next_high = float(row["next_low"]), float(row["next_high"])
    if better != HIGHER:
        ratio, low, high = turned(ratio, low, high)
        next_low, next_high = 1 / next_high, 1 / next_low
    if ratio < 1:
        x, y = y, x
        ratio, low, high = turned(ratio, low, high)
        next_low, next_high = 1 / next_high, 1 / next_low
    word = advantage_words(metric, better)
    what = title(metric, long=True)
    decision, following = str(row["decision"]), str(row["next_decision"])
    interval = f"CI {bound(low)}–{bound(high)}×"
    k = int(row["k"])
    if decision == EQUIVALENT:
        head = (f"{x} = {y} on average: the same within ±{float(row['margin']):.0%} "
                f"({x} {ratio:.3g}× {word}, {interval})")
    elif decision == UNRESOLVED:
        head = f"{x} ? {y} on average: not resolved ({x} {ratio:.3g}× {word}, {interval})"
    else:
        head = f"{x} {ratio:.3g}× {word} than {y} on average ({interval})"
    if math.isfinite(next_low):
        holds = HOLDS_NEXT if following == decision != UNRESOLVED else MAY_NOT_NEXT
        head += f"; next {unit} {bound(next_low)}–{bound(next_high)}×: {holds}"
    else:
        head += f"; next {unit}: cannot be said from {k}"
    spread = (f"{unit}s differ by τ = {100 * math.expm1(float(row['tau'])):.1f} %, "
              f"I² {100 * float(row['i2']):.0f} %")
    return f"{what} ({k} {unit}s): {head} ({spread})"


def decided_line(primary: pd.DataFrame) -> str:
    """'Decided 4 of 5 on average and 3 next time, in 12 min of machine time (…)'."""
    average = int((primary["decision"] != UNRESOLVED).sum())
    following = int((primary["next_decision"] != UNRESOLVED).sum())
    seconds = primary["machine_s"].astype(float)
    spent = ""
    if seconds.notna().any():
        total = float(seconds.sum())
        spent = f" in {format_duration(total)} of machine time" + (
            f" ({format_duration(total / average)} per question decided on average)"
            if average else "")
    return (f"Decided {average} of {len(primary)} questions on average and {following} next "
            f"time{spent}.")
