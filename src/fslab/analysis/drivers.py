"""What drives performance: the factorial ANOVA of a designed campaign.

For each of a few headline metrics, the response is the log of the per-run value
(effects are multiplicative) and the factors are those the campaign varied: file system,
the target's options (when several targets share a file system), workload and op. The
model is the factorial one with all two-factor interactions (main effects only when the
data leave no residual degrees of freedom for them), fitted by statsmodels' OLS; each
term's type-II sum of squares gives its F and p, its partial ω² (the share of variance
it explains in the population, less biased than η²: Olejnik & Algina 2003) and its share
of the total variation (Jain 1991, "allocation of variation"; the residual is the
unexplained share). Not impurity importances of trees: those favour factors with more
levels (Strobl et al. 2007).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd

METRICS = ("iops", "bw_bytes", "ops_per_s", "clat_mean_ns")
FACTORS = ("fs", "options", "workload", "op")
MIN_OBSERVATIONS = 10
COLUMNS = ["metric", "term", "df", "sum_sq", "F", "p_value", "partial_omega_sq", "share",
           "model", "n"]
RESIDUAL = "residual (unexplained)"


def factor_table(runs: pd.DataFrame) -> pd.DataFrame:
    """Per-run values (`per_run`) with their factors and y = ln(value)."""
    values = runs[(runs["op"] != "total") & runs["metric"].isin(METRICS)]
    values = values[np.isfinite(values["value"]) & (values["value"] > 0)].copy()
    values["y"] = np.log(values["value"].to_numpy(dtype=float))
    shared = values.groupby("fs", observed=True)["target"].transform("nunique").to_numpy() > 1
    values["options"] = np.where(shared, values["target"].astype(str), "default")
    for factor in FACTORS:
        values[factor] = values[factor].astype(str)
    return values


def drivers(runs: pd.DataFrame) -> pd.DataFrame:
    """One row per metric and model term (and the residual): df, SS, F, p, ω², share."""
    table = factor_table(runs)
    rows: list[dict[str, object]] = []
    for metric, data in table.groupby("metric", observed=True, sort=True):
        if len(data) >= MIN_OBSERVATIONS:
            rows += _anova(str(metric), data)
    return pd.DataFrame(rows, columns=COLUMNS)


def _anova(metric: str, data: pd.DataFrame) -> list[dict[str, object]]:
    import statsmodels.formula.api as smf
    from statsmodels.stats.anova import anova_lm

    varied = [f for f in FACTORS if data[f].nunique() > 1]
    if not varied:
        return []
    terms = [f"C({f})" for f in varied]
    formulas = []
    if len(terms) > 1:
        formulas.append(("factorial, two-factor interactions",
                         "y ~ (" + " + ".join(terms) + ")**2"))
    formulas.append(("main effects", "y ~ " + " + ".join(terms)))
    for label, formula in formulas:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = smf.ols(formula, data=data).fit()
            if fit.df_resid < 1:
                continue
            try:
                table = anova_lm(fit, typ=2)
            except (ValueError, np.linalg.LinAlgError):
                continue
        if not np.isfinite(table["sum_sq"]).all():
            continue
        return _rows(metric, label, table, len(data))
    return []


def _rows(metric: str, label: str, table: pd.DataFrame, n: int) -> list[dict[str, object]]:
    residual = table.loc["Residual"]
    ms_error = residual["sum_sq"] / residual["df"]
    total = float(table["sum_sq"].sum())
    rows = []
    for term, row in table.iterrows():
        is_residual = term == "Residual"
        omega = math.nan
        if not is_residual:
            omega = (row["sum_sq"] - row["df"] * ms_error) / (
                row["sum_sq"] + (n - row["df"]) * ms_error)
            omega = max(0.0, float(omega))
        rows.append({"metric": metric,
                     "term": RESIDUAL if is_residual else _term_name(str(term)),
                     "df": float(row["df"]), "sum_sq": float(row["sum_sq"]),
                     "F": float(row["F"]) if not is_residual else math.nan,
                     "p_value": float(row["PR(>F)"]) if not is_residual else math.nan,
                     "partial_omega_sq": omega,
                     "share": float(row["sum_sq"]) / total if total else math.nan,
                     "model": label, "n": n})
    return rows


def _term_name(term: str) -> str:
    """'C(fs):C(workload)' -> 'fs × workload'."""
    return " × ".join(part[2:-1] if part.startswith("C(") else part
                      for part in term.split(":"))
