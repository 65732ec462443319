"""Which comparisons a campaign asks: one primary question per workload (its primary
metric, on the op that carries it), the rest exploratory, and no metric tested twice.

A reader asks of each workload one thing — which target is faster at what the workload
is for — so verdicts answer only the primary questions, with error control across all
of them (analysis.pairs.comparisons). A campaign's other metrics are estimates with intervals.

Where the primary metric comes from, first match wins:
1. the campaign's `primary = [...]` (`--primary`): the first listed metric the workload has;
2. what the workload declared when it ran (run.json `workload_metadata.primary_metric`:
   random fio jobs IOPS, sequential ones bandwidth, file workloads operations per second);
3. for imported results, the same rule on the data: IOPS where the block size (bandwidth
   / IOPS) is below 64 KiB or the workload is named random, else bandwidth; then
   operations per second, time, and the first headline metric it has.

The op: a mixed job's reads and writes run together, so its question is the `total`
op; a workload whose phases are ops (small-file create, read, delete) asks one question
per phase.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
import pandas as pd

from fslab.analysis.step import Step
from fslab.core.campaign_settings import CampaignSettings
from fslab.core.metrics import HEADLINE_METRICS
from fslab.core.record import RunRecord

QuestionKey = tuple[str, str, str]  # workload, op, metric (a tuner's question: tune.measure)
# Inferred primary metrics, in order of preference (rule 3 above).
INFERRED_ORDER = ("bw_bytes", "ops_per_s", "seconds")
# Below this block size a job is about operations (IOPS), above it about bytes: 4–16 KiB
# random I/O against 128 KiB–1 MiB streaming in the studies' presets.
SMALL_BLOCK = 64 * 1024
# IOPS and bandwidth of one op are one quantity when every run's ratio (the block size)
# agrees to this relative tolerance: the second is not tested again.
SAME_QUANTITY_RTOL = 1e-6

# What this step does, in one statement the report prints (stats/methods.csv).
METHOD = ('Questions: each workload has one primary metric (random I/O: IOPS; sequential: '
          'bandwidth; file workloads: operations per second; a campaign may name others), and '
          'its verdict answers only that; bandwidth that is IOPS times a fixed block size is '
          'not tested again. Other metrics are exploratory estimates with their own 95 % '
          'intervals.')


def primary_metric(workload: str, metrics: Iterable[str], declared: str = "",
                   campaign_primary: Iterable[str] = (), block_size: float = math.nan) -> str:
    """The metric a workload's verdict is about (rules 1–3 of the module doc)."""
    present = set(metrics)
    for metric in campaign_primary:
        if metric in present:
            return metric
    if declared in present:
        return declared
    small = block_size < SMALL_BLOCK if block_size == block_size else "rand" in workload.lower()
    if "iops" in present and (small or "bw_bytes" not in present):
        return "iops"
    for metric in INFERRED_ORDER:
        if metric in present:
            return metric
    return next((m for m in HEADLINE_METRICS if m in present), "")


def primary_questions(runs: pd.DataFrame, declared: dict[str, str],
                      campaign_primary: Iterable[str] = ()) -> set[QuestionKey]:
    """Every (workload, op, metric) a verdict answers, from the per-run table."""
    wanted = list(campaign_primary)
    questions: set[QuestionKey] = set()
    for workload, rows in runs.groupby("workload", sort=True, observed=True):
        name = str(workload)
        present = rows["metric"].astype(str).unique()
        own = declared.get(name) or next(  # a section's: what its runs declared
            (declared[r] for r in rows["run_id"].astype(str).unique() if r in declared), "")
        settled = own in present or any(m in present for m in wanted)
        metric = primary_metric(name, present, own, wanted,
                                math.nan if settled else _block_size(rows))
        if not metric:
            continue
        ops = set(rows.loc[rows["metric"] == metric, "op"].astype(str))
        chosen = {"total"} if "total" in ops else ops
        questions |= {(name, op, metric) for op in chosen}
    return questions


def _block_size(rows: pd.DataFrame) -> float:
    """Median bytes per I/O of a workload's runs (NaN without IOPS and bandwidth)."""
    rates = rows[rows["metric"].isin(("iops", "bw_bytes")) & (rows["op"] != "total")]
    wide = rates.pivot_table(index=["run_id", "op"], columns="metric", values="value",
                             aggfunc="first", observed=True)
    if not {"iops", "bw_bytes"} <= set(wide.columns):
        return math.nan
    ratio = (wide["bw_bytes"] / wide["iops"]).replace([np.inf, -np.inf], np.nan).dropna()
    return float(ratio.median()) if len(ratio) else math.nan


def derived_metrics(runs: pd.DataFrame, primary: set[QuestionKey]) -> set[QuestionKey]:
    """IOPS or bandwidth rows that are the other one times a fixed block size: the one
    that is not primary (bandwidth when neither is) is not tested again."""
    both = runs[runs["metric"].isin(("iops", "bw_bytes"))]
    if both.empty:
        return set()
    wide = both.pivot_table(index=["workload", "op", "run_id"], columns="metric",
                            values="value", aggfunc="first", observed=True)
    if not {"iops", "bw_bytes"} <= set(wide.columns):
        return set()
    ratio = (wide["bw_bytes"] / wide["iops"]).replace([np.inf, -np.inf], np.nan)
    out: set[QuestionKey] = set()
    for (workload, op), values in ratio.groupby(level=["workload", "op"], observed=True):
        values = values.dropna()
        if len(values) < 2 or values.min() <= 0:
            continue
        if values.max() / values.min() - 1 <= SAME_QUANTITY_RTOL:
            keep_bw = (str(workload), str(op), "bw_bytes") in primary
            out.add((str(workload), str(op), "iops" if keep_bw else "bw_bytes"))
    return out


def declared_primaries(records: Iterable[RunRecord]) -> dict[str, str]:
    """{workload or run id: the primary metric it declared when it ran} (run.json
    metadata; by run id too, for the questions of a job file's sections)."""
    out: dict[str, str] = {}
    for record in records:
        said = record.workload_metadata
        out.update(said.section_primaries)
        if said.primary_metric:
            out[record.workload] = out[record.run_id] = said.primary_metric
    return out


def _asked(runs: pd.DataFrame, records: list[RunRecord], settings: CampaignSettings
           ) -> tuple[set[QuestionKey], dict[str, str]]:
    declared = declared_primaries(records)
    return primary_questions(runs[runs["metric"].isin(HEADLINE_METRICS)], declared,
                             settings.primary), declared


STEP = Step("questions", reads=("runs", "records", "settings"), makes=("asked", "declared"),
            run=_asked, method=METHOD)
