"""A sweep's answer: per swept job, the best configuration and those within reach
(analysis.factors.best), each factor's effect and whether it changes the ranking
(analysis.factors.effects), and the sentences that open the job's verdicts.

    randread: best ext4 iodepth=8; within reach: xfs iodepth=8 (0.97×, CI 0.91–1.03×)
      iodepth 1→8: 3.1× IOPS (CI 2.6–3.7×) on every target alike (target × iodepth
      p = 0.62); the ranking does not change
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pandas as pd

from fslab.analysis.factors.best import BEST, BEST_COLUMNS, NONE, WITHIN_REACH, best_table
from fslab.analysis.factors.effects import (
    EFFECT_COLUMNS,
    designs,
    effects_table,
    fit,
)
from fslab.analysis.factors.effects import METHOD as EFFECTS_METHOD
from fslab.analysis.factors.levels import factors_of, with_levels
from fslab.analysis.pairs.model import ALPHA
from fslab.analysis.pairs.questions import primary_questions
from fslab.analysis.step import Step
from fslab.core.campaign_settings import CampaignSettings
from fslab.core.metrics import HEADLINE_METRICS, title
from fslab.core.pair import Pair
from fslab.core.units import format_bound

SHOWN_WITHIN_REACH = 4  # more are counted, and listed in best.csv


def analyse_sweep(runs: pd.DataFrame, levels: pd.DataFrame, settings: CampaignSettings,
                  declared: dict[str, str], summary: pd.DataFrame, blocked_allowed: bool,
                  margin: float, pairwise: Sequence[Pair] = ()
                  ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(effects, best) of a campaign's swept jobs; empty tables without a sweep. The
    primary pairs of `pairwise` answer for themselves in the best table."""
    factors = factors_of(levels)
    if not factors or runs.empty:
        return (pd.DataFrame(columns=EFFECT_COLUMNS), pd.DataFrame(columns=BEST_COLUMNS))
    runs = with_levels(runs, levels)
    questions = job_questions(runs, declared, settings.primary)
    swept = runs[runs[factors].notna().any(axis=1)]  # rows of a cell with some level
    swept_jobs = set(swept["job"].astype(str))
    questions = {job: q for job, q in questions.items() if job in swept_jobs}
    fitted = [fit(design) for design in designs(runs, questions, factors,
                                                settings.levels)]
    cached = set()
    if "cache_bound" in summary:
        bound = summary[summary["cache_bound"].astype(bool)]
        cached = set(zip(bound["target"].astype(str), bound["workload"].astype(str),
                         strict=True))
    return (effects_table(fitted),
            best_table(runs, questions, blocked_allowed, margin, cached, pairwise))


def job_questions(runs: pd.DataFrame, declared: dict[str, str],
                  campaign_primary: tuple[str, ...]) -> dict[str, tuple[str, str]]:
    """{job: (op, metric)}: each job's primary question, the one most of its variants
    ask (analysis.pairs.questions, per variant)."""
    values = runs[runs["metric"].isin(HEADLINE_METRICS)]
    job_of = dict(zip(values["workload"].astype(str), values["job"].astype(str), strict=True))
    asked: dict[str, list[tuple[str, str]]] = {}
    for workload, op, metric in sorted(primary_questions(values, declared, campaign_primary)):
        asked.setdefault(job_of[workload], []).append((op, metric))
    return {job: max(set(found), key=found.count) for job, found in asked.items()}


# Sentences -----------------------------------------------------------------------------


def sweep_sentences(effects: pd.DataFrame, best: pd.DataFrame,
                    alpha: float = ALPHA) -> dict[str, list[dict[str, str]]]:
    """{job: verdict rows (kind, workload, text)}: its best configuration, then one row
    per factor that matters and one for those that do not."""
    out: dict[str, list[dict[str, str]]] = {}
    jobs = list(dict.fromkeys([*best.get("workload", []), *effects.get("workload", [])]))
    for job in map(str, jobs):
        rows = []
        mine = best[best["workload"].astype(str) == job] if not best.empty else best
        if not mine.empty:
            rows.append(_row("best", job, best_sentence(job, mine)))
        found = effects[effects["workload"].astype(str) == job] if not effects.empty \
            else effects
        # a job whose cells the page cache answered says so on every line that answers
        # (issue 59: no "the ranking changes" without the word)
        bound = (" (cache-bound cells among them: the page cache, not the file system, "
                 "answered)") if any("cache-bound" in str(note)
                                     for note in mine.get("note", [])) else ""
        quiet = []
        for factor, levels in found.groupby("factor", sort=False):
            text, matters = factor_sentence(str(factor), levels, alpha)
            text += bound
            if matters:
                rows.append(_row("factor", job, text))
            else:
                quiet.append(text)
        if quiet:
            rows.append(_row("factor", job, "no effect shown: " + "; ".join(quiet)))
        out[job] = rows
    return out


