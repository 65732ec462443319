"""Factor effects of a sweep: how much each level of each factor changes a job's primary
metric, and whether it changes which target is best.

For each job and its primary metric, linear models of the logarithms of the runs' values
(statsmodels OLS): a level's coefficient is the log of its ratio to the factor's
reference level (the first given). The design is a split plot, and each factor is
compared on its own stratum:

- a workload option (iodepth, bs, …) varies within the fresh file system an iteration
  made for a target: its runs are compared within each (target, iteration) block, so
  the file system's own luck and the disk's drift cancel (for one two-level factor on
  one target this is exactly the paired t on log ratios);
- a target option (mount or mkfs options, a zfs property) varies between file systems:
  each target variant's mean over the job's variants is one value per iteration, with
  iterations and targets as blocks. A factor that applies to some targets only (a zfs
  property) is estimated within them.

Every effect of the campaign is one family: its interval is the Bonferroni (1 − α/m) t
interval on its stratum's residual degrees of freedom and p_adj = min(1, m·p), so "the
interval excludes 1" and "p_adj < α" agree. Whether a factor changes the ranking of the
targets: target × factor terms added against the model without them (an F test,
statsmodels' compare_f_test), Bonferroni over every such test of the campaign; and per
level, which target is first by its geometric mean. The residual variance is pooled over
a stratum's cells (the model's assumption: the same spread on the log scale); each
cell's own interval stays in summary.csv. Checked by simulation with known truth
(tests/analysis/test_sweep_model.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from fslab.analysis.pairs.decisions import best_of
from fslab.analysis.pairs.model import ALPHA, ratio_exp, t_inference
from fslab.core.cell_keys import ordered

EFFECT_COLUMNS = ["workload", "op", "metric", "factor", "level", "reference", "ratio",
                  "ratio_ci_low", "ratio_ci_high", "p_adj", "p_value", "se_log", "df",
                  "alpha", "family", "n", "targets", "interaction_p", "interaction_p_adj",
                  "by_target", "first_by_level", "ranking_changes", "model", "note"]

METHOD = ("Factor effects (sweeps): per job and primary metric, linear models of the runs' "
          "logarithms (statsmodels OLS), one indicator per level of each factor, so a level's "
          "coefficient is its ratio to the reference level (the first given). A split plot: "
          "workload options are compared within each fresh file system (blocks: target × "
          "iteration), target options between file systems (each variant's mean, blocks: "
          "iteration and target). Bonferroni intervals over every effect of the campaign. "
          "Whether a factor changes the targets' ranking: target × factor terms added, an F "
          "test (Bonferroni over those tests), and the first target at each level. The best "
          "configuration and those within reach of it: the pairs' own blocked model.")


@dataclass
class Design:
    """One job's runs for the model: log values, blocks, targets and factor levels."""

    job: str
    op: str
    metric: str
    better: str
    rows: pd.DataFrame  # y, iteration, base, one column per factor (None: not applied)
    factors: list[str]
    levels: dict[str, list[str]]  # factor -> its levels present, reference first
    notes: list[str] = field(default_factory=list)


def designs(runs: pd.DataFrame, questions: dict[str, tuple[str, str]], factors: list[str],
            declared: dict[str, list[str]]) -> list[Design]:
    """The model's data of each swept job: its primary (op, metric) rows with a factor of
    two levels or more."""
    out: list[Design] = []
    if runs.empty or not factors:
        return out
    jobs = runs["job"].astype(str)
    for job, (op, metric) in questions.items():
        rows = runs[(jobs == job) & (runs["op"].astype(str) == op)
                    & (runs["metric"].astype(str) == metric)]
        rows = rows[rows["value"].astype(float) > 0]
        present = [f for f in factors if f in rows and rows[f].dropna().nunique() > 1]
        if rows.empty or not present:
            continue
        frame = pd.DataFrame({"y": np.log(rows["value"].astype(float).to_numpy()),
                              "iteration": rows["iteration"].astype(int).to_numpy(),
                              "base": rows["target_base"].astype(str).to_numpy(),
                              "target": rows["target"].astype(str).to_numpy(),
                              "workload": rows["workload"].astype(str).to_numpy()})
        for factor in present:
            frame[factor] = [None if v is None or (isinstance(v, float) and math.isnan(v))
                             else str(v) for v in rows[factor]]
        levels = {f: ordered(frame[f].dropna().tolist(), declared.get(f)) for f in present}
        out.append(Design(job, op, metric, str(rows["better"].iloc[0]), frame, present,
                          levels))
    return out


