"""The page of a tune (`fslab tune` writes tune.html): the answer, the screen's effects
(each level against the reference, kept factors in colour), the race (every
configuration's interval after each round, the dropped ones greyed from the round they
were dropped) and the winner against the reference on fresh data. Renders tables the
tune made (tune/answer.py: page_tables); computes nothing."""

from __future__ import annotations

from html import escape
from typing import Any

import pandas as pd

from fslab.report.page import Page, esc

Chart = dict[str, Any]


def render(name: str, tables: dict[str, pd.DataFrame], lines: list[str]) -> str:
    page = Page(f"fslab tune: {name}")
    page.add(f"<h1>fslab tune: {esc(name)}</h1>" + "".join(
        f"<p class='verdict'>{esc(line)}</p>" for line in lines))
    effects, race, confirm = tables["effects"], tables["race"], tables["confirm"]
    for question in dict.fromkeys([*effects.get("question", []), *race.get("question", []),
                                   *confirm.get("question", [])]):
        page.add(f"<h2>{esc(question)}</h2>")
        mine = effects[effects["question"] == question] if not effects.empty else effects
        if not mine.empty:
            page.chart(screen_chart(mine))
        rounds = race[race["question"] == question] if not race.empty else race
        if not rounds.empty:
            page.chart(race_chart(rounds))
        done = confirm[confirm["question"] == question] if not confirm.empty else confirm
        if not done.empty:
            page.chart(confirm_chart(done.iloc[0]))
    return page.render()


def screen_chart(rows: pd.DataFrame) -> Chart:
    labels = [f"{f}: {level} (vs {ref})" for f, level, ref in
              zip(rows["factor"], rows["level"], rows["reference"], strict=True)]
    colours = ["#1f77b4" if kept else "#999" for kept in rows["kept"]]
    return {"data": [{"type": "scatter", "mode": "markers", "x": rows["ratio"].tolist(),
                      "y": labels, "marker": {"size": 11, "color": colours},
                      "error_x": {"type": "data", "symmetric": False,
                                  "array": (rows["high"] - rows["ratio"]).tolist(),
                                  "arrayminus": (rows["ratio"] - rows["low"]).tolist()}}],
            "layout": {"title": {"text": "Screen: each level against the reference "
                                         "(simultaneous 95 % intervals; grey: fixed at "
                                         "the reference)"},
                       "height": 160 + 40 * len(rows), "showlegend": False,
                       "xaxis": {"type": "log", "title": {"text": "ratio"}},
                       "shapes": [_one()]}}


def race_chart(rows: pd.DataFrame) -> Chart:
    traces = []
    for configuration, mine in rows.groupby("configuration", sort=False):
        dropped = mine["dropped_at"].dropna()
        winner = bool(mine["winner"].any())
        colour = "#2ca02c" if winner else ("#bbb" if len(dropped) else "#1f77b4")
        traces.append({"type": "scatter", "mode": "lines+markers",
                       "name": escape(str(configuration)) + (" (winner)" if winner else ""),
                       "x": mine["round"].tolist(), "y": mine["geomean"].tolist(),
                       "line": {"color": colour, "dash": "dot" if len(dropped) else "solid"},
                       "error_y": {"type": "data", "symmetric": False,
                                   "array": (mine["high"] - mine["geomean"]).tolist(),
                                   "arrayminus": (mine["geomean"] - mine["low"]).tolist(),
                                   "color": colour}})
    return {"data": traces, "layout": {
        "title": {"text": "Race: each configuration after every round (geometric mean, "
                          "95 % interval; grey dotted: dropped)"},
        "height": 460, "xaxis": {"title": {"text": "round"}, "dtick": 1},
        "yaxis": {"title": {"text": "objective"}},
        "legend": {"orientation": "h", "y": -0.25}}}


def confirm_chart(row: pd.Series) -> Chart:
    return {"data": [{"type": "scatter", "mode": "markers", "x": [row["ratio"]],
                      "y": [escape(str(row["challenger"]))], "marker": {"size": 13},
                      "error_x": {"type": "data", "symmetric": False,
                                  "array": [row["high"] - row["ratio"]],
                                  "arrayminus": [row["ratio"] - row["low"]]}}],
            "layout": {"title": {"text": f"Confirmation on fresh data: "
                                         f"{escape(str(row['decision']))} against the "
                                         f"reference (95 % interval)"},
                       "height": 220, "xaxis": {"type": "log", "title": {"text": "ratio"}},
                       "shapes": [_one()]}}


def _one() -> dict[str, Any]:
    return {"type": "line", "x0": 1, "x1": 1, "yref": "paper", "y0": 0, "y1": 1,
            "line": {"dash": "dot", "color": "#777"}}
