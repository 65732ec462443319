"""stats/pooled.csv: every pair of several sittings (or machines) of one campaign pooled
(analysis.sittings.pooled), decided on average and next time by the verdicts' rule; and
each sitting's own estimate beside it (pooled_sittings.csv: the forest plot's rows).

Input: one row per sitting × pair (SITTING_PAIRS), read off each sitting's pairwise.csv
(`sitting_rows`) or, for a catalogue, the pairs its runs give. The primary pairs are one
family, Bonferroni-adjusted together as the verdicts' are (a single pair: family 1):
every interval of a primary row is at 1 − α/m; the others, exploratory, at 95 %.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import pandas as pd

from fslab.analysis.pairs.pair import Pair
from fslab.analysis.sittings.pooled import METHOD, decisions, fixed_effect, pool, ratio_interval
from fslab.analysis.sittings.repeat import SittingSpread
from fslab.core.metrics import HIGHER, METRIC_UNITS

ALPHA = 0.05
By = Literal["sitting", "host"]
PAIR = ["workload", "op", "metric", "primary", "a", "b"]
SITTING_PAIRS = ["sitting", "host", *PAIR, "estimate", "se", "df", "machine_s"]
POOLED_COLUMNS = [*PAIR, "k", "ratio", "ratio_ci_low", "ratio_ci_high", "next_low",
                  "next_high", "tau", "i2", "decision", "next_decision", "machine_s", "by",
                  "units", "alpha", "family", "margin", "se_log", "fixed_ci_low",
                  "fixed_ci_high", "note", "method"]
FOREST_COLUMNS = [*PAIR, "unit", "ratio", "ratio_ci_low", "ratio_ci_high", "host"]


def sitting_rows(pairs: Sequence[Pair], sitting: str, host: str) -> pd.DataFrame:
    """One sitting's pair records (its pairwise.csv: analysis.pairs.pair.pairs_of) as
    rows of SITTING_PAIRS: each log ratio, standard error, degrees of freedom and the
    machine seconds its runs took."""
    return pd.DataFrame([
        {"sitting": sitting, "host": host, "workload": p.workload, "op": p.op,
         "metric": p.metric, "primary": p.primary, "a": p.a, "b": p.b,
         "estimate": math.log(p.ratio), "se": p.se_log, "df": p.df, "machine_s": p.machine_s}
        for p in pairs if p.se_log > 0 and p.ratio > 0], columns=SITTING_PAIRS)


def units_of(rows: pd.DataFrame, by: By) -> pd.DataFrame:
    """The units a pool draws from: each sitting, or (by host) each host's sittings
    averaged — its log ratio their mean, its standard error that mean's."""
    if by == "sitting":
        return rows.assign(unit=rows["sitting"])
    keys = [*PAIR, "host"]
    grouped = rows.groupby(keys, sort=False, observed=True)
    out = grouped.agg(estimate=("estimate", "mean"), df=("df", "sum"),
                      machine_s=("machine_s", "sum"),
                      se=("se", lambda s: math.sqrt(float((s ** 2).sum())) / len(s)),
                      count=("sitting", "nunique")).reset_index()
    return out.assign(unit=out["host"], sitting=out["host"])


def pooled_table(rows: pd.DataFrame, by: By = "sitting", margin: float = 0.10,
                 spread: SittingSpread | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(pooled, forest): POOLED_COLUMNS for every pair that two or more units measured,
    FOREST_COLUMNS for each unit's own estimate at the same level. `spread`: the host's
    between-sitting spread (a next interval from two sittings)."""
    units = units_of(rows, by)
    groups = [(key, group) for key, group in units.groupby(PAIR, sort=True, observed=True)
              if group["unit"].nunique() >= 2]
    family = max(1, sum(1 for key, _ in groups if bool(key[3])))
    pooled, forest = [], []
    for key, group in groups:
        primary = bool(key[3])
        level = ALPHA / family if primary else ALPHA
        found = pool(group["estimate"].to_numpy(float), group["se"].to_numpy(float), level,
                     spread if by == "sitting" else None,
                     float(group["df"].mean()) if len(group) else 4.0)
        ratio, low, high, next_low, next_high = ratio_interval(found)
        better = METRIC_UNITS.get(str(key[2]), ("", HIGHER))[1]
        # what one campaign of all the sittings' iterations would claim (τ ignored)
        _, fixed_low, fixed_high = fixed_effect(group["estimate"], group["se"], group["df"],
                                                level)
        decision, following = decisions(found, better, margin) if primary else ("", "")
        pooled.append({**dict(zip(PAIR, key, strict=True)), "k": found.k, "ratio": ratio,
                       "ratio_ci_low": low, "ratio_ci_high": high, "next_low": next_low,
                       "next_high": next_high, "tau": found.tau, "i2": found.i2,
                       "decision": decision, "next_decision": following,
                       "machine_s": float(group["machine_s"].sum(min_count=1)),
                       "by": by, "units": ";".join(map(str, group["unit"])),
                       "alpha": level, "family": family if primary else 1,
                       "margin": margin, "se_log": found.se,
                       "fixed_ci_low": math.exp(fixed_low),
                       "fixed_ci_high": math.exp(fixed_high), "note": found.note,
                       "method": METHOD})
        from scipy.special import stdtrit

        for unit in group.itertuples():
            crit = float(stdtrit(max(float(unit.df), 1.0), 1 - level / 2))
            forest.append({**dict(zip(PAIR, key, strict=True)), "unit": str(unit.unit),
                           "ratio": math.exp(float(unit.estimate)),
                           "ratio_ci_low": math.exp(float(unit.estimate) - crit * unit.se),
                           "ratio_ci_high": math.exp(float(unit.estimate) + crit * unit.se),
                           "host": str(unit.host)})
    return (pd.DataFrame(pooled, columns=POOLED_COLUMNS),
            pd.DataFrame(forest, columns=FOREST_COLUMNS))
