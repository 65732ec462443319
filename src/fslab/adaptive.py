"""Adaptive iterations (`--until-ci`, `--until-detectable`): which cells or comparisons
still need more iterations after each one, and the loop that adds them one at a time."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pandas as pd

from fslab.store import ResultsDir


def still_open(results_dir: Path, summary: pd.DataFrame, until_ci: float | None,
               until_detectable: float | None) -> list[str]:
    """What the targets asked for have not reached yet (empty: done)."""
    found = unconverged(summary, until_ci) if until_ci else []
    return found + (undetectable(results_dir, until_detectable) if until_detectable else [])


def add_iterations(results_dir: Path, summary: pd.DataFrame, until_ci: float | None,
                   until_detectable: float | None, max_iterations: int, iterations: int,
                   one_more: Callable[[int], pd.DataFrame]) -> tuple[pd.DataFrame, list[str]]:
    """Run `one_more(iteration count)` (which runs it and returns the new summary) until
    nothing is open or `max_iterations` is reached; return the last summary and what is
    still open."""
    open_cells = still_open(results_dir, summary, until_ci, until_detectable)
    while open_cells and iterations < max_iterations:
        iterations += 1
        summary = one_more(iterations)
        open_cells = still_open(results_dir, summary, until_ci, until_detectable)
    return summary, open_cells


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
