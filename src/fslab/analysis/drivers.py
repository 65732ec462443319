"""What drives performance: a linear model and a tree ensemble over the campaign's factors.

For each headline metric, the response is log10 of the per-run value (effects of file
systems and workloads are multiplicative), the factors are file system, workload, op and
the target's options (when several targets share a file system). Reported: 5-fold
cross-validated R² and RMSE of both models, and each factor's share of the explained
variance — type-II sums of squares of the linear model (statsmodels), and the summed
impurity importances of the factor's columns in the tree ensemble (scikit-learn).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from fslab.analysis.comparisons import per_run_values
from fslab.analysis.summary import observations

METRICS = ("iops", "bw_bytes", "ops_per_s", "clat_mean_ns")
MIN_OBSERVATIONS = 10
MAX_ROWS = 2000  # the tree ensemble is fitted on a seeded sample beyond this
FOLDS = 5
SEED = 0
COLUMNS = ["metric", "model", "cv_r2", "cv_rmse", "factor", "share"]


def factor_table(metrics: pd.DataFrame) -> pd.DataFrame:
    """Per-run values with their factors (fs, workload, op, options)."""
    values = per_run_values(observations(metrics))
    values = values[(values["op"] != "total") & values["metric"].isin(METRICS)]
    values = values[np.isfinite(values["value"]) & (values["value"] > 0)]
    fs = metrics.drop_duplicates("target").set_index("target")["fs"]
    values = values.assign(fs=values["target"].map(fs), y=np.log10(values["value"]))
    shared = values.groupby("fs")["target"].nunique()
    values["options"] = np.where(values["fs"].map(shared) > 1, values["target"], "default")
    return values


def drivers(metrics: pd.DataFrame) -> pd.DataFrame:
    """One row per metric, model and factor: cross-validated fit and the factor's share."""
    if metrics.empty:
        return pd.DataFrame(columns=COLUMNS)
    table = factor_table(metrics)
    rows = []
    for metric, data in table.groupby("metric", sort=True):
        factors = [f for f in ("fs", "workload", "op", "options") if data[f].nunique() > 1]
        if len(data) < MIN_OBSERVATIONS or not factors:
            continue
        rows += _linear(str(metric), data, factors) + _trees(str(metric), data, factors)
    return pd.DataFrame(rows, columns=COLUMNS)


def _cv(model: object, x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    from sklearn.model_selection import KFold, cross_validate

    folds = KFold(n_splits=min(FOLDS, len(y)), shuffle=True, random_state=SEED)
    scores = cross_validate(model, x, y, cv=folds,
                            scoring=("r2", "neg_root_mean_squared_error"))
    return (float(np.mean(scores["test_r2"])),
            float(-np.mean(scores["test_neg_root_mean_squared_error"])))


def _design(data: pd.DataFrame, factors: list[str]) -> tuple[np.ndarray, list[str]]:
    dummies = pd.get_dummies(data[factors].astype(str), prefix=factors, prefix_sep="=")
    return dummies.to_numpy(dtype=float), list(dummies.columns)


def _linear(metric: str, data: pd.DataFrame, factors: list[str]) -> list[dict[str, object]]:
    import statsmodels.formula.api as smf
    from sklearn.linear_model import LinearRegression
    from statsmodels.stats.anova import anova_lm

    formula = "y ~ " + " + ".join(f"C({f})" for f in factors)
    with warnings.catch_warnings():  # nested factors (op within workload) alias: SS 0
        warnings.simplefilter("ignore")
        fit = smf.ols(formula, data=data).fit()
        table = anova_lm(fit, typ=2)
    explained = table.drop(index="Residual")["sum_sq"]
    x, _ = _design(data, factors)
    r2, rmse = _cv(LinearRegression(), x, data["y"].to_numpy())
    total = float(explained.sum()) or 1.0
    return [{"metric": metric, "model": "linear (OLS, type-II SS)", "cv_r2": r2,
             "cv_rmse": rmse, "factor": name[2:-1], "share": float(value) / total}
            for name, value in explained.items()]


def _trees(metric: str, data: pd.DataFrame, factors: list[str]) -> list[dict[str, object]]:
    from sklearn.ensemble import RandomForestRegressor

    if len(data) > MAX_ROWS:
        data = data.sample(MAX_ROWS, random_state=SEED)
    x, columns = _design(data, factors)
    y = data["y"].to_numpy()
    forest = RandomForestRegressor(n_estimators=50, min_samples_leaf=2, random_state=SEED)
    r2, rmse = _cv(forest, x, y)
    forest.fit(x, y)
    shares = {f: 0.0 for f in factors}
    for column, importance in zip(columns, forest.feature_importances_, strict=True):
        shares[column.split("=", 1)[0]] += float(importance)
    return [{"metric": metric, "model": "random forest (impurity importance)", "cv_r2": r2,
             "cv_rmse": rmse, "factor": factor, "share": share}
            for factor, share in shares.items()]
