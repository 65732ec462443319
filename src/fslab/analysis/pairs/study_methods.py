"""The fio notebook's own tests on fslab's data, beside fslab's answer to the same
question (stats/study_methods.csv, stats/study_qq.csv, lines in the verdicts).

Where the notebook's preset ran (study "desktop-fio": basic5, direct5), fslab runs what
the notebook ran, with scipy and statsmodels as the notebook did:
- per workload (fslab's question: do the targets differ on its primary metric?): a
  one-way ANOVA (the notebook's ols + anova_lm, type II: the F of scipy's f_oneway, which
  stays right where no value spreads within a target) with its checks — Shapiro–Wilk on
  the residuals, Levene (center = median) and the residuals' Q–Q points
  (scipy.stats.probplot) — and Kruskal–Wallis;
- pooled over every workload, as the notebook ran them: the ANOVA and Kruskal–Wallis of
  each of its metrics (read and write IOPS, bandwidth, mean completion latency), the
  paired Wilcoxon of ext4 against btrfs over (workload, iteration) pairs, and the linear
  regression of the metric on file system and workload with its R².
Each row carries fslab's decision on the same question and, where the two disagree, why.
fslab's rows are one per run; the notebook's table held each cell's mean once per
iteration and its median beside it (a 10-iteration cell gave 20 identical rows), so each
pooled row also gives the p its rows would have given (`p_notebook_rows`): with no
spread within a cell, n is inflated and any difference of means looks certain.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from fslab.analysis.pairs.study_words import (
    ALPHA,
    Reasons,
    by_question,
    decided,
    differ_any,
    differ_of,
    fslab_answer,
    pair_answer,
    pooled_line,
    workload_line,
)
from fslab.analysis.step import Step
from fslab.core.campaign_settings import CampaignSettings
from fslab.core.pair import Pair

if TYPE_CHECKING:
    from statsmodels.regression.linear_model import RegressionResultsWrapper

STUDY = "desktop-fio"
COLUMNS = ["test", "scope", "workload", "op", "metric", "groups", "n", "statistic", "p",
           "r2", "r2_log", "n_notebook_rows", "p_notebook_rows", "study_says", "fslab_says",
           "agree", "why"]
QQ_COLUMNS = ["workload", "op", "metric", "theoretical", "residual", "fit"]
# The notebook's metrics: Read/Write IOPS, bandwidth and mean latency.
POOLED = (("read", "iops"), ("write", "iops"), ("read", "bw_bytes"), ("write", "bw_bytes"),
          ("read", "clat_mean_ns"), ("write", "clat_mean_ns"))
# Levene's median-centred test needs 3 runs a target: with 2, both lie as far from their
# median, every group's spread of deviations is 0 and its statistic 0/0.
LEVENE_MIN = 3
EXACT = 1e-20  # a residual sum of squares this small against the values' own: none
WILCOXON_PAIR = ("ext4", "btrfs")  # the notebook's ("the most relevant for my setup")
METHOD = ("The study's way (the fio notebook's tests, scipy and statsmodels as it used them, "
          "on fslab's rows, one per run): per workload a one-way ANOVA of the primary metric "
          "on the target with Shapiro–Wilk on its residuals, Levene (median-centred), the "
          "residuals' Q–Q points and Kruskal–Wallis; pooled over the workloads, as the "
          "notebook ran them, the ANOVA and Kruskal–Wallis of each of its six metrics, the "
          "paired Wilcoxon of ext4 against btrfs over (workload, iteration) and the "
          "regression of the metric on target and workload with its R²; each beside fslab's "
          "decision for the same question, at the notebook's level 0.05, and the p the "
          "notebook's own rows (each cell's mean repeated, its median beside it) would give.")


def study_methods(runs: pd.DataFrame, settings: CampaignSettings,
                  asked: Iterable[tuple[str, str, str]], pairs: Sequence[Pair],
                  summary: pd.DataFrame
                  ) -> tuple[pd.DataFrame, pd.DataFrame, list[dict[str, str]]]:
    """(study_methods.csv, study_qq.csv, the verdicts' rows) of a campaign of the
    notebook's kind: its preset on two targets or more, repeated (empty otherwise)."""
    jobs = {job for job, study in settings.studies.items() if study == STUDY}
    empty: tuple[pd.DataFrame, pd.DataFrame, list[dict[str, str]]] = (
        pd.DataFrame(columns=COLUMNS), pd.DataFrame(columns=QQ_COLUMNS), [])
    if not jobs or runs.empty:
        return empty
    mine = runs[runs["job"].astype(str).isin(jobs)]
    if mine["target"].nunique() < 2:
        return empty
    cached = _cache_bound(summary)
    rows: list[dict[str, object]] = []
    qq: list[pd.DataFrame] = []
    said: list[dict[str, str]] = []
    for workload, op, metric in sorted(asked):
        cell = mine[(mine["workload"].astype(str) == workload)
                    & (mine["op"].astype(str) == op) & (mine["metric"].astype(str) == metric)]
        found, points = per_workload(cell, workload, op, metric,
                                     fslab_answer(pairs, workload, op, metric),
                                     cached.get(workload, ""))
        rows += found
        if not points.empty:
            qq.append(points)
        if found:
            said.append({"kind": "study_way", "workload": workload, "text": workload_line(found)})
    pooled_rows = pooled(mine, pairs, cached)
    rows += pooled_rows
    said += [{"kind": "study_way", "workload": "", "text": pooled_line(found)}
             for found in by_question(pooled_rows)]
    return (pd.DataFrame(rows, columns=COLUMNS),
            pd.concat(qq, ignore_index=True) if qq else pd.DataFrame(columns=QQ_COLUMNS), said)


def per_workload(cell: pd.DataFrame, workload: str, op: str, metric: str, fslab: str,
                 cache_bound: str) -> tuple[list[dict[str, object]], pd.DataFrame]:
    """The notebook's ANOVA with its checks and Kruskal–Wallis on one question's runs, and
    the residuals' Q–Q points."""
    from scipy import stats

    groups = {t: g["value"].to_numpy(dtype=float) for t, g in
              cell.groupby(cell["target"].astype(str), sort=True)}
    if len(groups) < 2 or any(len(g) < 2 for g in groups.values()):
        return [], pd.DataFrame(columns=QQ_COLUMNS)
    base = {"scope": "workload", "workload": workload, "op": op, "metric": metric,
            "groups": ", ".join(groups), "n": int(sum(len(g) for g in groups.values()))}
    statistic, p, residuals = anova(groups)
    differ = differ_of(fslab)
    # the notebook's table: each target's mean and median, once per iteration each
    copies = max(len(g) for g in groups.values())
    notebook = {t: np.repeat([g.mean(), np.median(g)], copies) for t, g in groups.items()}
    n_dup = int(sum(len(g) for g in notebook.values()))
    p_dup = anova(notebook)[1]
    rows = [decided("anova", base, statistic, p, fslab, differ,
                     Reasons(cache_bound, "", n_dup, p_dup))]
    if len(residuals) >= 3:
        w, shapiro_p = stats.shapiro(residuals)
        rows.append({**base, "test": "shapiro", "statistic": float(w), "p": float(shapiro_p),
                     "study_says": "residuals not normal: the ANOVA is not reliable"
                     if shapiro_p < ALPHA else "normal residuals not rejected",
                     "fslab_says": "fslab compares on the log scale and does not assume "
                                   "normal raw values", "agree": None, "why": ""})
    if min(len(g) for g in groups.values()) >= LEVENE_MIN:
        levene, levene_p = stats.levene(*groups.values(), center="median")
        rows.append({**base, "test": "levene", "statistic": float(levene),
                     "p": float(levene_p), "study_says": "unequal variances"
                     if levene_p < ALPHA else "equal variances not rejected",
                     "fslab_says": "fslab allows unequal spreads (each pair its own "
                                   "variance)", "agree": None, "why": ""})
    h, kruskal_p = kruskal(groups)
    rows.append(decided("kruskal", base, h, kruskal_p, fslab, differ,
                         Reasons(cache_bound, "", n_dup, kruskal(notebook)[1])))
    (theoretical, ordered), (slope, intercept, _) = stats.probplot(residuals)
    points = pd.DataFrame({"workload": workload, "op": op, "metric": metric,
                           "theoretical": theoretical, "residual": ordered,
                           "fit": slope * np.asarray(theoretical) + intercept})
    return rows, points


def anova(groups: dict[str, np.ndarray]) -> tuple[float, float, np.ndarray]:
    """(F, p, residuals) of the one-way ANOVA `value ~ C(target)` the notebook fitted
    (statsmodels ols + anova_lm, type II: the same F, tests/analysis/test_study_ways.py),
    by scipy's f_oneway. Where no value spreads within a target, statsmodels' F is
    rounding noise — identical targets came out p 0.013, "they differ" — and it warns
    that its constraint has rank 0; f_oneway's is ∞ (p 0) when the means differ and
    undefined (NaN: no difference shown) when every value is the same."""
    from scipy import stats

    values = list(groups.values())
    f, p = stats.f_oneway(*values)
    residuals = np.concatenate([g - g.mean() for g in values])  # the model's, in row order
    return float(f), float(p), residuals


def kruskal(groups: dict[str, np.ndarray]) -> tuple[float, float]:
    """(H, p) of scipy's Kruskal–Wallis; NaN where every value is the same (scipy
    refuses: there is nothing to rank)."""
    from scipy import stats

    try:
        h, p = stats.kruskal(*groups.values())
    except ValueError:
        return math.nan, math.nan
    return float(h), float(p)


def pooled(runs: pd.DataFrame, pairs: Sequence[Pair], cached: dict[str, str]
           ) -> list[dict[str, object]]:
    """The notebook's pooled tests, one set per (op, metric) of its six."""

    out: list[dict[str, object]] = []
    iterations = max(int(runs["iteration"].nunique()), 1)
    for op, metric in POOLED:
        rows = runs[(runs["op"].astype(str) == op) & (runs["metric"].astype(str) == metric)]
        groups = {t: g["value"].to_numpy(dtype=float) for t, g in
                  rows.groupby(rows["target"].astype(str), sort=True)}
        if len(groups) < 2 or any(len(g) < 2 for g in groups.values()):
            continue
        workloads = sorted(rows["workload"].astype(str).unique())
        buffered = [w for w in workloads if cached.get(w)]
        base = {"scope": "pooled", "workload": ", ".join(workloads), "op": op,
                "metric": metric, "groups": ", ".join(groups),
                "n": int(sum(len(g) for g in groups.values()))}
        answers = [fslab_answer(pairs, w, op, metric) for w in workloads]
        said = "; ".join(f"{w}: {a}" for w, a in zip(workloads, answers, strict=True) if a)
        differ = differ_any(answers)
        mixed = _mixed(rows)
        notebook = _notebook_rows(rows, iterations)
        statistic, p, _ = anova(groups)
        dup_groups = {t: g["value"].to_numpy(dtype=float) for t, g in
                      notebook.groupby("target", sort=True)}
        _, p_dup, _ = anova(dup_groups)
        cache = ", ".join(buffered)
        out.append(decided("anova", base, statistic, p, said, differ,
                            Reasons(cache, mixed, len(notebook), p_dup)))
        h, kruskal_p = kruskal(groups)
        out.append(decided("kruskal", base, h, kruskal_p, said, differ,
                            Reasons(cache, mixed, len(notebook), kruskal(dup_groups)[1])))
        if (found := wilcoxon_row(rows, notebook, pairs, base, buffered, mixed)) is not None:
            out.append(found)
        out.append(regression_row(rows, base, said))
    return out


def wilcoxon_row(rows: pd.DataFrame, notebook: pd.DataFrame, pairs: Sequence[Pair],
                 base: dict[str, object], buffered: list[str], mixed: str
                 ) -> dict[str, object] | None:
    """The notebook's paired Wilcoxon of ext4 against btrfs (else the first two targets)
    over (workload, iteration), with fslab's pair on each workload beside it."""
    from scipy import stats

    targets = sorted(rows["target"].astype(str).unique())
    a, b = WILCOXON_PAIR if set(WILCOXON_PAIR) <= set(targets) else targets[:2]
    wide = rows.pivot_table(index=["workload", "iteration"], columns="target", values="value",
                            observed=True)
    if a not in wide or b not in wide:
        return None
    wide = wide[[a, b]].dropna()
    dup = notebook.pivot_table(index=["workload", "copy"], columns="target", values="value",
                               observed=True)[[a, b]].dropna()
    if len(wide) < 2 or not (wide[a] - wide[b]).any():
        return None
    w, p = stats.wilcoxon(wide[a], wide[b], zero_method="wilcox")
    _, p_dup = stats.wilcoxon(dup[a], dup[b], zero_method="wilcox") \
        if (dup[a] - dup[b]).any() else (math.nan, math.nan)
    op, metric = str(base["op"]), str(base["metric"])
    answers = {w_: pair_answer(pairs, w_, op, metric, a, b)
               for w_ in sorted(rows["workload"].astype(str).unique())}
    said = "; ".join(f"{w_}: {text}" for w_, text in answers.items() if text)
    differ = any("×" in text for text in answers.values()) if said else None
    reasons = Reasons(", ".join(buffered), mixed, len(dup), float(p_dup),
                      f"a signed-rank test over every workload asks whether {a} beats {b} "
                      "more often than not across them, not on any one: fslab answers "
                      "each workload apart")
    return decided("wilcoxon", {**base, "groups": f"{a} vs {b}", "n": len(wide)},
                    float(w), float(p), said or "no pair of theirs decided", differ, reasons)


def regression_row(rows: pd.DataFrame, base: dict[str, object], said: str
                   ) -> dict[str, object]:
    """The notebook's linear regression of the metric on file system and workload (one-hot:
    ols `value ~ C(target) + C(workload)`), its R², and the same model on the log scale
    (fslab's: effects are ratios)."""
    from statsmodels.formula.api import ols

    frame = pd.DataFrame({"value": rows["value"].to_numpy(dtype=float),
                          "target": rows["target"].astype(str).to_numpy(),
                          "workload": rows["workload"].astype(str).to_numpy()})
    formula = "value ~ C(target)" + (" + C(workload)" if frame["workload"].nunique() > 1
                                     else "")
    model = ols(formula, data=frame).fit()
    statistic, p = _target_f(model, frame)
    positive = bool((frame["value"] > 0).all())
    logged = ols(formula.replace("value", "np.log(value)", 1), data=frame).fit() \
        if positive else None
    r2_log = float(logged.rsquared) if logged is not None else math.nan
    return {**base, "test": "regression", "statistic": statistic,
            "p": p, "r2": float(model.rsquared), "r2_log": r2_log,
            "study_says": f"R² {model.rsquared:.2f} on the raw values",
            "fslab_says": f"R² {r2_log:.2f} on the log scale (ratios); fslab decides each "
                          f"workload apart: {said or 'nothing decided'}",
            "agree": None,
            "why": ("the raw values of different workloads differ by factors, not offsets: "
                    "an additive model fits them badly, the same model on logs fits "
                    f"R² {r2_log:.2f}") if r2_log == r2_log and r2_log > model.rsquared + 0.1
            else ""}


def _target_f(model: RegressionResultsWrapper, frame: pd.DataFrame) -> tuple[float, float]:
    """(F, p) of the file system's term in the regression (type II). A model that fits
    every value exactly has no residual spread to test against: ∞ and p 0 where the file
    system explains something beyond the workload, NaN where it explains nothing
    (statsmodels would answer from rounding noise, and warn that its constraint has
    rank 0)."""
    import statsmodels.api as sm
    from statsmodels.formula.api import ols

    values = frame["value"].to_numpy(dtype=float)
    spread = float(np.sum((values - values.mean()) ** 2))
    if float(model.ssr) > EXACT * spread:
        table = sm.stats.anova_lm(model, typ=2)
        return float(table["F"].iloc[0]), float(table["PR(>F)"].iloc[0])
    without = spread if frame["workload"].nunique() < 2 else float(
        ols("value ~ C(workload)", data=frame).fit().ssr)
    return (math.inf, 0.0) if without - float(model.ssr) > EXACT * spread else (math.nan,
                                                                                math.nan)


def _notebook_rows(rows: pd.DataFrame, iterations: int) -> pd.DataFrame:
    """The notebook's table for these rows: per (target, workload) its mean once per
    iteration and its median once per iteration (filesystem_summary: every iteration's
    summary is the whole cell's), numbered `copy`."""
    cells = rows.groupby([rows["target"].astype(str), rows["workload"].astype(str)],
                         sort=True)["value"].agg(["mean", "median"]).reset_index()
    copies = [cells.assign(value=cells[stat], copy=index + offset)
              for offset, stat in ((0, "mean"), (iterations, "median"))
              for index in range(iterations)]
    return pd.concat(copies, ignore_index=True).rename(
        columns={"level_0": "target", "level_1": "workload"})


def _mixed(rows: pd.DataFrame) -> str:
    """Why pooling the workloads mixes unlike things ('' with one workload)."""
    means = rows.groupby(rows["workload"].astype(str))["value"].mean()
    means = means[means > 0]
    if len(means) < 2:
        return ""
    return (f"pooling {len(means)} workloads whose means differ up to "
            f"{means.max() / means.min():.3g}× puts the workloads' own differences into the "
            "file systems' groups")


def _cache_bound(summary: pd.DataFrame) -> dict[str, str]:
    """{workload: why its cells are cache-bound} (buffered reads of files that fit in RAM)."""
    if summary.empty or "cache_bound" not in summary:
        return {}
    bound = summary[summary["cache_bound"].astype(bool)]
    return {str(w): str(r).split(";")[0] for w, r in zip(bound["workload"],
                                                         bound["cache_bound_reason"],
                                                         strict=True)}


STEP = Step("study_methods", reads=("runs", "settings", "asked", "pairs", "summary"),
            makes=("study_methods", "study_qq", "study_method_rows"), run=study_methods,
            method=METHOD,
            tables={"study_methods": "study_methods.csv", "study_qq": "study_qq.csv"},
            optional=frozenset({"study_methods", "study_qq"}),
            stated=lambda done: not done["study_methods"].empty)
