"""What drives performance: a linear model and a tree ensemble over the campaign's factors.

For each headline metric, the response is log10 of the per-run value (effects of file
systems and workloads are multiplicative), the factors are file system, workload, op and
the target's options (when several targets share a file system). Reported: 5-fold
cross-validated R² and RMSE of both models, and each factor's share of the explained
variance — type-II sums of squares of the additive linear model, and the summed
impurity importances of the factor's columns in a random forest (its trees: trees.py,
grown as scikit-learn's and tested against them).

The linear model is solved on cell means weighted by their run counts (numpy lstsq): all
factors are categorical, so every fitted value is constant within a cell and the sums of
squares equal those of the fit on every run (tests check them against statsmodels),
at a cost that does not grow with the number of runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from fslab.analysis.trees import RegressionTree

if TYPE_CHECKING:
    import pandas as pd

METRICS = ("iops", "bw_bytes", "ops_per_s", "clat_mean_ns")
FACTORS = ("fs", "workload", "op", "options")
MIN_OBSERVATIONS = 10
TREES = 30  # trees per forest; importances are averaged over the 5 fold forests
FOLDS = 5
SEED = 0
COLUMNS = ["metric", "model", "cv_r2", "cv_rmse", "factor", "share"]
LINEAR = "linear (OLS, type-II SS)"
FOREST = "random forest (impurity importance)"


def factor_table(runs: pd.DataFrame) -> pd.DataFrame:
    """Per-run values (`per_run`) with their factors (fs, workload, op, options)."""
    values = runs[(runs["op"] != "total") & runs["metric"].isin(METRICS)]
    values = values[np.isfinite(values["value"]) & (values["value"] > 0)]
    values = values.assign(y=np.log10(values["value"]))
    shared = values.groupby("fs")["target"].transform("nunique").to_numpy() > 1
    values["options"] = np.where(shared, values["target"].astype(str), "default")
    return values


def drivers(metrics: pd.DataFrame, runs: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per metric, model and factor: cross-validated fit and the factor's share.

    `runs` is `per_run(metrics)` when the caller has it already.
    """
    from fslab.analysis.observations import per_run

    if metrics.empty:
        return as_frame([])
    return as_frame(fit_models(model_inputs(per_run(metrics) if runs is None else runs)))


ModelInput = tuple[str, np.ndarray, np.ndarray, list[str]]  # metric, codes, y, factors


def model_inputs(runs: pd.DataFrame) -> list[ModelInput]:
    """Per headline metric of the per-run table (`per_run`): factor codes per run, log10
    responses and factor names."""
    import pandas as pd

    if runs.empty:
        return []
    table = factor_table(runs)
    inputs = []
    for metric, data in table.groupby("metric", sort=True):
        factors = [f for f in FACTORS if data[f].nunique() > 1]
        if len(data) < MIN_OBSERVATIONS or not factors:
            continue
        codes = np.column_stack([pd.factorize(data[f].astype(str))[0] for f in factors])
        inputs.append((str(metric), codes, data["y"].to_numpy(dtype=float), factors))
    return inputs


def fit_models(inputs: list[ModelInput]) -> list[dict[str, object]]:
    """The linear model and the forest of every metric, as rows of COLUMNS. numpy and
    nothing else (no pandas): it runs in a child that need not import more."""
    rows: list[dict[str, object]] = []
    for metric, codes, y, factors in inputs:
        folds = _folds(len(y))
        rows += _linear(metric, codes, y, factors, folds)
        rows += _forest(metric, codes, y, factors, folds)
    return rows


def as_frame(rows: list[dict[str, object]]) -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame(rows, columns=COLUMNS)


def _folds(n: int) -> list[np.ndarray]:
    """Test indices of a shuffled k-fold split (seeded)."""
    order = np.random.default_rng(SEED).permutation(n)
    return [fold for fold in np.array_split(order, min(FOLDS, n)) if len(fold)]


def _design(codes: np.ndarray, keep: list[int],
            levels: np.ndarray | None = None) -> np.ndarray:
    """Intercept plus one indicator column per level of each kept factor (lstsq copes
    with the redundancy: sums of squares do not depend on the parametrisation).
    `levels` (per factor) keeps the columns of a subset aligned with the whole."""
    levels = codes.max(axis=0) + 1 if levels is None else levels
    columns = [np.ones((len(codes), 1))]
    for index in keep:
        columns.append((codes[:, index][:, None] == np.arange(levels[index])).astype(float))
    return np.hstack(columns)


def _cells(codes: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                      np.ndarray]:
    """Unique factor combinations, their run counts, mean response, and each row's cell."""
    unique, inverse = _unique_rows(codes)
    counts = np.bincount(inverse)
    means = np.bincount(inverse, weights=y) / counts
    return unique, counts, means, inverse