def best_sentence(job: str, rows: pd.DataFrame) -> str:
    """'randread: best ext4 iodepth=8; within reach: xfs iodepth=8 (0.97×, CI 0.91–1.03×)'."""
    top = rows[rows["role"].isin([BEST, NONE])].iloc[0]
    note = top["note"] if isinstance(top.get("note"), str) and top["note"] else ""
    if top["role"] == NONE:
        return f"{job}: no best configuration ({note})"
    text = f"{job}: best {top['configuration']}"
    near = rows[rows["role"] == WITHIN_REACH]
    compared = top.get("compared")
    if near.empty:
        alone = compared is not None and pd.notna(compared) and float(compared) == 0
        text += " (the only one compared)" if alone else \
            "; every other configuration is behind it"
    else:
        shown = [f"{r.configuration} ({r.ratio:.3g}×, "
                 + (f"CI {_bound(r.ratio_ci_low)}–{_bound(r.ratio_ci_high)}×)"
                    if not (math.isnan(r.ratio_ci_low) or math.isnan(r.ratio_ci_high))
                    else "no interval)")
                 for r in near.head(SHOWN_WITHIN_REACH).itertuples()]
        more = len(near) - SHOWN_WITHIN_REACH
        text += (f"; within reach: {', '.join(shown)}"
                 + (f" and {more} more (best.csv)" if more > 0 else ""))
    return text + (f"; {note}" if note else "")


def factor_sentence(factor: str, levels: pd.DataFrame, alpha: float) -> tuple[str, bool]:
    """(the sentence, whether the factor matters: an effect or an interaction shown)."""
    first = levels.iloc[0]
    if isinstance(first.get("note"), str) and first["note"]:
        return f"{factor}: {first['note']}", False
    metric = title(str(first["metric"]))
    last = levels.iloc[-1]
    text = (f"{factor} {first['reference']}→{last['level']}: {last['ratio']:.3g}× {metric} "
            f"(CI {_bound(last['ratio_ci_low'])}–{_bound(last['ratio_ci_high'])}×)")
    peak = levels.loc[levels["ratio"].map(lambda r: abs(math.log(r)) if r > 0 else 0).idxmax()]
    if peak["level"] != last["level"]:
        text += f", the most at {factor}={peak['level']}: {peak['ratio']:.3g}×"
    matters = bool((levels["p_adj"] < alpha).any())
    targets = str(first.get("targets") or "")
    p_int = first.get("interaction_p_adj", math.nan)
    if not isinstance(p_int, float) or math.isnan(p_int):
        return text + (f" on {targets}" if targets else ""), matters
    ranks = str(first.get("first_by_level") or "")
    if p_int < alpha:
        changes = bool(levels["ranking_changes"].astype(bool).any())
        text += (f"; the effect differs by target ({last['by_target']}; target × {factor} "
                 f"p = {p_int:.2g})")
        text += f" and the ranking changes: first {ranks}" if changes else \
            "; the first target stays the same"
        return text, True
    text += f" on every target alike (target × {factor} p = {p_int:.2g})"
    if bool(levels["ranking_changes"].astype(bool).any()):
        text += f"; the first target differs by level ({ranks}) within chance"
    else:
        text += "; the ranking does not change"
    return text, matters


def _bound(value: Any) -> str:
    return format_bound(float(value))


def _row(kind: str, workload: str, text: str) -> dict[str, str]:
    return {"kind": kind, "workload": workload, "text": text}


def _swept(runs: pd.DataFrame, cells: pd.DataFrame, settings: CampaignSettings,
           declared: dict[str, str], summary: pd.DataFrame, blocked: bool,
           pairs: list[Pair]) -> tuple[pd.DataFrame, pd.DataFrame]:
    return analyse_sweep(runs, cells, settings, declared, summary, blocked, settings.margin,
                         pairs)


STEP = Step("effects", reads=("runs", "cells", "settings", "declared", "summary", "blocked",
                              "pairs"),
            makes=("effects", "best"), run=_swept, method=EFFECTS_METHOD,
            tables={"effects": "effects.csv", "best": "best.csv"},
            optional=frozenset({"effects", "best"}),
            stated=lambda done: not done["effects"].empty)
