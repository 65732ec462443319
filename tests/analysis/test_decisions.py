"""Decisions with known truth: the same within the margin, faster, or not resolved with
what it would take; detectable ratios whose power is what they say for the test that
decides; intervals that overflow say so instead of ending the analysis."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from fslab.analysis.pairs.model import UNBOUNDED, compare
from fslab.core.errors import UserError
from fslab.core.units import parse_margin
from tests.analysis.test_simulator import pairs_of, run_sim, simulated


def test_a_equal_to_b_is_the_same_within_the_margin_and_a_30_percent_gap_never_is(tmp_path):
    same = run_sim(tmp_path, "same", simulated({"a": 1.0, "b": 1.0}, seed=3, iterations=10,
                                               jobs=1, cv=0.05, drift=0.05))
    pairs = pairs_of(same)
    assert pairs.loc[pairs.primary, "decision"].tolist() == ["equivalent"]
    assert pairs["margin"].iloc[0] == pytest.approx(0.10)
    text = (same / "stats" / "verdicts.txt").read_text()
    assert "the same within ±10%" in text and ("a = b" in text or "b = a" in text)
    for seed in range(5):
        gap = run_sim(tmp_path, f"gap{seed}", simulated({"a": 1.3, "b": 1.0}, seed=seed,
                                                        iterations=10, jobs=1, cv=0.05))
        assert pairs_of(gap).loc[lambda p: p.primary, "decision"].tolist() == ["faster"]


def test_an_unresolved_pair_says_what_it_would_take(tmp_path):
    out = run_sim(tmp_path, "short", simulated({"a": 1.08, "b": 1.0}, seed=5, iterations=3,
                                               jobs=2, cv=0.10, drift=0.0))
    pairs = pairs_of(out)
    unresolved = pairs[pairs.decision == "unresolved"]
    assert len(unresolved)
    assert (unresolved["needs_iterations"] > 3).all()
    assert (unresolved["needs_seconds"] >= 0).all()  # from this campaign's own run times
    text = (out / "stats" / "verdicts.txt").read_text()
    assert "not resolved" in text and "fslab run --resume --out DIR --resolve" in text


def test_the_margin_is_a_campaign_key(tmp_path):
    out = run_sim(tmp_path, "wide", simulated({"a": 1.0, "b": 1.0}, seed=3, iterations=10,
                                              jobs=1, cv=0.05, margin="25%"))
    assert pairs_of(out)["margin"].iloc[0] == pytest.approx(0.25)
    assert parse_margin("10%") == parse_margin(10) == parse_margin(0.1) == pytest.approx(0.1)
    with pytest.raises(UserError):
        parse_margin("lots")


def test_an_interval_that_overflows_is_unbounded_not_a_traceback():
    rng = np.random.default_rng(1)
    groups = {name: {i: float(v) for i, v in enumerate(np.exp(rng.normal(0, 3.0, 2)))}
              for name in ("a", "b", "c")}
    found = compare(groups, blocked_allowed=False, family=180)
    assert not isinstance(found, str)
    for pair in found.pairs:
        assert pair.ratio_ci_low >= 0
        if math.isinf(pair.ratio_ci_high):
            assert pair.note == UNBOUNDED and pair.ratio_ci_low == 0.0


@pytest.mark.parametrize("n", [3, 5, 10])
def test_the_detectable_ratio_of_an_unblocked_pair_has_the_power_it_claims(n):
    """Welch pairs: the printed 'could have found R×' is found 4 times in 5 by the Welch
    test itself (its own df and standard error), at the family's level."""
    rng = np.random.default_rng(n)
    sd_a, sd_b, family = 0.10, 0.20, 3
    pilot = compare({"a": dict(enumerate(np.exp(rng.normal(0, sd_a, n)))),
                     "b": dict(enumerate(np.exp(rng.normal(0, sd_b, n))))},
                    blocked_allowed=False, family=family)
    assert not isinstance(pilot, str)
    # the detectable ratio at the true spreads: rebuild it from a pair with those spreads
    exact = compare({"a": dict(enumerate(np.exp(_exact(n) * sd_a))),
                     "b": dict(enumerate(np.exp(_exact(n) * sd_b)))},
                    blocked_allowed=False, family=family)
    assert not isinstance(exact, str)
    mde = exact.pairs[0].mde_ratio
    hits, trials = 0, 4000
    from fslab.analysis.pairs.model import _welch_df, t_inference

    a = rng.normal(math.log(mde), sd_a, (trials, n))
    b = rng.normal(0.0, sd_b, (trials, n))
    va, vb = a.var(axis=1, ddof=1), b.var(axis=1, ddof=1)
    se = np.sqrt(va / n + vb / n)
    df = np.array([_welch_df(x, y, n, n) for x, y in zip(va, vb, strict=True)])
    _, p, _, _ = t_inference(a.mean(axis=1) - b.mean(axis=1), se, df, 0.05 / family)
    hits = int((p < 0.05 / family).sum())
    assert 0.76 <= hits / trials <= 0.84, hits / trials


