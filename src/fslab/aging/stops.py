"""Stop rules that need the fragmentation probes: a layout target, a plateau."""

from __future__ import annotations

from typing import Any

from fslab.aging.config import AgingConfig


def probe_target_reached(config: AgingConfig, probes: list[dict[str, Any]]) -> str:
    """Why a probe-based stop rule fired ('' when none did): a layout score at or below
    the target, or a plateau of layout score and free extents (each changed less than
    `plateau` over the last `plateau_probes` probes)."""
    scores = [p["used"].get("layout_score") for p in probes if p.get("used")]
    scores = [s for s in scores if isinstance(s, float) and s == s]
    if config.layout_target is not None and scores and scores[-1] <= config.layout_target:
        return f"layout score {scores[-1]:.3f} <= {config.layout_target:g}"
    window = config.plateau_probes + 1
    if not config.plateau or len(probes) < window:
        return ""
    recent = probes[-window:]
    series = [[p["used"].get("layout_score") for p in recent],
              [p["free"].get("free_extents") for p in recent]]
    measured = [values for values in series
                if all(isinstance(v, (int, float)) and v == v for v in values)]
    if not measured:  # nothing to see a plateau in (FUSE: no extents to count)
        return ""
    for values in measured:
        base = max(abs(values[0]), 1e-9)
        if max(values) - min(values) > config.plateau * base:
            return ""
    return f"plateau (< {config.plateau:.0%} change over {window} probes)"