WITHIN = "within each fresh file system (blocks: target × iteration)"
BETWEEN = ("between file systems (blocks: iteration; each target variant's mean over the "
           "job's variants)")


@dataclass
class Stratum:
    """The runs one kind of factor is compared on: a workload option within the file
    system each iteration made (its variants share it), a target option between file
    systems (one value each: the mean over the workload's variants)."""

    name: str
    rows: pd.DataFrame
    blocks: list[str]  # columns whose every level is a block (indicator columns)
    factors: list[str]


def strata(design: Design) -> list[Stratum]:
    """The design's strata (a split-plot: file systems are the whole plots, the runs on
    one of them the subplots)."""
    rows = design.rows
    within = [f for f in design.factors
              if (rows.groupby("target")[f].nunique(dropna=False) > 1).any()]
    between = [f for f in design.factors if f not in within]
    out = []
    if within:
        out.append(Stratum(WITHIN, rows.assign(block=rows["target"] + "#"
                                               + rows["iteration"].astype(str)),
                           ["block"], within))
    if between:
        means = rows.groupby(["target", "iteration"], sort=True).agg(
            y=("y", "mean"), base=("base", "first"),
            **{f: (f, "first") for f in between}).reset_index()
        out.append(Stratum(BETWEEN, means, ["iteration", "base"], between))
    return out


def _matrix(stratum: Stratum, levels: dict[str, list[str]],
            interactions: tuple[str, ...] = ()) -> pd.DataFrame:
    """The design matrix: intercept, block indicators, one indicator per factor level but
    the reference (and target × factor terms for `interactions`)."""
    rows = stratum.rows
    columns: dict[str, np.ndarray] = {"const": np.ones(len(rows))}
    for name in stratum.blocks:
        for level in sorted(set(rows[name]))[1:]:
            columns[f"{name}[{level}]"] = (rows[name] == level).to_numpy(dtype=float)
    bases = sorted(set(rows["base"]))
    for factor in stratum.factors:
        for level in levels[factor][1:]:
            indicator = (rows[factor] == level).to_numpy(dtype=float)
            columns[f"{factor}[{level}]"] = indicator
            if factor in interactions:
                for base in bases[1:]:
                    column = indicator * (rows["base"] == base).to_numpy(dtype=float)
                    if column.any():
                        columns[f"target[{base}]:{factor}[{level}]"] = column
    return pd.DataFrame(columns)


@dataclass
class Fitted:
    """One job's fitted effects, before the campaign-wide adjustment."""

    design: Design
    # (factor, level) -> (log ratio, its standard error, residual df, the stratum)
    estimates: dict[tuple[str, str], tuple[float, float, float, str]]
    interaction: dict[str, float]  # factor -> F test p (NaN: one target only)
    note: str = ""


def _full_rank(matrix: pd.DataFrame) -> bool:
    return len(matrix) > matrix.shape[1] and \
        np.linalg.matrix_rank(matrix.to_numpy()) == matrix.shape[1]


