"""Compare aging runs (from `fslab age`): 80 % vs 99 % utilisation, ext4 vs xfs, with and
without fstrim. Rows take the shape of `fslab compare`'s cells, so its table, verdicts,
HTML and exit code serve both.

Per operation, the median and mean latency of the two runs as new/base with a 95 %
interval (sectioning within each run, see fslab.aging.latency); then what each run left
behind (layout score, share of files in one piece, free extents): one measurement per
run, so no interval, and called from the point estimate with that said.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from fslab.aging.dirformat import AGING
from fslab.aging.latency import latency_table, ratio_interval
from fslab.analysis.base_vs_new import COLUMNS, Comparison, classify
from fslab.errors import UserError
from fslab.metrics import HIGHER, LOWER

LATENCY = {"median": "median latency", "mean": "mean latency"}
# What an aging run leaves behind, from its last fragmentation probe: (where, key, better)
OUTCOMES = {"layout score": ("used", "layout_score", HIGHER),
            "files in one piece": ("used", "optimal_share", HIGHER),
            "free extents": ("free", "free_extents", LOWER)}
SETUP_KEYS = ("fs", "fs_impl", "mkfs_command", "mount_options", "image_size",
              "loop_direct_io")


@dataclass
class AgingRun:
    """One aging directory, loaded and format-checked: what the aging reporters and
    `fslab compare` read."""

    path: Path
    record: dict[str, Any]  # aging.json
    log: pd.DataFrame  # oplog.parquet: t_s, op, latency_ns
    probes: list[dict[str, Any]]  # fragmentation.json, in time order
    latency: pd.DataFrame  # per operation (aging.latency), indexed by op
    name: str = ""  # how reports label it (made unique among several)

    @property
    def last(self) -> dict[str, Any]:
        """The last fragmentation probe: the state the run left behind."""
        return self.probes[-1] if self.probes else {}


def load_run(path: Path) -> AgingRun:
    """An aging directory's record, latency table and last probe (one clear error)."""
    path = Path(path)
    _, record = AGING.read(path)  # format checked: a newer one refused in one line
    try:
        probes = json.loads((path / "fragmentation.json").read_text())
    except (OSError, ValueError) as exc:
        raise UserError(f"{path}: not a readable aging directory ({exc})") from None
    import pyarrow.parquet as pq

    try:
        log = pq.read_table(path / "oplog.parquet").to_pandas()
    except (OSError, ValueError) as exc:
        raise UserError(f"{path}: oplog.parquet unreadable ({exc})") from None
    return AgingRun(path, record, log, probes, latency_table(log).set_index("op"), path.name)


def compare_runs(base: Path, new: Path, threshold: float) -> Comparison:
    """Cells (fslab compare's columns) and the setup differences of two aging runs."""
    base_run, new_run = load_run(base), load_run(new)
    rows = []
    for op in sorted(set(base_run.latency.index) & set(new_run.latency.index)):
        a, b = base_run.latency.loc[op], new_run.latency.loc[op]
        for which, metric in LATENCY.items():
            ratio, low, high = ratio_interval(a, b, which)
            if math.isnan(ratio):
                continue
            verdict, note = classify(ratio - 1, low - 1, high - 1, LOWER, threshold)
            rows.append(_row(op, metric, "ns", LOWER, int(a["n"]), int(b["n"]),
                             a[f"{which}_us"] * 1e3, b[f"{which}_us"] * 1e3, ratio,
                             low, high, verdict, note))
    for metric, (part, key, better) in OUTCOMES.items():
        x = base_run.last.get(part, {}).get(key)
        y = new_run.last.get(part, {}).get(key)
        if not _number(x) or not _number(y) or x == 0:
            continue
        verdict, note = classify(y / x - 1, math.nan, math.nan, better, threshold)
        rows.append(_row("end state", metric, "", better, 1, 1, x, y, y / x, math.nan,
                         math.nan, verdict, "one probe per run: no interval"))
    return Comparison(Path(base), Path(new), pd.DataFrame(rows, columns=COLUMNS),
                      setup_differences(base_run.record, new_run.record), threshold)


def setup_differences(base: dict[str, Any], new: dict[str, Any]
                      ) -> list[tuple[str, str, str]]:
    """(what, base, new) for each setting of the two runs that differs."""
    found = []
    for key in SETUP_KEYS:
        a, b = base.get("target", {}).get(key), new.get("target", {}).get(key)
        if a != b:
            found.append((key, str(a), str(b)))
    configs = base.get("config", {}), new.get("config", {})
    for key in sorted(set(configs[0]) | set(configs[1])):
        if configs[0].get(key) != configs[1].get(key):
            found.append((f"aging {key}", str(configs[0].get(key, "–")),
                          str(configs[1].get(key, "–"))))
    if base.get("stopped_by") != new.get("stopped_by"):
        found.append(("stopped by", str(base.get("stopped_by")), str(new.get("stopped_by"))))
    return found


def _row(op: str, metric: str, unit: str, better: str, n_base: int, n_new: int,
         base_value: float, new_value: float, ratio: float, low: float, high: float,
         verdict: str, note: str) -> dict[str, Any]:
    return {"target": "aging run", "workload": "aging", "op": op, "metric": metric,
            "unit": unit, "better": better, "n_base": n_base, "n_new": n_new,
            "base_mean": base_value, "new_mean": new_value, "change": ratio - 1,
            "change_ci_low": low - 1, "change_ci_high": high - 1, "verdict": verdict,
            "note": note}


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(
        value)
