"""The page of a tune (`fslab tune` writes tune.html): the answer, the screen's effects
(each level against its factor's reference, kept factors in colour), the race as ratios
to the best after every look (each configuration a row, the set marked), and each
option's contribution on fresh data with its interval. Renders tables the tune made
(tune/tables.py: page_tables); computes nothing.

Labels are the options themselves ("noatime", "-J size=16"), never cut: each chart's left
margin is sized to its longest label, which Plotly would otherwise clip at the SVG's edge
(Chromium counts clipped labels: tests/tune/test_tune_page_real.py)."""

from __future__ import annotations

import pandas as pd

from fslab.report.page import Chart, Page, esc

CHAR_PX = 7.5  # the width of one character of a 12 px label, with room to spare
ROW_PX = 26
SET, DROPPED, WINNER = "#1f77b4", "#bbb", "#2ca02c"
VERDICT_COLOURS = {"change": WINNER, "keep": "#999", "bundle": SET, "best": "#9467bd"}


def render(name: str, tables: dict[str, pd.DataFrame], lines: list[str]) -> str:
    page = Page(f"fslab tune: {name}")
    page.add(f"<h1>fslab tune: {esc(name)}</h1><pre style='white-space:pre-wrap'>"
             + "\n".join(esc(line) for line in lines)
             + "</pre>")
    effects, race, options = tables["effects"], tables["race"], tables["options"]
    for question in dict.fromkeys([*effects.get("question", []), *race.get("question", []),
                                   *options.get("question", [])]):
        page.add(f"<h2>{esc(question)}</h2>")
        mine = options[options["question"] == question] if not options.empty else options
        if not mine.empty:
            page.chart(options_chart(mine))
        rounds = race[race["question"] == question] if not race.empty else race
        if not rounds.empty:
            page.chart(race_chart(rounds))
        screened = effects[effects["question"] == question] if not effects.empty else effects
        if not screened.empty:
            page.chart(screen_chart(screened))
    return page.render()


def options_chart(rows: pd.DataFrame) -> Chart:
    """Each changed option's share (the configuration with it against without it), the
    whole configuration as it stands against the reference and against the race's best,
    with the confirmation's simultaneous intervals."""
    labels = [str(label) for label in rows["option"]]
    colours = [VERDICT_COLOURS.get(str(v), SET) for v in rows["verdict"]]
    return _intervals(labels, rows, colours, "Confirmation on fresh data: the whole "
                      "configuration against the reference (blue) and the race's best "
                      "(purple), each option's share (with it against without it; green: "
                      "change); 95 % together")


def screen_chart(rows: pd.DataFrame) -> Chart:
    labels = [f"{f}: {level}" for f, level in zip(rows["factor"], rows["level"], strict=True)]
    colours = [SET if kept else "#999" for kept in rows["kept"]]
    return _intervals(labels, rows, colours, "Screen: each level against its factor's "
                      "reference (simultaneous 95 %; grey: fixed at the reference)")


def race_chart(rows: pd.DataFrame) -> Chart:
    """The race at its last look of each configuration: the ratio to the best with the
    look's bound, dropped ones grey, the set blue, the winner green."""
    last = rows.sort_values("round").groupby("configuration", sort=False).tail(1)
    last = last.sort_values("ratio", ascending=True, na_position="first")
    colours = [WINNER if w else (SET if s else DROPPED)
               for w, s in zip(last["winner"], last["in_set"], strict=True)]
    labels = [f"{c} (round {r})" for c, r in zip(last["configuration"], last["round"],
                                                  strict=True)]
    return _intervals(labels, last, colours, "Race: each configuration against the race's "
                      "best (selected: the others read low beside it) at its last look "
                      "(blue: the set; green: the winner; grey: dropped)")


def _intervals(labels: list[str], rows: pd.DataFrame, colours: list[str], title: str) -> Chart:
    ratio = rows["ratio"].astype(float)
    high = (rows["high"].astype(float) - ratio).fillna(0.0).clip(lower=0).tolist()
    low = (ratio - rows["low"].astype(float)).fillna(0.0).clip(lower=0).tolist()
    left = int(max((len(label) for label in labels), default=10) * CHAR_PX) + 20
    return {"data": [{"type": "scatter", "mode": "markers", "x": ratio.tolist(),
                      "y": [esc(label) for label in labels],
                      "marker": {"size": 11, "color": colours},
                      "error_x": {"type": "data", "symmetric": False, "array": high,
                                  "arrayminus": low}}],
            "layout": {"title": {"text": title, "font": {"size": 13}},
                       "height": 140 + ROW_PX * len(labels), "showlegend": False,
                       "margin": {"l": left, "r": 30, "t": 60},
                       "xaxis": {"type": "log", "title": {"text": "ratio"}},
                       "yaxis": {"automargin": True},
                       "shapes": [_one()]}}


def _one() -> Chart:
    return {"type": "line", "x0": 1, "x1": 1, "yref": "paper", "y0": 0, "y1": 1,
            "line": {"dash": "dot", "color": "#777"}}