def fit(design: Design) -> Fitted:
    """OLS on the logs (statsmodels), stratum by stratum; the interaction F test of each
    factor that two or more targets have."""
    from statsmodels.regression.linear_model import OLS

    estimates: dict[tuple[str, str], tuple[float, float, float, str]] = {}
    interaction: dict[str, float] = {}
    for stratum in strata(design):
        matrix = _matrix(stratum, design.levels)
        y = stratum.rows["y"].to_numpy()
        if not _full_rank(matrix):
            why = ("too few runs for the model (every level needs 2 or more iterations)"
                   if len(y) <= matrix.shape[1] else
                   "levels confounded (missing cells): not estimable")
            return Fitted(design, {}, {}, why)
        result = OLS(y, matrix).fit()
        for factor in stratum.factors:
            for level in design.levels[factor][1:]:
                name = f"{factor}[{level}]"
                estimates[(factor, level)] = (float(result.params[name]),
                                              float(result.bse[name]),
                                              float(result.df_resid), stratum.name)
            applied = stratum.rows[stratum.rows[factor].notna()]
            full = _matrix(stratum, design.levels, (factor,))
            if applied["base"].nunique() < 2 or not _full_rank(full):
                interaction[factor] = math.nan
                continue
            _, p, _ = OLS(y, full).fit().compare_f_test(result)
            interaction[factor] = float(p)
    return Fitted(design, estimates, interaction)


def effects_table(fitted: list[Fitted], alpha: float = ALPHA) -> pd.DataFrame:
    """stats/effects.csv: one row per level of each factor but its reference."""
    family = sum(len(f.estimates) for f in fitted) or 1
    tests = sum(1 for f in fitted for p in f.interaction.values() if p == p) or 1
    level = alpha / family
    rows: list[dict[str, object]] = []
    for one in fitted:
        design = one.design
        base = {"workload": design.job, "op": design.op, "metric": design.metric}
        if one.note:
            rows += [{**base, "factor": f, "reference": design.levels[f][0], "note": one.note}
                     for f in design.factors]
            continue
        for factor in design.factors:
            p_int = one.interaction.get(factor, math.nan)
            ranks = first_by_level(design, factor)
            for name in design.levels[factor][1:]:
                estimate, se, df, stratum = one.estimates[(factor, name)]
                _, p, low, high = t_inference(estimate, se, df, level)
                rows.append({
                    **base, "factor": factor, "level": name,
                    "reference": design.levels[factor][0], "ratio": ratio_exp(estimate),
                    "ratio_ci_low": ratio_exp(low), "ratio_ci_high": ratio_exp(high),
                    "p_adj": min(1.0, family * p), "p_value": p, "se_log": se,
                    "df": df, "alpha": level, "family": family, "model": stratum,
                    "n": int(design.rows["iteration"].nunique()),
                    "targets": ", ".join(sorted(set(design.rows.loc[
                        design.rows[factor].notna(), "base"]))),
                    "interaction_p": p_int,
                    "interaction_p_adj": min(1.0, tests * p_int) if p_int == p_int else math.nan,
                    "by_target": by_target(design, factor, name),
                    "first_by_level": "; ".join(f"{factor}={lv}: {t}" for lv, t in ranks.items()),
                    "ranking_changes": len(set(ranks.values())) > 1, "note": ""})
    return pd.DataFrame(rows, columns=EFFECT_COLUMNS)


def _cell_means(design: Design, factor: str) -> pd.Series:
    """Mean log value per (target base, level of `factor`), over iterations and the
    other factors' levels."""
    applied = design.rows[design.rows[factor].notna()]
    return applied.groupby(["base", factor])["y"].mean()


def by_target(design: Design, factor: str, level: str) -> str:
    """'ext4 4.02×; xfs 2.41×': the level's ratio to the reference on each target
    (geometric means over iterations and the other factors; descriptive)."""
    means = _cell_means(design, factor)
    reference = design.levels[factor][0]
    parts = []
    for base in sorted(set(means.index.get_level_values(0))):
        if (base, level) in means.index and (base, reference) in means.index:
            parts.append(f"{base} {math.exp(means[(base, level)] - means[(base, reference)]):.3g}×")
    return "; ".join(parts)


def first_by_level(design: Design, factor: str) -> dict[str, str]:
    """{level: the target first at it} (by geometric mean, in the metric's direction)."""
    means = _cell_means(design, factor)
    out = {}
    for level in design.levels[factor]:
        at = {base: value for (base, lv), value in means.items() if lv == level}
        first = best_of(at, design.better)
        if len(at) >= 2 and first is not None:
            out[level] = first
    return out
