"""The notebook's campaign end to end (issue 60 items 3 and 4): its preset on two file
systems, repeated, runs in one piece so each run keeps its fio jobs; stats/ holds the
notebook's tests and its interval over one row per fio job, and the report shows them in
"The study's way"."""

from __future__ import annotations

import pandas as pd
import pytest

from fslab import api
from fslab.plan.loading import load_campaign
from fslab.plan.schema import Overrides
from tests.conftest import requires


@pytest.mark.privileged
def test_the_notebooks_campaign_has_its_tests_interval_and_report_part(tmp_path, lab):
    requires("fio", "mkfs.ext4", "losetup")
    campaign = load_campaign(None, Overrides(
        preset="basic5", fs=["tmpfs", "ext4"], workloads=["randread", "randwrite"],
        iterations=3, runtime="1", file_size="16M", image_size="256M", rounds=1,
        ceiling=False, seed=7))
    out = tmp_path / "r"
    assert api.run(campaign, out=out, lab=lab).runner.failed == 0
    methods = pd.read_csv(out / "stats" / "study_methods.csv")
    assert {"anova", "kruskal", "wilcoxon", "regression", "shapiro", "levene"} <= set(
        methods["test"])
    anova = methods[(methods.test == "anova") & (methods.scope == "workload")]
    assert set(anova["workload"]) == {"randread", "randwrite"}
    assert (anova["n"] == 6).all() and anova["fslab_says"].astype(str).str.len().gt(0).all()
    wilcoxon = methods[methods.test == "wilcoxon"]
    assert set(wilcoxon["groups"]) == {"ext4 vs tmpfs"}  # no btrfs: the first two targets
    intervals = pd.read_csv(out / "stats" / "study_intervals.csv")
    # runs in one piece keep their 4 jobs each: the notebook's rows, 4 × 3 iterations
    assert set(intervals["rows"]) == {"fio jobs"} and set(intervals["n"]) == {12}
    qq = pd.read_csv(out / "stats" / "study_qq.csv")
    assert len(qq) == 2 * 6  # each workload's 6 residuals
    html = api.report(out).read_text()
    assert "The study&#x27;s way" in html and "the study&#x27;s interval" in html
    assert "one-way ANOVA&#x27;s residuals" in html or "one-way ANOVA's residuals" in html
    verdicts = (out / "stats" / "verdicts.txt").read_text()
    assert "the notebook's way" in verdicts and "the study's own interval" in verdicts
