"""Factor effects checked against known truth: the simulator's own draws (workloads/null.py)
with a factor that scales the values by a known ratio and one that does nothing, through
the analysis a campaign runs (analysis.factors.sweeps); the split plot's two strata; and the
model equal to the paired t where the two must agree."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from fslab.analysis.cells.observations import per_run
from fslab.analysis.factors.levels import cell_levels
from fslab.analysis.factors.sweeps import analyse_sweep
from fslab.analysis.pairs.model import compare
from fslab.core.campaign_settings import CampaignSettings
from fslab.workloads.null import NullWorkload, Simulated

SETTINGS = {"sweep": {"iops": ["1000", "2000"], "tag": ["a", "b"]}}


def simulated(seed: int, iterations: int = 5, cv: float = 0.10, drift: float = 0.10,
              scales: dict[str, float] | None = None, fs_spread: float = 0.0) -> pd.DataFrame:
    """The metrics rows of a simulated sweep: targets × iops (1000, 2000: a true 2×) × tag
    (a, b: no effect), each value the null simulator's draw; `fs_spread` adds a log-normal
    factor per (target, iteration), the luck of one fresh file system, shared by the
    workload's variants on it."""
    scales = scales or {"a": 1.0, "b": 1.25}
    luck = np.random.default_rng([seed, 99])
    rows = []
    for iteration in range(1, iterations + 1):
        for target, scale in scales.items():
            own = math.exp(luck.normal(0, fs_spread)) if fs_spread else 1.0
            for iops in ("1000", "2000"):
                for tag in ("a", "b"):
                    name = f"w1 iops={iops} tag={tag}"
                    job = NullWorkload(name, iops=float(iops), cv=cv, drift=drift, seed=seed,
                                       job="w1")
                    value = job._simulated(f"i{iteration:03d}-{target}-w1",
                                           Simulated(target, scale)) * own
                    level = target.split(" scale=")[-1] if " scale=" in target else None
                    rows.append({"campaign": "sim", "run_id": f"i{iteration}-{target}-{name}",
                                 "target": target, "fs": "null", "fs_impl": "null",
                                 "workload": name, "iteration": iteration, "host": "h",
                                 "op": "read", "metric": "iops", "value": value,
                                 "unit": "1/s", "better": "higher", "sample": 0, "note": "",
                                 "target_base": target.split(" scale=")[0], "job": "w1",
                                 "iops": iops, "tag": tag, "scale": level})
    frame = pd.DataFrame(rows)
    return frame if frame["scale"].notna().any() else frame.drop(columns="scale")


def effects_of(metrics: pd.DataFrame, settings: dict = SETTINGS) -> pd.DataFrame:
    effects, _ = analyse_sweep(per_run(metrics), cell_levels(metrics),
                               CampaignSettings.from_table(settings), {},
                               pd.DataFrame(), True, 0.10)
    return effects.set_index(["factor", "level"])


def test_a_known_ratio_is_recovered_and_a_null_factor_is_not_called():
    """30 simulated campaigns (2 targets × iops 1000/2000 × tag a/b, 5 iterations, CV
    10 %, drift 10 %): iops=2000's interval covers the true 2× in nearly all and the tag,
    which does nothing, is called in ≤ 5 % (benchmarks/sweep_effects_coverage runs 200:
    ≥ 94 %)."""
    covered = called = 0
    campaigns = 30
    for seed in range(campaigns):
        found = effects_of(simulated(seed))
        iops = found.loc[("iops", "2000")]
        covered += iops["ratio_ci_low"] <= 2.0 <= iops["ratio_ci_high"]
        called += found.loc[("tag", "b"), "p_adj"] < 0.05
    assert covered >= 28  # a method at 85 % coverage would fall short
    assert called <= 2


def test_the_file_systems_own_luck_cancels_for_workload_options():
    """Each fresh file system ±30 % on its own (shared by the variants run on it): the
    workload options are compared within it, so their intervals still cover."""
    covered = 0
    for seed in range(20):  # benchmarks/sweep_effects_coverage: 100
        found = effects_of(simulated(seed, fs_spread=0.3))
        iops = found.loc[("iops", "2000")]
        covered += iops["ratio_ci_low"] <= 2.0 <= iops["ratio_ci_high"]
        assert iops["model"].startswith("within")
    assert covered >= 18


