"""`fslab compare BASE NEW`: two results directories, cell by cell: improved, regressed or
unchanged. (Comparisons between the targets of one campaign are analysis.pairs.comparisons.)

A cell changes only when the 95 % interval of new/base − 1 lies wholly beyond the noise
threshold in one direction (direction honoured: lower latency is an improvement). The
change is a ratio of geometric means with its Welch t interval on the logs: the model
every comparison of fslab uses (analysis.pairs.model), two groups, unblocked (the two
campaigns' iterations are not blocks of each other).
With fewer than two runs on either side there is no interval, and the cell is called
from its point estimate and flagged as such.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from fslab.analysis.cells.observations import per_run
from fslab.analysis.pairs.model import compare
from fslab.core.metrics import HIGHER, headline_of_each

DEFAULT_THRESHOLD = 0.02  # relative changes smaller than 2 % are noise by default
CELL = ["target", "workload", "op", "metric"]
COLUMNS = [*CELL, "unit", "better", "n_base", "n_new", "base_mean", "new_mean", "change",
           "change_ci_low", "change_ci_high", "verdict", "note"]
ENVIRONMENT_KEYS = ("kernel", "cpu_model", "cpu_count", "memory_bytes", "fslab", "python",
                    "virtualization", "lab_fs", "dirty_ratio")


@dataclass
class Comparison:
    """`fslab compare BASE NEW`: one row per cell in both (COLUMNS), and every setting
    in which the two differ (what, base, new). What the compare reporters render."""

    base: Path
    new: Path
    cells: pd.DataFrame
    differences: list[tuple[str, str, str]]
    threshold: float

    def count(self, verdict: str) -> int:
        """How many cells got this verdict (improved, regressed, unchanged)."""
        return int((self.cells["verdict"] == verdict).sum()) if not self.cells.empty else 0

    def __iter__(self) -> Iterator[Any]:
        """Unpacks as (cells, differences), as api.compare returned before."""
        return iter((self.cells, self.differences))


def compare_cells(base: pd.DataFrame, new: pd.DataFrame,
                  threshold: float = DEFAULT_THRESHOLD) -> pd.DataFrame:
    """One row per cell present in both: the relative change with its CI and a verdict."""
    def values(metrics: pd.DataFrame) -> pd.DataFrame:
        runs = per_run(metrics)
        pairs = list(zip(runs["workload"].astype(str), runs["metric"].astype(str),
                         strict=True))
        shown = headline_of_each(pairs)  # what each workload's report shows
        return runs[[pair in shown for pair in pairs]]

    base_runs, new_runs = values(base), values(new)
    rows = []
    new_groups = dict(list(new_runs.groupby(CELL, sort=True)))
    for key, group in base_runs.groupby(CELL, sort=True):
        if key not in new_groups:
            continue
        a = group["value"].to_numpy(dtype=float)
        b = new_groups[key]["value"].to_numpy(dtype=float)
        a, b = a[np.isfinite(a)], b[np.isfinite(b)]
        if not len(a) or not len(b) or a.mean() == 0:
            continue
        change, low, high = _ratio(b, a)
        change -= 1
        better = group["better"].iloc[0]
        verdict, note = classify(change, low - 1, high - 1, better, threshold)
        rows.append({**dict(zip(CELL, key, strict=True)), "unit": group["unit"].iloc[0],
                     "better": better, "n_base": len(a), "n_new": len(b),
                     "base_mean": a.mean(), "new_mean": b.mean(), "change": change,
                     "change_ci_low": low - 1, "change_ci_high": high - 1,
                     "verdict": verdict, "note": note})
    return pd.DataFrame(rows, columns=COLUMNS)


def _ratio(new: np.ndarray, base: np.ndarray) -> tuple[float, float, float]:
    """new/base as a ratio of geometric means with its 95 % interval (NaN ends when a side
    has fewer than 2 runs, or values are not positive: then the ratio of means)."""
    found = compare({"new": dict(enumerate(new.tolist())),
                     "base": dict(enumerate(base.tolist()))}, blocked_allowed=False)
    if isinstance(found, str):
        return float(new.mean() / base.mean()), math.nan, math.nan
    (pair,) = found.pairs  # sorted names: "base" vs "new"
    return 1 / pair.ratio, 1 / pair.ratio_ci_high, 1 / pair.ratio_ci_low


def classify(change: float, low: float, high: float, better: str,
             threshold: float) -> tuple[str, str]:
    """improved / regressed / unchanged, from the CI of the relative change."""
    note = ""
    if math.isnan(low) or math.isnan(high):
        low = high = change
        note = "no CI (fewer than 2 runs on a side): point estimate"
    up, down = low > threshold, high < -threshold
    if not (up or down):
        return "unchanged", note
    good = up if better == HIGHER else down
    return ("improved" if good else "regressed"), note


def setting_differences(base_environment: dict[str, Any], new_environment: dict[str, Any],
                        base_campaign: dict[str, Any], new_campaign: dict[str, Any]
                        ) -> list[tuple[str, str, str]]:
    """(what, base, new) for every recorded setting that differs: the environment's, and
    an aging run's own settings (campaign.toml [aging]: utilisation, recipe, fstrim …)."""
    diffs = environment_differences(base_environment, new_environment)
    base_aging, new_aging = base_campaign.get("aging") or {}, new_campaign.get("aging") or {}
    for key in sorted(set(base_aging) | set(new_aging)):
        a, b = base_aging.get(key, "–"), new_aging.get(key, "–")
        if a != b:
            diffs.append((f"aging {key}", str(a), str(b)))
    return diffs


def environment_differences(
    base: dict[str, Any], new: dict[str, Any]
) -> list[tuple[str, str, str]]:
    """(what, base, new) for every recorded setting that differs between two campaigns."""
    diffs = []
    for key in ENVIRONMENT_KEYS:
        if base.get(key) != new.get(key):
            diffs.append((key, str(base.get(key, "–")), str(new.get(key, "–"))))
    for tool in sorted(set(base.get("tools", {})) | set(new.get("tools", {}))):
        a, b = base.get("tools", {}).get(tool, "–"), new.get("tools", {}).get(tool, "–")
        if a != b:
            diffs.append((f"{tool} version", str(a), str(b)))
    base_targets, new_targets = base.get("targets", {}), new.get("targets", {})
    for name in sorted(set(base_targets) & set(new_targets)):
        for field in ("fs_impl", "mkfs_command", "mount_options_requested",
                      "mount_options_added", "image_size",
                      "loop_direct_io", "throttle", "properties"):
            a, b = base_targets[name].get(field), new_targets[name].get(field)
            if a != b:
                diffs.append((f"{name} {field}", str(a), str(b)))
    return diffs
