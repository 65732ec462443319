"""What drives performance: fslab's models held to statsmodels and to what they must find."""

import numpy as np
import pandas as pd
import pytest

from fslab.analysis.drivers import FOREST, LINEAR, drivers
from fslab.background import Background


def campaign_frame(seed: int = 1, per_cell=(3, 5, 4, 6)) -> pd.DataFrame:
    """Runs of an unbalanced campaign: IOPS set mostly by the workload, partly by the fs,
    with one interaction (btrfs suffers on randwrite) and lognormal noise."""
    rng = np.random.default_rng(seed)
    base = {"ext4": 1.0, "xfs": 1.3, "btrfs": 0.8}
    load = {"randread": 9000.0, "randwrite": 3000.0, "seqread": 400.0}
    rows = []
    for f_index, (fs, fs_factor) in enumerate(base.items()):
        for w_index, (workload, level) in enumerate(load.items()):
            runs = per_cell[(f_index + w_index) % len(per_cell)]
            slow = 0.5 if (fs, workload) == ("btrfs", "randwrite") else 1.0
            for iteration in range(1, runs + 1):
                value = level * fs_factor * slow * rng.lognormal(0, 0.05)
                rows.append({"campaign": "c", "run_id": f"{fs}-{workload}-{iteration}",
                             "target": fs, "fs": fs, "fs_impl": "kernel", "workload": workload,
                             "iteration": iteration, "host": "", "op": "read", "metric": "iops",
                             "value": value, "unit": "1/s", "better": "higher", "sample": 0,
                             "note": ""})
    return pd.DataFrame(rows)


def test_type_ii_shares_match_statsmodels_on_every_run():
    import statsmodels.formula.api as smf
    from statsmodels.stats.anova import anova_lm

    metrics = campaign_frame()
    table = drivers(metrics)
    linear = table[table["model"] == LINEAR].set_index("factor")["share"]
    data = metrics.assign(y=np.log10(metrics["value"]))
    reference = anova_lm(smf.ols("y ~ C(fs) + C(workload)", data=data).fit(), typ=2)
    explained = reference.drop(index="Residual")["sum_sq"]
    expected = explained / explained.sum()
    assert linear["fs"] == pytest.approx(expected["C(fs)"], rel=1e-9)
    assert linear["workload"] == pytest.approx(expected["C(workload)"], rel=1e-9)


def test_models_find_the_workload_and_the_forest_the_interaction():
    table = drivers(campaign_frame())
    forest = table[table["model"] == FOREST].set_index("factor")
    linear = table[table["model"] == LINEAR].set_index("factor")
    assert forest["share"].sum() == pytest.approx(1.0)
    assert forest.loc["workload", "share"] > 0.8 and linear.loc["workload", "share"] > 0.8
    # The additive model cannot express btrfs × randwrite; the trees can.
    assert forest["cv_r2"].iloc[0] > linear["cv_r2"].iloc[0] > 0.9
    assert forest["cv_rmse"].iloc[0] < linear["cv_rmse"].iloc[0]


def test_background_gives_the_same_result_and_the_same_errors():
    metrics = campaign_frame()
    assert Background(drivers, metrics).result().equals(drivers(metrics))
    with pytest.raises(KeyError):
        Background(drivers, metrics.drop(columns=["workload"])).result()


def test_closing_a_background_ends_its_child_without_a_result():
    import multiprocessing

    from fslab.analysis.drivers import fit_models, model_inputs
    from fslab.analysis.observations import per_run

    pending = Background(fit_models, model_inputs(per_run(campaign_frame())))
    assert multiprocessing.active_children()
    pending.close()  # as the analysis does when a step after the start failed
    assert not multiprocessing.active_children()


def test_unique_rows_is_numpys_unique_over_rows():
    from fslab.analysis.drivers import _unique_rows

    rng = np.random.default_rng(4)
    for levels in ((3, 4, 2), (2,), (40, 50, 60, 70)):  # dense table, and sparse keys
        codes = np.column_stack([rng.integers(0, n, 500) for n in levels])
        cells, inverse = _unique_rows(codes)
        expected, expected_inverse = np.unique(codes[:, ::-1], axis=0, return_inverse=True)
        assert np.array_equal(cells[:, ::-1], expected)  # keys order: last factor first
        assert np.array_equal(inverse, expected_inverse.reshape(-1))
        assert np.array_equal(cells[inverse], codes)


def random_cells(rng, levels):
    """One-hot indicators of random factor levels per cell, responses and run counts."""
    codes = np.column_stack([rng.integers(0, n, 60) for n in levels])
    x = np.hstack([codes[:, [i]] == np.arange(n) for i, n in enumerate(levels)])
    return x, rng.normal(size=len(x)), rng.integers(1, 6, len(x)).astype(float)


def test_regression_tree_grows_as_scikit_learns():
    from sklearn.tree import DecisionTreeRegressor

    from fslab.analysis.trees import RegressionTree

    rng = np.random.default_rng(5)
    for levels in ((3, 4, 2), (5, 2), (2, 2, 2, 3)):
        x, y, w = random_cells(rng, levels)
        ours = RegressionTree().fit(x, y, w)
        theirs = DecisionTreeRegressor(random_state=0).fit(x.astype(np.float32), y,
                                                           sample_weight=w)
        # Among equally good splits the two may take different features (scikit-learn
        # draws one); the cells' leaves, and so the fitted values, are the same.
        assert ours.predict(x) == pytest.approx(theirs.predict(x.astype(np.float32)),
                                                rel=1e-12)
        assert len(ours.feature) == theirs.tree_.node_count
        # The splits take the same impurity out in all (the features credited may differ).
        decrease = theirs.tree_.compute_feature_importances(normalize=False).sum()
        assert ours.total_decrease == pytest.approx(decrease, rel=1e-9)
        assert ours.feature_importances_.sum() == pytest.approx(1.0)
