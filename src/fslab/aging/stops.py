"""Stop rules that need the fragmentation probes: a layout target, a plateau."""

from __future__ import annotations

from fslab.aging.config import AgingConfig
from fslab.core.aging_record import Probe


def probe_target_reached(config: AgingConfig, probes: list[Probe]) -> str:
    """Why a probe-based stop rule fired ('' when none did): a layout score at or below
    the target, or a plateau of layout score and free extents (each changed less than
    `plateau` over the last `plateau_probes` probes)."""
    scores = [score for score in (p["used"].get("layout_score") for p in probes
                                  if p.get("used"))
              if isinstance(score, float) and score == score]
    if config.layout_target is not None and scores and scores[-1] <= config.layout_target:
        return f"layout score {scores[-1]:.3f} <= {config.layout_target:g}"
    window = config.plateau_probes + 1
    if not config.plateau or len(probes) < window:
        return ""
    recent = probes[-window:]
    series: list[list[object]] = [[p["used"].get("layout_score") for p in recent],
                                  [p["free"].get("free_extents") for p in recent]]
    measured = [numbers for numbers in map(_measured, series) if numbers]
    if not measured:  # nothing to see a plateau in (FUSE: no extents to count)
        return ""
    for values in measured:
        base = max(abs(values[0]), 1e-9)
        if max(values) - min(values) > config.plateau * base:
            return ""
    return f"plateau (< {config.plateau:.0%} change over {window} probes)"


def _measured(values: list[object]) -> list[float]:
    """The values as numbers ([] when one is missing or not a number)."""
    numbers = [float(v) for v in values if isinstance(v, int | float) and v == v]
    return numbers if len(numbers) == len(values) else []