def _exact(n: int) -> np.ndarray:
    """n values with mean 0 and sample SD exactly 1."""
    x = np.arange(n, dtype=float)
    x -= x.mean()
    return x / x.std(ddof=1)


def test_needs_iterations_is_where_the_pair_resolves_four_times_in_five():
    """A pair measured at 3 iterations: at the iterations it says it needs, simulated
    pairs with the measured ratio and spread resolve (exclude 1 or fall inside the
    margin) about 4 times in 5 — never much less."""
    from fslab.analysis.pairs.model import t_inference
    from fslab.analysis.pairs.pair import decide
    from fslab.core.pair import Pair

    sd, ratio, level, limit = 0.08, 1.06, 0.05, math.log(1.10)
    pair = Pair(ratio=ratio, alpha=level, n_pairs=3, n_a=3, n_b=3, se_log=sd / math.sqrt(3),
                sd_log_a=sd, sd_log_b=sd, test="paired t")
    needs = decide(pair, 0.10).needs_iterations
    assert 3 < needs < 100
    rng = np.random.default_rng(7)
    n = int(needs)
    diffs = rng.normal(math.log(ratio), sd, (20000, n))
    se = diffs.std(axis=1, ddof=1) / math.sqrt(n)
    _, p, low, high = t_inference(diffs.mean(axis=1), se, n - 1, level)
    resolved = (p < level) | ((low >= -limit) & (high <= limit))
    assert 0.78 <= resolved.mean() <= 0.92, resolved.mean()
    fewer = rng.normal(math.log(ratio), sd, (20000, n - 1))
    se = fewer.std(axis=1, ddof=1) / math.sqrt(n - 1)
    _, p, low, high = t_inference(fewer.mean(axis=1), se, n - 2, level)
    assert ((p < level) | ((low >= -limit) & (high <= limit))).mean() < 0.82


def test_a_wide_import_with_two_iterations_analyses_without_a_traceback(tmp_path):
    """2 iterations × 40 jobs × 3 targets at CV 30 %: 120 pairs adjusted together, whose
    intervals at that level overflow; the stats are written and every pair decided."""
    import json

    from tests.conftest import FIXTURES, fslab_here

    source = json.loads((FIXTURES / "fio" / "seqwrite-1job.json").read_text())
    rng = np.random.default_rng(4)
    sigma = math.sqrt(math.log1p(0.3 ** 2))
    for fs in ("ext4", "xfs", "btrfs"):
        for iteration in (1, 2):
            for job in range(40):
                factor = float(np.exp(rng.normal(0, sigma)))
                data = json.loads(json.dumps(source))
                for entry in data["jobs"]:
                    for key in ("bw", "bw_bytes", "iops"):
                        entry["write"][key] *= factor
                path = tmp_path / "tree" / fs / str(iteration) / f"job{job:02d}.json"
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(json.dumps(data))
    done = fslab_here("import", str(tmp_path / "tree"), "--out", str(tmp_path / "out"),
                      "--pattern", "{fs}/{iteration}/{workload}.json")
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    pairs = pd.read_csv(tmp_path / "out" / "stats" / "pairwise.csv")
    primary = pairs[pairs.primary]
    assert len(primary) == 120 and primary["decision"].notna().all()
    assert (primary["ratio_ci_low"] >= 0).all()
    text = (tmp_path / "out" / "stats" / "verdicts.txt").read_text()
    assert "fslab run --resume" not in text  # an import cannot be resumed
