"""Verdicts in words: one ranking per workload × primary metric (analysis.pairs.ranking), the
pairs behind it as "A 2.1× faster than B", how many questions were asked and how they
were adjusted, and what the data could not have shown. Secondary metrics are estimates,
labelled exploratory, in pairwise.csv. Every verdict and its interval come from one
model (analysis.pairs.model), so they cannot disagree; the text fits on one screen for the
default campaign (every pair stays in pairwise.csv and behind a fold in the report).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pandas as pd

from fslab.analysis.factors.levels import job_levels, keys
from fslab.analysis.factors.sweeps import sweep_sentences
from fslab.analysis.pairs.aged import aged_verdicts
from fslab.analysis.pairs.decisions import resolve_command
from fslab.analysis.pairs.model import ALPHA
from fslab.analysis.pairs.ranking import evidence, size
from fslab.analysis.statistic import Computed
from fslab.analysis.step import Step
from fslab.core.cell_keys import level_label, levels_key
from fslab.core.metrics import HIGHER, title
from fslab.core.pair import EQUIVALENT, UNRESOLVED, Pair, views
from fslab.core.units import format_bound as bound
from fslab.core.units import format_duration, turned

POWER_MEANING = ("'could have found R×': a difference of R× would be found 4 times in 5; "
                 "smaller ones may be missed. 'x = y': the interval lies within the margin "
                 "(the same); 'x ? y': not resolved either way yet.")
# Direction words for "A 2.1× … than B", by metric: a ratio is printed ≥ 1 with them.
ADVANTAGE_WORDS = {"iops": "faster", "bw_bytes": "faster", "ops_per_s": "faster",
                   "ops_per_s_before_sync": "faster before the sync",
                   "seconds": "quicker", "sync_seconds": "quicker syncs",
                   "layout_score": "better laid out"}


def advantage_words(metric: str, better: str) -> str:
    """'faster', 'lower latency', 'less CPU' …: what a ratio ≥ 1 of this metric means."""
    if metric in ADVANTAGE_WORDS:
        return ADVANTAGE_WORDS[metric]
    if "cpu" in metric:
        return "less CPU"
    if metric.endswith("_ns"):
        return "lower latency"
    return "better" if better == HIGHER else "lower"


# stats/verdicts.csv: one row per sentence, its kind saying where it belongs (a reader
# of the table never parses text). verdicts.txt is the same rows as text, indented.
VERDICT_COLUMNS = ["kind", "workload", "text"]
INDENT = {"workload": "", "best": "", "factor": "  ", "question": "  ", "pair": "    ",
          "caveat": "    ", "repeat": "    ", "aging": "  ", "aging_label": "  ",
          "study": "    ", "study_claim": "    ", "study_way": "    "}


def verdict_rows(headline: pd.DataFrame, ranking: pd.DataFrame, tests: pd.DataFrame,
                 pairwise: Sequence[Pair], effects: pd.DataFrame | None = None,
                 best: pd.DataFrame | None = None, cells: pd.DataFrame | None = None,
                 scopes: dict[str, str] | None = None,
                 names: dict[str, str] | None = None) -> list[dict[str, str]]:
    """The family sentence, then per workload its ranking(s) and pairs, then the
    exploratory count: rows of VERDICT_COLUMNS. A swept job opens with its best
    configuration and its factors (analysis.factors.sweeps), then each variant's ranking
    ('at iodepth=16:'), its job and levels read off `cells` (factors.levels.cell_levels)
    and `scopes` (factors.levels.factor_scopes)."""
    sweeps = sweep_sentences(effects if effects is not None else pd.DataFrame(),
                             best if best is not None else pd.DataFrame())
    if headline.empty and not sweeps:
        return [_row("family", "", "No primary comparisons: fewer than 2 targets with 2 or "
                                   "more iterations.")]
    rows = _family_rows(headline) + _look_rows(pairwise) + _sweep_family_rows(effects, best)
    workloads = list(dict.fromkeys(headline["workload"].astype(str)))
    variants = _variants(cells, scopes or {})
    job_of = {w: variants[w][0] if w in variants else w for w in workloads}
    first = {job_of[w]: i for i, w in reversed(list(enumerate(workloads)))}
    workloads.sort(key=lambda w: (first[job_of[w]], levels_key(variants.get(w, ("", ()))[1])))
    jobs = list(dict.fromkeys([*(job_of[w] if job_of[w] in sweeps else w for w in workloads),
                               *sweeps]))
    for job in jobs:
        rows.append(_row("workload", job, job))
        rows += sweeps.get(job, [])
        for workload in workloads:
            if (job_of[workload] if job in sweeps else workload) != job:
                continue
            levels = variants[workload][1] if workload in variants else ()
            prefix = (f"at {' '.join(level_label(f, v) for f, v in levels)}: "
                      if job in sweeps and levels else "")
            for head in headline[headline["workload"].astype(str) == workload].itertuples():
                rows += _question_rows(head, ranking, pairwise, prefix, names or {})
    exploratory = [p for p in pairwise if not p.primary]
    if exploratory:
        excludes = sum(p.significant for p in exploratory)
        rows.append(_row("exploratory", "", f"Exploratory (estimates, not verdicts): "
                         f"{len(exploratory)} comparisons of other metrics, each with its own "
                         f"95 % interval ({excludes} exclude 1, as about "
                         f"{0.05 * len(exploratory):.0f} would by chance alone if nothing "
                         "differed); stats/pairwise.csv."))
    return rows


def _variants(cells: pd.DataFrame | None, scopes: dict[str, str]
              ) -> dict[str, tuple[str, tuple[tuple[str, str], ...]]]:
    """{workload: (its job, its job's levels)} from the cells' fields."""
    if cells is None or cells.empty:
        return {}

    return {str(workload): (key.job, job_levels(key, scopes))
            for workload, key in zip(cells["workload"], keys(cells), strict=True)}


def _family_rows(headline: pd.DataFrame) -> list[dict[str, str]]:
    if headline.empty:
        return []
    family = int(headline["family"].dropna().max()) if headline["family"].notna().any() else 1
    level = 100 * (1 - ALPHA / family)
    questions = len(headline)
    return [_row("family", "", f"Verdicts answer {questions} question"
                               f"{'s' * (questions != 1)} (the primary metric of each "
                               f"workload): {family} pair{'s' * (family != 1)} in all, "
                               f"Bonferroni-adjusted together — each interval is a "
                               f"{_level(level)} % interval, so all of them hold at once "
                               "with 95 % confidence."),
            _row("meaning", "", POWER_MEANING)]


def _look_rows(pairwise: Sequence[Pair]) -> list[dict[str, str]]:
    """How a campaign that resolved (--resolve) decided its pairs, look by look."""
    primary = [p for p in pairwise if p.primary and p.look is not None]
    if not any(p.look is not None for p in pairwise):
        return []
    decided = [p.look for p in primary if p.look is not None and p.decision != UNRESOLVED]
    parts = [f"{decided.count(k)} at look {k}" for k in sorted(set(decided))]
    left = len(primary) - len(decided)
    return [_row("family", "", (
        "Looks (fslab run --resolve): more iterations were measured only where a question "
        "was unresolved, and each pair is decided at the first look that decides it, look "
        "k at α/2^k, so every look together keeps the 95 %: "
        + ", ".join(parts or ["none decided"]) + (f", {left} unresolved" if left else "")
        + "."))]


def _sweep_family_rows(effects: pd.DataFrame | None,
                       best: pd.DataFrame | None) -> list[dict[str, str]]:
    """How a sweep's effects and best configurations were adjusted, in one sentence."""
    if effects is None or effects.empty or "family" not in effects or \
            not effects["family"].notna().any():
        return []
    family = int(effects["family"].max())
    level = 100 * (1 - ALPHA / family)
    factors = effects[["workload", "factor"]].drop_duplicates()
    text = (f"Sweep: {family} effect{'s' * (family != 1)} of {len(factors)} factor"
            f"{'s' * (len(factors) != 1)} × job, each a ratio to its reference level with a "
            f"{_level(level)} % interval (Bonferroni over all of them; stats/effects.csv)")
    if best is not None and not best.empty:
        text += ("; each job's best configuration against every other, those whose interval "
                 "includes 1 within reach (stats/best.csv): a pair on the best's own variant "
                 "as its verdict below decides it, every other pair by the pairs' model, "
                 "Bonferroni together")
    return [_row("family", "", text + ".")]


def error_rows(runs: pd.DataFrame) -> list[dict[str, str]]:
    """One row per workload and target whose runs went on past failed I/Os
    (continue_on_error): its rates count only the I/Os that succeeded."""
    failed = runs[(runs["metric"] == "errors") & (runs["op"] == "total") & (runs["value"] > 0)]
    out = []
    for (workload, target), cell in failed.groupby(["workload", "target"], sort=False,
                                                    observed=True):
        out.append(_row("errors", str(workload), (
            f"{workload} on {target}: {cell['value'].mean():,.0f} failed I/Os per run on "
            f"average ({len(cell)} run{'s' * (len(cell) != 1)}; fio went on past them, "
            "continue_on_error) — its rates count only the I/Os that succeeded.")))
    return out


def as_text(verdicts: pd.DataFrame) -> list[str]:
    """verdicts.txt: each row as a line, workloads as '== name ==' headings, a question's
    ranking indented under it and its pairs and caveats under that."""
    lines = []
    for kind, text in zip(verdicts["kind"], verdicts["text"], strict=True):
        lines.append(f"== {text} ==" if kind == "workload" else INDENT.get(kind, "") + text)
    return lines


def _row(kind: str, workload: str, text: str) -> dict[str, str]:
    return {"kind": kind, "workload": workload, "text": text}


def _question_rows(head: object, ranking: pd.DataFrame, pairwise: Sequence[Pair],
                   prefix: str = "", names: dict[str, str] | None = None
                   ) -> list[dict[str, str]]:
    workload, op, metric = head.workload, head.op, head.metric  # type: ignore[attr-defined]
    better = head.better  # type: ignore[attr-defined]
    what = _what(str(op), str(metric), str(workload))
    ranking_text = head.ranking  # type: ignore[attr-defined]
    workload = str(workload)
    if not isinstance(ranking_text, str) or not ranking_text:
        return [_row("question", workload,
                     f"{prefix}{what}: {head.verdict}")]  # type: ignore[attr-defined]
    rows = ranking[(ranking.workload == workload) & (ranking.op == op)
                   & (ranking.metric == metric)]
    n = head.n  # type: ignore[attr-defined]
    observed = head.observed  # type: ignore[attr-defined]
    out = [_row("question", workload, f"{prefix}{what} ({n} {observed}): {ranking_text}")]
    best = str(rows["best"].iloc[0])
    word = advantage_words(str(metric), str(better))
    seen = views(p for p in pairwise if p.question == (workload, op, metric))
    for row in rows.iloc[1:].itertuples():
        pair = seen.get((best, str(row.target)))
        if pair is not None:
            shown = names or {}
            out.append(_row("pair", workload, pair_sentence(
                shown.get(best, best), shown.get(str(row.target), str(row.target)), pair,
                word)))
    left_out = head.left_out  # type: ignore[attr-defined]
    if isinstance(left_out, str) and left_out:
        out.append(_row("caveat", workload, left_out))
    if rows["n"].min() == 2:
        out.append(_row("caveat", workload, "only 2 iterations: each interval rests on 1 "
                        "degree of freedom — run more before acting on this"))
    return out


def pair_sentence(x: str, y: str, pair: Pair, word: str) -> str:
    """'x 2.1× faster than y (95 % CI 1.6–2.8×; strong evidence, large difference)' of
    `pair` seen from x."""
    if not pair.estimable:
        return f"{x} vs {y}: not estimable (every iteration gave the same value)"
    x, y, (ratio, _, _) = facing(x, y, pair)
    return answer(x, y, pair, word, "95 % CI",
                  f"; could have found {_mde(pair.mde_ratio)}{_needs(pair)}",
                  f"; {evidence(pair.p_adj)}, {size(ratio)}")


def facing(x: str, y: str, pair: Pair) -> tuple[str, str, tuple[float, float, float]]:
    """(x, y, (ratio, low, high)): the pair seen from x as its answer is said — in its
    metric's direction (above 1: better), from the side its estimate favours."""
    ratio, low, high = pair.advantage
    if ratio < 1:  # the pair, over the iterations both ran, leans the other way
        return y, x, turned(ratio, low, high)
    return x, y, (ratio, low, high)


def answer(x: str, y: str, pair: Pair, word: str, label: str, open_tail: str = "",
           decided_tail: str = "") -> str:
    """The rule's answer of `pair` (seen from x) in words, its interval named `label`:
    'x = y: the same within ±10 % (…)', 'x ? y: not resolved (…)' or 'x 2.1× faster than
    y (…)' — the one place an answer is put in words (the verdicts, the pooled
    sittings); each tail is added inside the brackets."""
    x, y, (ratio, low, high) = facing(x, y, pair)
    interval = f"{label} {bound(low)}–{bound(high)}×"
    if pair.decision == EQUIVALENT:
        return (f"{x} = {y}: the same within ±{pair.margin:.0%} ({x} {ratio:.3g}× {word}, "
                f"{interval})")
    if not pair.significant:
        return f"{x} ? {y}: not resolved ({x} {ratio:.3g}× {word}, {interval}{open_tail})"
    return f"{x} {ratio:.3g}× {word} than {y} ({interval}{decided_tail})"


def _needs(pair: Pair) -> str:
    """'; needs 23 iterations, about 4 min more: fslab run --resume …' (unresolved)."""
    needs = pair.needs_iterations
    if pair.decision != UNRESOLVED or needs != needs:
        return ""
    if math.isinf(needs):
        return "; more than 100 iterations would not resolve it at this spread"
    if pair.needs_seconds != pair.needs_seconds:  # not fslab's own campaign (an import)
        return f"; needs {needs:.0f} iterations"
    about = format_duration(pair.needs_seconds, rough=True)
    return f"; needs {needs:.0f} iterations, about {about} more: {resolve_command(needs)}"


def _level(level: float) -> str:
    return f"{level:.4g}" if level < 99.99 else f"{level:.6g}"


def _what(op: str, metric: str, workload: str) -> str:
    per_run = metric.startswith(("cpu_", "host_cpu_"))  # CPU belongs to the whole run
    op_text = "" if per_run or op in workload or op == "total" else f"{op} "
    return f"{op_text}{title(metric, long=True)}"


def _mde(mde: float) -> str:
    return "n/a" if mde != mde or math.isinf(mde) else f"{mde:.3g}×"


def decided_row(pairwise: Sequence[Pair], machine_s: float,
                names: dict[str, str] | None = None) -> list[dict[str, str]]:
    """The campaign's last line: how many primary questions it decided in how much machine
    time, and what each open one needs ('Decided 7 of 10 questions in 9 min 12 s of
    machine time; 3 open: ext4 ? xfs on randread needs 12 iterations, about 77 s; …')."""
    primary = [p for p in pairwise if p.primary and p.decision]
    if not primary:
        return []
    open_pairs = [p for p in primary if p.decision == UNRESOLVED]
    spent = f" in {format_duration(machine_s)} of machine time" if machine_s > 0 else ""
    text = f"Decided {len(primary) - len(open_pairs)} of {len(primary)} questions{spent}"
    if not open_pairs:
        return [_row("decided", "", text + ".")]
    needs = []
    for pair in open_pairs:
        wanted = pair.needs_iterations
        what = ("more than 100 iterations would not do" if math.isinf(wanted) else
                f"needs {wanted:.0f} iterations" + (
                    f", about {format_duration(pair.needs_seconds, rough=True)}"
                    if pair.needs_seconds == pair.needs_seconds else "")
                if math.isfinite(wanted) else "cannot be told")
        a, b = (names or {}).get(pair.a, pair.a), (names or {}).get(pair.b, pair.b)
        needs.append(f"{a} ? {b} on {pair.workload} {what}")
    return [_row("decided", "", f"{text}; {len(open_pairs)} open: " + "; ".join(needs))]


def _with_repeats(rows: list[dict[str, str]], repeats: list[dict[str, str]]
                  ) -> list[dict[str, str]]:
    """The rows with each workload's repeat rows (analysis/sittings/on_repeat.py) after
    its own; those of no workload at the end."""
    said: dict[str, list[dict[str, str]]] = {}
    for row in repeats:
        said.setdefault(row["workload"], []).append(row)
    trailing = said.pop("", [])
    out: list[dict[str, str]] = []
    for index, row in enumerate(rows):
        out.append(row)
        workload = row.get("workload", "")
        following = rows[index + 1]["workload"] if index + 1 < len(rows) else None
        if workload in said and following != workload:
            out += said.pop(workload)
    return out + [line for lines in said.values() for line in lines] + trailing


def verdicts(machine_notes: list[str], runs: pd.DataFrame, headline: pd.DataFrame,
             ranking: pd.DataFrame, tests: pd.DataFrame, pairs: list[Pair],
             effects: pd.DataFrame, best: pd.DataFrame, cells: pd.DataFrame,
             scopes: dict[str, str], names: dict[str, str], aged: pd.DataFrame,
             drift_note: str | None, statistics: Computed, records: list[Any],
             repeat_rows: list[dict[str, str]], aging_rows: list[dict[str, str]],
             study_rows: list[dict[str, str]], study_method_rows: list[dict[str, str]]
             ) -> pd.DataFrame:
    """stats/verdicts.csv: whether the ranking survives aging (an `age` factor's question,
    first: analysis/factors/aging_ranking.py), what the machine did (busy, unsteady),
    failed I/Os, the questions' answers (each workload's followed by whether they hold on a
    repeat, the study's own interval and the study's own tests: analysis/cells/
    study_intervals.py, analysis/pairs/study_methods.py), aged against fresh, the drift,
    statistics that failed, and the campaign's last line (decided_row)."""
    rows = (aging_rows + [_row("machine", "", note) for note in machine_notes]
            + error_rows(runs)
            + _with_repeats(verdict_rows(headline, ranking, tests, pairs, effects, best, cells,
                                         scopes, names),
                             repeat_rows + study_rows + study_method_rows)
            + aged_verdicts(aged) + ([_row("drift", "", drift_note)] if drift_note else [])
            + [_row("statistic", "", line) for line in statistics.failures]
            + decided_row(pairs, sum(float(r.machine_s) for r in records), names))
    return pd.DataFrame(rows, columns=VERDICT_COLUMNS)


STEP = Step("verdicts", reads=("machine_notes", "runs", "headline", "ranking", "tests", "pairs",
                               "effects", "best", "cells", "scopes", "names", "aged",
                               "drift_note", "statistics", "records", "repeat_rows",
                               "aging_rows", "study_rows", "study_method_rows"),
            makes=("verdicts",), run=verdicts, tables={"verdicts": "verdicts.csv"})
