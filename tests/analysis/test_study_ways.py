"""The studies' own ways beside fslab's (issue 60 items 3 and 4): the fio notebook's tests
in stats/study_methods.csv checked against scipy and statsmodels called independently on
the same known table, the study's own interval against its formula, and the USB report's
conclusion against its own table."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from fslab.analysis.cells.study_ways import CLAIMS, contradiction
from fslab.analysis.pairs.study_methods import anova, regression_row
from fslab.analysis.pipeline import Inputs, analyse
from fslab.core.campaign_settings import CampaignSettings
from fslab.core.environment_record import Environment
from tests.analysis.test_verdicts import DIRECT5, default_shaped

SCALES = {"btrfs": 0.55, "ext4": 1.0, "xfs": 1.04}


def notebook_campaign(seed: int = 3, iterations: int = 6) -> dict[str, pd.DataFrame]:
    """Every table of stats/ for a campaign of the notebook's kind: its five jobs on three
    file systems, repeated (the notebook's preset recorded as its study)."""
    metrics = default_shaped(SCALES, seed=seed, iterations=iterations)
    metrics = metrics.assign(target_base=metrics["target"], job=metrics["workload"])
    settings = CampaignSettings(studies={job: "desktop-fio" for job in DIRECT5})
    done = analyse(Inputs(metrics, [], Environment(), settings))
    return {"metrics": metrics, **done.extra, "verdicts": done.verdicts}


@pytest.fixture(scope="module")
def campaign() -> dict[str, pd.DataFrame]:
    return notebook_campaign()


def groups_of(metrics: pd.DataFrame, workload: str, op: str, metric: str) -> dict[str, list]:
    cell = metrics[(metrics.workload == workload) & (metrics.op == op)
                   & (metrics.metric == metric)]
    return {t: g.sort_values("iteration")["value"].tolist()
            for t, g in cell.groupby("target", sort=True)}


def test_every_test_of_the_notebook_has_rows(campaign):
    methods = campaign["study_methods.csv"]
    assert {"anova", "shapiro", "levene", "kruskal", "wilcoxon", "regression"} <= set(
        methods["test"])
    assert set(methods["scope"]) == {"workload", "pooled"}
    per = methods[methods.scope == "workload"]
    assert set(per["workload"]) == set(DIRECT5)
    assert not campaign["study_qq.csv"].empty


def test_the_anova_and_its_checks_are_scipys_on_the_same_rows(campaign):
    """statsmodels' ols + anova_lm against scipy's f_oneway (another implementation);
    Shapiro–Wilk on the residuals computed here; Levene and Kruskal–Wallis by scipy."""
    methods, metrics = campaign["study_methods.csv"], campaign["metrics"]
    for workload in DIRECT5:
        rows = methods[(methods.scope == "workload") & (methods.workload == workload)]
        op, metric = rows["op"].iloc[0], rows["metric"].iloc[0]
        groups = groups_of(metrics, workload, op, metric)
        test = rows.set_index("test")
        f, p = notebooks_anova(groups)  # the notebook's own call: statsmodels
        assert test.loc["anova", "statistic"] == pytest.approx(f, rel=1e-9)
        assert test.loc["anova", "p"] == pytest.approx(p, rel=1e-6)
        residuals = np.concatenate([np.array(g) - np.mean(g) for g in groups.values()])
        w, shapiro_p = stats.shapiro(residuals)
        assert test.loc["shapiro", "statistic"] == pytest.approx(w, rel=1e-6)
        assert test.loc["shapiro", "p"] == pytest.approx(shapiro_p, rel=1e-4)
        levene = stats.levene(*groups.values(), center="median")
        assert test.loc["levene", "p"] == pytest.approx(levene.pvalue, rel=1e-9)
        h, kruskal_p = stats.kruskal(*groups.values())
        assert test.loc["kruskal", "statistic"] == pytest.approx(h, rel=1e-9)
        assert test.loc["kruskal", "p"] == pytest.approx(kruskal_p, rel=1e-9)
        # the notebook's own table: each target's mean and median, once per iteration
        repeated = [np.repeat([np.mean(g), np.median(g)], len(g)) for g in groups.values()]
        assert test.loc["anova", "p_notebook_rows"] == pytest.approx(
            stats.f_oneway(*repeated).pvalue, rel=1e-6, abs=1e-300)
        assert test.loc["anova", "n_notebook_rows"] == 2 * sum(map(len, groups.values()))


def notebooks_anova(groups: dict[str, list]) -> tuple[float, float]:
    """The notebook's one-way ANOVA as it called it: ols + anova_lm, type II."""
    import statsmodels.api as sm
    from statsmodels.formula.api import ols

    frame = pd.DataFrame({"target": [t for t, g in groups.items() for _ in g],
                          "value": np.concatenate([np.asarray(g) for g in groups.values()])})
    table = sm.stats.anova_lm(ols("value ~ C(target)", data=frame).fit(), typ=2)
    return float(table["F"].iloc[0]), float(table["PR(>F)"].iloc[0])


@pytest.mark.parametrize("values, f, p", [
    ({"ext4": [1.0] * 4, "xfs": [1.0] * 4}, math.nan, math.nan),  # identical: nothing to test
    ({"ext4": [1.0] * 4, "xfs": [2.0] * 4}, math.inf, 0.0),  # no spread within, means apart
])
def test_values_without_spread_within_give_no_p_from_rounding(values, f, p):
    """statsmodels' anova_lm answers identical targets with p 0.013 ("they differ") from
    rounding noise and warns its constraint has rank 0; the notebook's ANOVA here is
    undefined there, and certain where the means differ."""
    groups = {t: np.array(v) for t, v in values.items()}
    assert notebooks_anova(groups)[1] < 0.05  # what the notebook's own call would say
    found_f, found_p, residuals = anova(groups)
    assert (found_f, found_p) == pytest.approx((f, p), nan_ok=True)
    assert not residuals.any()
    rows = pd.DataFrame({"value": [x for v in values.values() for x in v] * 2,
                         "target": [t for t, v in values.items() for _ in v] * 2,
                         "workload": ["randread"] * 8 + ["randwrite"] * 8})
    rows.loc[rows.workload == "randwrite", "value"] += 2  # the workload adds its part: exact
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no rank-0 warning either
        row = regression_row(rows, {}, "")
    assert (row["statistic"], row["p"]) == pytest.approx((f, p), nan_ok=True)


def test_the_pooled_wilcoxon_pairs_ext4_with_btrfs_over_workload_and_iteration(campaign):
    methods, metrics = campaign["study_methods.csv"], campaign["metrics"]
    row = methods[(methods.test == "wilcoxon") & (methods.op == "read")
                  & (methods.metric == "iops")].iloc[0]
    assert row["groups"] == "ext4 vs btrfs"
    reads = metrics[(metrics.op == "read") & (metrics.metric == "iops")]
    wide = reads.pivot_table(index=["workload", "iteration"], columns="target",
                             values="value")
    w, p = stats.wilcoxon(wide["ext4"], wide["btrfs"], zero_method="wilcox")
    assert (row["n"], row["statistic"]) == (len(wide), pytest.approx(w))
    assert row["p"] == pytest.approx(p, rel=1e-9)
    assert row["study_says"].startswith("differ")  # ext4 is 1.8× btrfs in every workload


def test_the_regression_r2_is_least_squares_on_one_hot_target_and_workload(campaign):
    methods, metrics = campaign["study_methods.csv"], campaign["metrics"]
    row = methods[(methods.test == "regression") & (methods.op == "write")
                  & (methods.metric == "iops")].iloc[0]
    cell = metrics[(metrics.op == "write") & (metrics.metric == "iops")]
    design = pd.get_dummies(cell[["target", "workload"]], drop_first=True, dtype=float)
    design.insert(0, "one", 1.0)
    for values, column in ((cell["value"].to_numpy(), "r2"),
                           (np.log(cell["value"].to_numpy()), "r2_log")):
        fitted = design.to_numpy() @ np.linalg.lstsq(design.to_numpy(), values, rcond=None)[0]
        r2 = 1 - ((values - fitted) ** 2).sum() / ((values - values.mean()) ** 2).sum()
        assert row[column] == pytest.approx(r2, rel=1e-9)
    # workloads differ by factors: the additive model on logs fits far better
    assert row["r2_log"] > row["r2"]


def test_each_decided_row_stands_beside_fslabs_answer_and_says_why_they_differ(campaign):
    methods = campaign["study_methods.csv"]
    decided = methods[methods.test.isin(["anova", "kruskal", "wilcoxon"])]
    assert decided["fslab_says"].astype(str).str.len().gt(0).all()
    for row in decided.itertuples():
        if row.agree is False or str(row.agree) == "False":
            assert str(row.why).strip(), row
    lines = campaign["verdicts"]
    assert (lines["kind"] == "study_way").sum() >= len(DIRECT5)
    assert any("the notebook's way" in text for text in lines["text"])


def test_no_study_no_rows():
    metrics = default_shaped(SCALES, seed=1, iterations=3)
    metrics = metrics.assign(target_base=metrics["target"], job=metrics["workload"])
    done = analyse(Inputs(metrics, [], Environment(), CampaignSettings()))
    assert "study_methods.csv" not in done.files.values()
    assert not (done.verdicts["kind"] == "study_way").any()


def samples_campaign(scales: dict[str, float], samples: int = 8, iterations: int = 4,
                     seed: int = 2) -> pd.DataFrame:
    """The files preset's rows: per run, each sample's write and read speed."""
    rng = np.random.default_rng(seed)
    rows = []
    for target, scale in scales.items():
        for iteration in range(1, iterations + 1):
            drift = rng.lognormal(0, 0.1)  # each fresh file system its own level
            for sample in range(samples):
                for op in ("write", "read"):
                    rows.append((target, "files_large", iteration, f"i{iteration}-{target}",
                                 op, "bw_bytes", 50e6 * scale * drift * rng.lognormal(0, 0.02),
                                 "bytes/s", "higher", sample))
    frame = pd.DataFrame(rows, columns=["target", "workload", "iteration", "run_id", "op",
                                        "metric", "value", "unit", "better", "sample"])
    return frame.assign(campaign="c", fs=frame["target"], fs_impl="k", host="h", note="",
                        target_base=frame["target"], job=frame["workload"])


def test_the_usb_reports_interval_is_its_formula_over_every_sample_beside_fslabs():
    metrics = samples_campaign({"ext4": 1.0, "xfs": 1.3})
    settings = CampaignSettings(studies={"files_large": "usb-files"})
    done = analyse(Inputs(metrics, [], Environment(), settings))
    table = done.extra["study_intervals.csv"]
    assert set(table["target"]) == {"ext4", "xfs"} and set(table["rows"]) == {"samples"}
    for row in table.itertuples():
        values = metrics[(metrics.target == row.target) & (metrics.op == row.op)]["value"]
        margin = 1.96 * values.std(ddof=1) / np.sqrt(len(values))
        assert row.n == len(values) == 32
        assert (row.low, row.high) == (pytest.approx(values.mean() - margin),
                                       pytest.approx(values.mean() + margin))
        # the samples of one run share its file system: fslab's interval over the 4
        # iterations is the wider, as a repeat would be
        assert row.width_ratio > 1.5
    lines = done.verdicts
    studied = lines[lines["kind"] == "study"]["text"].tolist()
    assert any("z = 1.96 over samples" in text and "MB/s" in text for text in studied)
    claim = lines[lines["kind"] == "study_claim"]["text"].tolist()
    assert claim == [contradiction(CLAIMS["usb-files"])]
    # under fslab's own answer: the study's line follows the workload's question
    kinds = lines[lines["workload"] == "files_large"]["kind"].tolist()
    assert kinds.index("study") > kinds.index("question")


def test_the_usb_reports_conclusion_is_named_against_its_own_table():
    text = contradiction(CLAIMS["usb-files"])
    assert "ext4 5.9484 MB/s, fifth of 5, against ext2's 56.336" in text
    assert "ext4 7.675 MB/s, fifth of 5, against fat32's 57.684" in text
    assert "ranks ext4 last" in text
    bettered = CLAIMS["usb-files"].__class__(**{**CLAIMS["usb-files"].__dict__,
                                                 "crowned": "ext2", "table": tuple(
                                                     r for r in CLAIMS["usb-files"].table
                                                     if r[1] == "large")})
    assert contradiction(bettered) == ""  # a claim its table bears out: nothing to say


def test_one_target_still_gets_the_studys_interval():
    """The study's interval is a cell's: it needs no second target to compare with."""
    metrics = samples_campaign({"ext4": 1.0})
    settings = CampaignSettings(studies={"files_large": "usb-files"})
    done = analyse(Inputs(metrics, [], Environment(), settings))
    table = done.extra["study_intervals.csv"]
    assert set(table["target"]) == {"ext4"} and set(table["op"]) == {"write", "read"}