def _unique_rows(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """np.unique(codes, axis=0, return_inverse=True), on one mixed-radix integer per row
    (unique over rows sorts a structured view: ~50x slower)."""
    radix = codes.max(axis=0) + 1
    keys = codes @ np.concatenate([[1], np.cumprod(radix[:-1])]).astype(codes.dtype)
    size = int(np.prod(radix.astype(float)))
    if size > 8 * len(keys) + 1024:  # sparse keys: sort them
        _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
        return codes[first], inverse.reshape(-1)
    # Dense keys (the usual case: a few factors of a few levels): a table lookup, sorted
    # as np.unique's, without its sort (~1 ms a call, 60 calls per analysis).
    present = np.zeros(size, dtype=bool)
    present[keys] = True
    some_row = np.empty(size, dtype=np.int64)
    some_row[keys] = np.arange(len(keys))  # any row of a cell will do: they are identical
    return codes[some_row[present]], (np.cumsum(present) - 1)[keys]


def _coefficients(design: np.ndarray, counts: np.ndarray, means: np.ndarray) -> np.ndarray:
    """Weighted least squares on cell means = ordinary least squares on every run."""
    weight = np.sqrt(counts)
    beta, *_ = np.linalg.lstsq(design * weight[:, None], means * weight, rcond=None)
    return beta


def _residual_ss(codes: np.ndarray, counts: np.ndarray, means: np.ndarray,
                 keep: list[int]) -> float:
    """Between-cell part of the residual sum of squares of the model on `keep` (the
    within-cell part is the same for every model and cancels in differences)."""
    design = _design(codes, keep)
    fitted = design @ _coefficients(design, counts, means)
    return float((counts * (means - fitted) ** 2).sum())


def _linear(metric: str, codes: np.ndarray, y: np.ndarray, factors: list[str],
            folds: list[np.ndarray]) -> list[dict[str, object]]:
    cells, counts, means, _ = _cells(codes, y)
    every = list(range(len(factors)))
    full = _residual_ss(cells, counts, means, every)
    # Type II: each factor's sum of squares given all the others (main effects only).
    explained = {factor: max(_residual_ss(cells, counts, means,
                                          [i for i in every if i != index]) - full, 0.0)
                 for index, factor in enumerate(factors)}
    r2, rmse = _cross_validate(codes, y, folds, _linear_predictions)
    total = sum(explained.values()) or 1.0
    return [{"metric": metric, "model": LINEAR, "cv_r2": r2, "cv_rmse": rmse,
             "factor": factor, "share": value / total} for factor, value in explained.items()]


def _linear_predictions(codes: np.ndarray, y: np.ndarray, train: np.ndarray,
                        test: np.ndarray) -> np.ndarray:
    cells, counts, means, _ = _cells(codes[train], y[train])
    every, levels = list(range(codes.shape[1])), codes.max(axis=0) + 1  # levels of all runs
    beta = _coefficients(_design(cells, every, levels), counts, means)
    return _design(codes[test], every, levels) @ beta


Predictor = Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray], np.ndarray]


def _cross_validate(codes: np.ndarray, y: np.ndarray, folds: list[np.ndarray],
                    predict: Predictor) -> tuple[float, float]:
    """Mean R² and RMSE over the test folds (R² as scikit-learn's r2_score)."""
    r2s, rmses = [], []
    for test in folds:
        outside = np.ones(len(y), dtype=bool)
        outside[test] = False
        train = np.flatnonzero(outside)  # as np.setdiff1d, without its sort
        error = y[test] - predict(codes, y, train, test)
        spread = ((y[test] - y[test].mean()) ** 2).sum()
        r2s.append(1 - (error**2).sum() / spread if spread else np.nan)
        rmses.append(np.sqrt((error**2).mean()))
    return float(np.nanmean(r2s)) if not np.all(np.isnan(r2s)) else np.nan, float(np.mean(rmses))


def _forest(metric: str, codes: np.ndarray, y: np.ndarray, factors: list[str],
            folds: list[np.ndarray]) -> list[dict[str, object]]:
    shares = np.zeros(len(factors))
    levels = codes.max(axis=0) + 1
    every = list(range(len(factors)))

    def predict(_: np.ndarray, target: np.ndarray, train: np.ndarray,
                test: np.ndarray) -> np.ndarray:
        trees, importance = _bagged_trees(codes[train], target[train], levels)
        shares[:] += importance
        cells, inverse = _unique_rows(codes[test])
        x = _design(cells, every, levels)[:, 1:].astype(bool)
        return np.mean([tree.predict(x) for tree in trees], axis=0)[inverse]

    r2, rmse = _cross_validate(codes, y, folds, predict)
    shares = shares / (shares.sum() or 1.0)
    return [{"metric": metric, "model": FOREST, "cv_r2": r2, "cv_rmse": rmse,
             "factor": factor, "share": float(share)}
            for factor, share in zip(factors, shares, strict=True)]


def _bagged_trees(codes: np.ndarray, y: np.ndarray,
                  levels: np.ndarray) -> tuple[list[RegressionTree], np.ndarray]:
    """A random forest on the runs (bootstrap of runs, every feature at each split, as
    scikit-learn's RandomForestRegressor), with each tree grown on its bootstrap's cell
    means weighted by counts: rows of one cell are identical in every factor, so a tree
    splits, predicts and scores impurity exactly as on the rows themselves, in a
    fraction of the time. Returns the trees and the importance summed per factor."""
    cells, _, _, inverse = _cells(codes, y)
    x = _design(cells, list(range(codes.shape[1])), levels)[:, 1:].astype(bool)
    owner = np.repeat(np.arange(codes.shape[1]), levels)
    rng = np.random.default_rng(SEED)
    trees, importance = [], np.zeros(codes.shape[1])
    for _ in range(TREES):
        drawn = rng.integers(0, len(y), len(y))  # the bootstrap of runs
        weight = np.bincount(inverse[drawn], minlength=len(cells))
        total = np.bincount(inverse[drawn], weights=y[drawn], minlength=len(cells))
        kept = weight > 0
        tree = RegressionTree().fit(x[kept], total[kept] / weight[kept],
                                    weight[kept].astype(float))
        trees.append(tree)
        np.add.at(importance, owner, tree.feature_importances_)
    return trees, importance / TREES