def test_a_target_option_is_compared_between_file_systems():
    """A target swept by scale (1 vs 1.5: a true 1.5×) beside a plain one, each file
    system ±20 % on its own: the effect is estimated on the file systems' means and its
    interval covers 1.5 in ≥ 94 % of campaigns."""
    settings = {**SETTINGS, "target": [{"name": "b", "fs": "null", "scale": [1, 1.5]}]}
    covered = 0
    for seed in range(20):  # benchmarks/sweep_effects_coverage: 100
        metrics = simulated(seed, scales={"a": 1.0, "b scale=1": 1.0, "b scale=1.5": 1.5},
                            fs_spread=0.2)
        scale = effects_of(metrics, settings).loc[("scale", "1.5")]
        assert scale["model"].startswith("between") and scale["targets"] == "b"
        covered += scale["ratio_ci_low"] <= 1.5 <= scale["ratio_ci_high"]
    assert covered >= 18


def test_one_two_level_factor_on_one_target_is_the_paired_t():
    """With one target and one two-level factor the model is the paired t on log ratios
    (analysis.pairs.model.compare), to the last digit."""
    rng = np.random.default_rng(5)
    rows = []
    for iteration in range(1, 7):
        drift = rng.normal(0, 0.2)
        for depth, ratio in (("1", 1.0), ("8", 2.5)):
            rows.append({"target": "ext4", "fs": "ext4", "fs_impl": "k",
                         "workload": f"randread iodepth={depth}", "iteration": iteration,
                         "run_id": f"{iteration}-{depth}", "host": "h", "op": "read",
                         "metric": "iops", "unit": "1/s", "better": "higher", "sample": 0,
                         "note": "", "campaign": "c", "iodepth": depth,
                         "target_base": "ext4", "job": "randread",
                         "value": 1000 * ratio * math.exp(drift + rng.normal(0, 0.1))})
    metrics = pd.DataFrame(rows)
    found = effects_of(metrics, {"sweep": {"iodepth": ["1", "8"]}}).loc[("iodepth", "8")]
    groups = {depth: {int(r.iteration): float(r.value) for r in metrics.itertuples()
                      if r.iodepth == depth} for depth in ("1", "8")}
    pair = compare(groups).pairs[0]  # "1" vs "8": ratio 1/8
    assert found["ratio"] == pytest.approx(1 / pair.ratio, rel=1e-9)
    assert found["ratio_ci_low"] == pytest.approx(1 / pair.ratio_ci_high, rel=1e-9)
    assert found["ratio_ci_high"] == pytest.approx(1 / pair.ratio_ci_low, rel=1e-9)
    assert found["p_value"] == pytest.approx(pair.p_value, rel=1e-9)


def test_a_factor_that_changes_the_ranking_is_named():
    """xfs gains 4× from iodepth 8, ext4 nothing: the interaction is found, the effect
    per target is stated and the first target changes with the level."""
    rng = np.random.default_rng(11)
    rows = []
    for iteration in range(1, 6):
        for target, gain in (("ext4", 1.0), ("xfs", 4.0)):
            for depth in ("1", "8"):
                base = 2000 if target == "ext4" else 1000
                value = base * (gain if depth == "8" else 1.0) * math.exp(rng.normal(0, 0.05))
                rows.append({"target": target, "fs": target, "fs_impl": "k",
                             "workload": f"randread iodepth={depth}", "iteration": iteration,
                             "run_id": f"{iteration}-{target}-{depth}", "host": "h",
                             "op": "read", "metric": "iops", "unit": "1/s",
                             "better": "higher", "sample": 0, "note": "", "campaign": "c",
                             "target_base": target, "job": "randread",
                             "iodepth": depth, "value": value})
    found = effects_of(pd.DataFrame(rows), {"sweep": {"iodepth": ["1", "8"]}})
    row = found.loc[("iodepth", "8")]
    assert row["interaction_p_adj"] < 0.001 and row["ranking_changes"]
    assert row["first_by_level"] == "iodepth=1: ext4; iodepth=8: xfs"
    gains = dict(part.rstrip("×").split() for part in row["by_target"].split("; "))
    assert 0.9 < float(gains["ext4"]) < 1.1 and 3.6 < float(gains["xfs"]) < 4.4
