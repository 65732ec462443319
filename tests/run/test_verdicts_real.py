"""Verdicts on real campaigns (issue 13): identical targets are found equal, a known
handicap is found with the truth inside its interval."""

import pandas as pd
import pytest

from fslab import api
from fslab.plan.loading import load_campaign
from fslab.targets.device_options import throttle_support
from tests.conftest import requires

CAMPAIGN = """
name = "{name}"
iterations = {iterations}
runtime = 1
image_size = "256M"
file_size = "16M"
seed = {seed}
ceiling = false
rounds = {rounds}
{targets}
[[workload]]
preset = "direct5"
only = ["randread"]
"""


def run(tmp_path, lab, name, targets, iterations=3, seed=1, rounds=1):
    path = tmp_path / f"{name}.toml"
    path.write_text(CAMPAIGN.format(name=name, iterations=iterations, seed=seed,
                                    targets=targets, rounds=rounds))
    out = tmp_path / name
    result = api.run(load_campaign(path), out=out, lab=lab)
    assert result.runner.failed == 0
    api.analyze(out)
    pairs = pd.read_csv(out / "stats" / "pairwise.csv")
    tests = pd.read_csv(out / "stats" / "tests.csv")
    return pairs[(pairs.metric == "iops") & (pairs.op == "read")], tests


@pytest.mark.privileged
def test_identical_targets_show_no_difference(tmp_path, lab, rounds=3):
    """In interleaved slices (the default way), as fslab measures by default. Identical
    targets are called different in 5 % of campaigns by design (the family's α): a
    campaign that calls one gets a second, independent one (another seed), and both must
    not — a sound analysis fails this about 1 time in 400, one that calls differences
    often still fails (its calibration is checked by simulation: test_simulator.py). It
    runs beside the other tests: a busy, drifting machine widens the intervals but, with
    the targets interleaved, must not make identical ones differ."""
    requires("fio", "mkfs.ext4", "losetup")
    targets = "".join(f'[[target]]\nname = "ext4-{x}"\nfs = "ext4"\n' for x in "abc")
    for seed in (1, 2):
        pairs, tests = run(tmp_path, lab, f"aa{seed}", targets, rounds=rounds, seed=seed)
        assert len(pairs) == 3
        if not pairs["significant"].any():
            break
    assert not pairs["significant"].any(), pairs[["a", "b", "ratio", "p_adj"]]
    # and each interval says so: it holds 1
    assert ((pairs.ratio_ci_low <= 1) & (pairs.ratio_ci_high >= 1)).all()
    assert tests[tests.metric == "iops"]["blocked"].all()


@pytest.mark.privileged
def test_a_known_handicap_is_found_with_the_truth_in_its_interval(tmp_path, lab):
    """In interleaved slices (a run in one piece is one round of one slice of the same
    path): 2x found, with a narrow interval that holds it."""
    requires("fio", "mkfs.ext4", "losetup")
    if throttle_support():
        pytest.fail(f"CI must run every test: {throttle_support()}")
    targets = ('[[target]]\nname = "fast"\nfs = "ext4"\nthrottle = { read_iops = 400 }\n'
               '[[target]]\nname = "slow"\nfs = "ext4"\nthrottle = { read_iops = 200 }\n')
    widths = {}
    for rounds in (3,):
        pairs, _ = run(tmp_path, lab, f"ab{rounds}", targets, iterations=5, rounds=rounds)
        (pair,) = pairs.itertuples()
        ratio, low, high = pair.ratio, pair.ratio_ci_low, pair.ratio_ci_high
        if (pair.a, pair.b) == ("slow", "fast"):
            ratio, low, high = 1 / ratio, 1 / high, 1 / low
        assert pair.significant
        # Both capped, so the truth is 400/200 in steady state. A 1-s window also counts
        # a few I/Os beyond the cap (the throttle's slice at the window's edges; measured:
        # fast 401.5-403.5, slow 203.6-205.6 IOPS), a surplus of 0-6 IOPS per target; in
        # slices of 1/rounds s each window has its own edges, so the surplus in IOPS grows
        # as the window shrinks. The interval must reach into that band.
        surplus = 6 * rounds
        truth_low, truth_high = 400 / (200 + surplus), (400 + surplus) / 200
        assert low <= truth_high and high >= truth_low, (rounds, ratio, low, high)
        assert ratio == pytest.approx(2.0, rel=0.1)
        widths[rounds] = high / low
    # Both narrower than the disk itself would allow: between fresh file systems this disk
    # spreads by sd(log A/B) 0.08-0.17, which at five iterations (t = 2.78) is an interval
    # at least 1.22 wide; a throttle is steadier than that. Which design is narrower varies
    # between sittings. Five iterations, not three: the throttle's edge surplus spreads
    # each slice by up to 3 %; with three (t = 4.3) the width ranged 1.03-1.16 over four
    # sittings; with five, 1.02-1.07 on a quiet host and 1.12 with the hypervisor
    # stealing much of a CPU (measured 2026-11-25).
    assert max(widths.values()) < 1.22, widths
