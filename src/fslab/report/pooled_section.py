"""The pooled answers in a report (`fslab pool`, `fslab run --again`): what the answers
over every sitting rest on, then per workload each primary question's pooled answer in
words with its forest plot — each sitting's own interval, the pooled estimate with its
interval, and where the next sitting should fall. A results directory with sittings
opens on this (report/html.py), its first sitting's own answer after it."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd

from fslab.analysis.sittings.question import PooledQuestion
from fslab.analysis.sittings.table import PAIR
from fslab.analysis.sittings.words import (
    UNIT_WORDS,
    decided_line,
    pooled_sentence,
    spread_words,
)
from fslab.core.metrics import title
from fslab.report.page import Chart, Page, esc

ON_AVERAGE, NEXT = "pooled: on average", "next {unit}"
AS_ONE = "as one campaign (τ ignored)"  # the fixed-effect pool: what one sitting would claim


def forest_chart(question: PooledQuestion, units: pd.DataFrame) -> Chart:
    """A forest plot (Plotly spec) of one pooled question: one row per unit with its
    interval, the pooled mean's, the same runs read as one campaign's (the fixed-effect
    pool: how much narrower an interval that ignores τ would claim to be), the next
    unit's; ratios a/b on a log axis."""
    unit = UNIT_WORDS.get(question.by, (question.by, ""))[0]
    labels = [f"{unit} {i + 1} ({str(row.unit)[:8]})" for i, row in
              enumerate(units.itertuples())]
    ratios = units["ratio"].astype(float).tolist()
    lows = units["ratio_ci_low"].astype(float).tolist()
    highs = units["ratio_ci_high"].astype(float).tolist()
    traces: list[Chart] = [_points(f"each {unit}", labels, ratios, lows, highs,
                                            "#1f77b4", "circle")]
    ratio = question.ratio
    traces.append(_points(ON_AVERAGE, [ON_AVERAGE], [ratio], [question.ratio_ci_low],
                          [question.ratio_ci_high], "#d62728", "diamond"))
    traces.append(_points(AS_ONE, [AS_ONE], [ratio], [question.fixed_ci_low],
                          [question.fixed_ci_high], "#7f7f7f", "square-open"))
    next_low, next_high = question.next_low, question.next_high
    if math.isfinite(next_low):
        label = NEXT.format(unit=unit)
        traces.append(_points(label, [label], [ratio], [next_low], [next_high], "#ff7f0e",
                              "diamond-open"))
    order = list(reversed(labels + [ON_AVERAGE, AS_ONE] + ([NEXT.format(unit=unit)]
                                                           if math.isfinite(next_low)
                                                           else [])))
    what = title(question.metric, long=True)
    level = 100 * (1 - (question.level if question.level == question.level
                        else question.alpha))
    return {"data": traces, "layout": {
        "title": {"text": f"{question.workload}: {what}, {question.a} / {question.b} over "
                          f"{question.k} {unit}s ({level:.4g} % intervals)"},
        "xaxis": {"type": "log", "title": {"text": f"{question.a} / {question.b}"}},
        "yaxis": {"categoryorder": "array", "categoryarray": order, "automargin": True},
        "shapes": [{"type": "line", "x0": 1, "x1": 1, "xref": "x", "yref": "paper",
                    "y0": 0, "y1": 1, "line": {"dash": "dot", "color": "#888"}}],
        "margin": {"t": 50, "l": 160, "r": 20, "b": 50},
        "height": 140 + 28 * len(order), "legend": {"orientation": "h"}}}


def _points(name: str, labels: list[str], ratios: list[float], lows: list[float],
            highs: list[float], colour: str, symbol: str) -> Chart:
    return {"type": "scatter", "mode": "markers", "name": name, "y": labels, "x": ratios,
            "marker": {"color": colour, "symbol": symbol, "size": 10},
            "error_x": {"type": "data", "symmetric": False,
                        "array": [h - r for h, r in zip(highs, ratios, strict=True)],
                        "arrayminus": [r - lo for r, lo in zip(ratios, lows, strict=True)]},
            "hovertemplate": "%{y}: %{x:.4g}×<extra></extra>"}


def pooled_section(page: Page, pooled: Sequence[PooledQuestion], forest: pd.DataFrame,
                   lines: list[str]) -> None:
    """The section: what the pool rests on (the pooled verdicts' opening lines), then
    per workload its questions' answers, each with its forest plot, then what was
    decided and the spread each rests on."""
    primary = [q for q in pooled if q.primary]
    if not primary:
        page.add("<h2>Next time: the sittings pooled</h2><p>" + esc(" ".join(lines)) + "</p>")
        return
    unit = UNIT_WORDS.get(primary[0].by, (primary[0].by, ""))[0]
    k = max(q.k for q in primary)
    page.add(f"<h2>Over {k} {unit}s: the answer, and what holds next time</h2>")
    opening = lines[:next((i for i, line in enumerate(lines) if line.startswith("== ")),
                          len(lines))]
    page.add("".join(f"<p>{esc(line)}</p>" for line in opening))
    for workload in dict.fromkeys(q.workload for q in primary):
        page.add(f"<h3>{esc(workload)}</h3>")
        for question in (q for q in primary if q.workload == workload):
            page.add(f"<p class='verdict'>{esc(pooled_sentence(question, unit))}</p>")
            mask = pd.Series(True, index=forest.index)
            for column in PAIR:
                mask &= forest[column].astype(str) == str(getattr(question, column))
            page.chart(forest_chart(question, forest[mask]))
    page.add(f"<p><b>{esc(decided_line(primary))}</b></p>")
    spread = "; ".join(f"{q.workload} {q.op} {title(q.metric)} {q.a}/{q.b}: "
                       f"{spread_words(q, unit)}" for q in primary)
    page.add("<p class='muted'>" + esc(f"Between {unit}s, per question: {spread}.") + "</p>")


def pooled_report(name: str, pooled: Sequence[PooledQuestion], forest: pd.DataFrame,
                  lines: list[str]) -> str:
    """A whole report of a pooled directory (`fslab pool --out D`, then `fslab report D`)."""
    page = Page(f"fslab report: {name} (pooled)")
    page.add(f"<h1>fslab report: {esc(name)}, pooled</h1>")
    pooled_section(page, pooled, forest, lines)
    return page.render()
