"""The study's own interval beside fslab's (stats/study_intervals.csv and a line in the
verdicts under fslab's answer), where a study's preset ran.

A study's interval is computed as its text gives it (analysis/cells/study_ways.py): the
USB-stick report's mean ± 1.96·s/√n over every dd sample of a cell, the fio notebook's
mean ± t·s/√n over one row per fio job. fslab's own interval rests on the iterations
(each a fresh file system: analysis/cells/summary.py); a study's n counts samples of one
run, or the jobs of one run, which share a file system and a stretch of time and so are
not independent: its interval is narrower than what a repeat would show. Both are kept,
side by side, with their widths' ratio. Where a study's stated conclusion contradicts its
own table (the USB-stick report crowned the slowest file system of its table), the
verdicts say so.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np
import pandas as pd

from fslab.analysis.cells.study_ways import CLAIMS, USB_Z, WAYS, Way, contradiction
from fslab.analysis.step import Step
from fslab.core.campaign_settings import CampaignSettings
from fslab.core.metrics import title
from fslab.core.record import RunRecord
from fslab.core.units import format_value

COLUMNS = ["study", "workload", "target", "op", "metric", "unit", "rows", "n", "mean", "sd",
           "critical", "margin", "low", "high", "fslab_n", "fslab_center", "fslab_low",
           "fslab_high", "width_ratio", "formula"]
METHOD = ("The study's own interval: where a study's preset ran, each cell's interval as the "
          "study's text computes it (the USB-stick report: mean ± 1.96·s/√n over every dd "
          "sample of the cell; the fio notebook: mean ± t·s/√n over one row per fio job), "
          "beside fslab's, which rests on the iterations (fresh file systems): a study's n "
          "counts samples of one run that share a file system and a stretch of time, so its "
          "interval is narrower than a repeat would show (width_ratio: fslab's width over "
          "the study's).")


def study_intervals(metrics: pd.DataFrame, runs: pd.DataFrame, records: Sequence[RunRecord],
                    settings: CampaignSettings, summary: pd.DataFrame,
                    asked: Iterable[tuple[str, str, str]]
                    ) -> tuple[pd.DataFrame, list[dict[str, str]]]:
    """(stats/study_intervals.csv, the verdicts' rows: each question's study interval under
    its workload, and a study's conclusion its own table contradicts)."""
    if not settings.studies or metrics.empty:
        return pd.DataFrame(columns=COLUMNS), []
    job_of = dict(zip(metrics["workload"].astype(str), metrics["job"].astype(str),
                      strict=True)) if "job" in metrics else {}
    rows: list[dict[str, object]] = []
    said: list[dict[str, str]] = []
    claims: dict[str, dict[str, str]] = {}  # study -> its row, after its intervals
    for workload, op, metric in sorted(asked):
        study = settings.studies.get(job_of.get(workload, workload), "")
        way = WAYS.get(study)
        if way is None:
            continue
        found = [_row(way, workload, op, metric, target, values, counted, summary)
                 for target, values, counted in _study_rows(way, metrics, runs, records,
                                                            workload, op, metric)]
        found = [row for row in found if row]
        rows += found
        if found:
            said.append({"kind": "study", "workload": workload,
                         "text": _sentence(way, workload, op, metric, found)})
        claim = CLAIMS.get(study)
        if claim is not None and study not in claims and (text := contradiction(claim)):
            claims[study] = {"kind": "study_claim", "workload": workload, "text": text}
    return pd.DataFrame(rows, columns=COLUMNS), said + list(claims.values())


def _study_rows(way: Way, metrics: pd.DataFrame, runs: pd.DataFrame,
                records: Sequence[RunRecord], workload: str, op: str, metric: str
                ) -> Iterable[tuple[str, np.ndarray, str]]:
    """(target, the values the study's n counts, what they are) of each target of one
    question: every sample of every run (samples), or every fio job's value of every run
    (fio jobs: the clones run.json keeps of a run in one piece; a run measured in slices
    keeps none, and its whole value stands for its jobs: runs)."""
    if way.rows == "samples":
        cell = metrics[(metrics["workload"].astype(str) == workload)
                       & (metrics["op"].astype(str) == op)
                       & (metrics["metric"].astype(str) == metric)]
        for target, rows in cell.groupby(cell["target"].astype(str), sort=True):
            yield target, rows["value"].to_numpy(dtype=float), way.rows
        return
    per_job = _clone_values(records, workload, op, metric)
    cell = runs[(runs["workload"].astype(str) == workload) & (runs["op"].astype(str) == op)
                & (runs["metric"].astype(str) == metric)]
    for target, rows in cell.groupby(cell["target"].astype(str), sort=True):
        jobs = per_job.get(target)
        if jobs and len(jobs) >= len(rows):
            yield target, np.asarray(jobs, dtype=float), way.rows
        else:
            yield target, rows["value"].to_numpy(dtype=float), "runs"


def _clone_values(records: Sequence[RunRecord], workload: str, op: str, metric: str
                  ) -> dict[str, list[float]]:
    """{target: each fio job's value of every run} where every run kept its clones."""
    out: dict[str, list[float]] = {}
    broken: set[str] = set()
    for record in records:
        if record.workload != workload or record.status != "ok":
            continue
        clones = record.workload_metadata.more.get("clones")
        values = [c[op][metric] for c in clones or [] if isinstance(c, dict)
                  and isinstance(c.get(op), dict) and c[op].get(metric) is not None]
        if not values:
            broken.add(record.target)
        out.setdefault(record.target, []).extend(values)
    return {t: v for t, v in out.items() if t not in broken}


def _row(way: Way, workload: str, op: str, metric: str, target: str, values: np.ndarray,
         counted: str, summary: pd.DataFrame) -> dict[str, object]:
    """One cell's study interval beside fslab's ({} with fewer than 2 values)."""
    from scipy import stats

    values = values[np.isfinite(values)]
    n = len(values)
    if n < 2:
        return {}
    mean, sd = float(values.mean()), float(values.std(ddof=1))
    critical = USB_Z if way.critical == "z" else float(stats.t.ppf(0.975, n - 1))
    margin = critical * sd / math.sqrt(n)
    own = summary[(summary["target"].astype(str) == target)
                  & (summary["workload"].astype(str) == workload)
                  & (summary["op"].astype(str) == op) & (summary["metric"].astype(str) == metric)]
    first = own.iloc[0] if not own.empty else None
    low, high = (float(first["ci_low"]), float(first["ci_high"])) if first is not None \
        else (math.nan, math.nan)
    return {"study": way.study, "workload": workload, "target": target, "op": op,
            "metric": metric, "unit": str(first["unit"]) if first is not None else "",
            "rows": counted, "n": n, "mean": mean, "sd": sd,
            "critical": f"{way.critical} = {critical:.4g}", "margin": margin,
            "low": mean - margin, "high": mean + margin,
            "fslab_n": int(first["n"]) if first is not None else 0,
            "fslab_center": float(first["geomean"]) if first is not None else math.nan,
            "fslab_low": low, "fslab_high": high,
            "width_ratio": (high - low) / (2 * margin) if margin > 0 else math.nan,
            "formula": way.formula}


def _sentence(way: Way, workload: str, op: str, metric: str,
              rows: list[dict[str, object]]) -> str:
    """'write bandwidth, the study's way (mean ± 1.96·s/√n over its samples): ext4
    5.80–6.09 MB/s (n 40) …; fslab's 95 % intervals (iterations) are 3.1–4.2× as wide'."""
    def shown(value: object, unit: object) -> str:
        number = float(str(value))
        if way.unit == "MB/s":
            return f"{number / 1e6:.4g}"
        return format_value(number, str(unit))

    cells = "; ".join(
        f"{row['target']} {shown(row['low'], row['unit'])}–{shown(row['high'], row['unit'])}"
        f"{' ' + way.unit if way.unit else ''} (n {row['n']} {row['rows']})" for row in rows)
    ratios = [float(str(row["width_ratio"])) for row in rows
              if math.isfinite(float(str(row["width_ratio"])))]
    wide = (f"; fslab's 95 % intervals over iterations (fresh file systems) are "
            f"{min(ratios):.2g}–{max(ratios):.2g}× as wide as the study's" if ratios else "")
    what = "" if op in workload else f"{op} "
    over = way.rows if all(r["rows"] == way.rows for r in rows) else (
        f"runs (the study's rows were {way.rows}: a run measured in slices keeps none)")
    return (f"{what}{title(metric, long=True)}, the study's own interval "
            f"({'z = 1.96' if way.critical == 'z' else 'Student t'} over {over}, "
            f"stats/study_intervals.csv): {cells}{wide}.")


STEP = Step("study_intervals", reads=("metrics", "runs", "records", "settings", "summary",
                                      "asked"),
            makes=("study_intervals", "study_rows"), run=study_intervals, method=METHOD,
            tables={"study_intervals": "study_intervals.csv"},
            optional=frozenset({"study_intervals"}),
            stated=lambda done: not done["study_intervals"].empty)
