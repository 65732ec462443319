"""Adaptive iterations (`--until-ci`, `--until-detectable`): which cells or comparisons
still need more iterations after each one. `api.run` adds iterations while these lists
are not empty."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from fslab.store import ResultsDir


def unconverged(summary: pd.DataFrame, percent: float) -> list[str]:
    """Headline cells whose CI half-width exceeds `percent` % of the mean (or n < 2)."""
    from fslab.metrics import HEADLINE_METRICS

    cells = summary[summary["metric"].isin(HEADLINE_METRICS) & (summary["n"] > 0)]
    wide = cells[~(cells["ci_half_width_pct"] <= percent)]
    return [f"{r.target} {r.workload} {r.op} {r.metric}: ±{r.ci_half_width_pct:.1f} %"
            for r in wide.itertuples()]


def undetectable(results_dir: Path, percent: float) -> list[str]:
    """Headline comparisons whose minimum detectable ratio is above 1 + `percent` %."""
    from fslab.analysis.comparisons import compare_targets

    metrics = ResultsDir.open(Path(results_dir)).load_metrics(categorical=True)
    tests, _ = compare_targets(metrics)
    wanted = 1 + percent / 100
    wide = tests[~(tests["mde_ratio"] <= wanted)]
    return [f"{r.workload} {r.op} {r.metric}: could detect {r.mde_ratio:.3g}×, not "
            f"{wanted:.3g}×" for r in wide.itertuples()]
