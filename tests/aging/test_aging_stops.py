"""The probe-based stop rules of an aging run: a layout target, and a plateau."""

from fslab.aging.config import AgingConfig
from fslab.aging.stops import probe_target_reached

NAN = float("nan")


def probes(scores, extents):
    return [{"used": {"layout_score": s}, "free": {"free_extents": e}}
            for s, e in zip(scores, extents, strict=True)]


def test_a_plateau_needs_every_measured_series_flat():
    config = AgingConfig(plateau=0.05, plateau_probes=3)
    assert probe_target_reached(config, probes([0.8, 0.8, 0.81, 0.8], [100, 101, 100, 102]))
    assert not probe_target_reached(config, probes([0.8, 0.8, 0.81, 0.8], [100, 150, 200, 250]))
    assert not probe_target_reached(config, probes([0.8, 0.8], [100, 100]))  # too few probes


def test_no_plateau_when_nothing_could_be_measured():
    """A FUSE file system has no extents to count: no series is no plateau, not one."""
    config = AgingConfig(plateau=0.05, plateau_probes=3)
    assert probe_target_reached(config, probes([NAN] * 4, [None] * 4)) == ""
    # One measurable series is enough to decide.
    assert probe_target_reached(config, probes([NAN] * 4, [100, 100, 101, 100]))


def test_the_layout_target_fires_on_the_last_score():
    config = AgingConfig(layout_target=0.5)
    assert "0.450 <= 0.5" in probe_target_reached(config, probes([0.9, 0.45], [1, 1]))
    assert probe_target_reached(config, probes([0.45, 0.9], [1, 1])) == ""
