"""Verdicts in words: per workload, a headline table (the winner of each metric or "no
detectable difference", its ratio to the runner-up with the interval, one word of
certainty), then every pair. Every ranking honours the metric's direction; a verdict and
its interval come from one model (analysis.model), so they cannot disagree."""

from __future__ import annotations

import math

import pandas as pd

from fslab.analysis.model import certainty
from fslab.metrics import HEADLINE_METRICS, HIGHER, title

HEADLINE_COLUMNS = ["workload", "op", "metric", "better", "winner", "runner_up", "ratio",
                    "ratio_ci_low", "ratio_ci_high", "p_adj", "certainty", "mde_ratio",
                    "verdict"]


def headline(summary: pd.DataFrame, tests: pd.DataFrame,
             pairwise: pd.DataFrame) -> pd.DataFrame:
    """One row per workload × op × headline metric compared: who wins, by how much."""
    rows = []
    with_iops = {(t.workload, t.op) for t in tests.itertuples() if t.metric == "iops"}
    for test in tests.itertuples():
        if test.metric not in HEADLINE_METRICS:
            continue
        if test.metric == "bw_bytes" and (test.workload, test.op) in with_iops:
            continue  # the same ratio as IOPS (every pair keeps it in pairwise.csv)
        cells = summary[(summary.workload == test.workload) & (summary.op == test.op)
                        & (summary.metric == test.metric)]
        better = str(cells["better"].iloc[0]) if not cells.empty else HIGHER
        base = {"workload": test.workload, "op": test.op, "metric": test.metric,
                "better": better}
        cached = _cache_bound(summary, str(test.workload))
        if test.test == "none":
            rows.append({**base, "verdict": f"not compared: {test.reason}"})
            continue
        ranked = cells.dropna(subset=["mean"]).sort_values("mean", ascending=better != HIGHER)
        if len(ranked) < 2:
            continue
        winner, runner_up = str(ranked["target"].iloc[0]), str(ranked["target"].iloc[1])
        pair = _pair(pairwise, test, winner, runner_up)
        if pair is None:
            continue
        ratio, low, high, p_adj, mde = pair
        row = {**base, "winner": winner, "runner_up": runner_up, "ratio": ratio,
               "ratio_ci_low": low, "ratio_ci_high": high, "p_adj": p_adj,
               "certainty": certainty(p_adj), "mde_ratio": mde}
        if winner in cached or runner_up in cached:
            why = cached.get(winner) or cached[runner_up]
            row |= {"winner": "", "certainty": "cache-bound",
                    "verdict": f"cache-bound, not ranked ({why})"}
        elif p_adj < 0.05:
            row["verdict"] = (f"{winner}: {ratio:.3g}× {runner_up} (95 % CI {low:.3g}–"
                              f"{high:.3g}×, {certainty(p_adj)})")
        else:
            row |= {"winner": "", "verdict": f"no detectable difference (could have shown "
                                             f"{_mde_text(mde)}; {winner} ahead by "
                                             f"{ratio:.3g}×, 95 % CI {low:.3g}–{high:.3g}×)"}
        rows.append(row)
    return pd.DataFrame(rows, columns=HEADLINE_COLUMNS)


def verdicts(summary: pd.DataFrame, tests: pd.DataFrame, pairwise: pd.DataFrame) -> list[str]:
    """verdicts.txt: per workload its headline table, then every pair, grouped."""
    table = headline(summary, tests, pairwise)
    if not table.empty:  # ops as they ran, metrics in the tables' order
        rank = {metric: index for index, metric in enumerate(HEADLINE_METRICS)}
        table = table.assign(_op=table["op"].map(lambda op: (op == "total", op)),
                             _metric=table["metric"].map(rank)).sort_values(
            ["workload", "_op", "_metric"], kind="stable")
    lines: list[str] = []
    workloads = sorted(set(tests["workload"].astype(str))) if not tests.empty else []
    for workload in workloads:
        lines.append(f"== {workload} ==")
        for row in table[table.workload == workload].itertuples():
            direction = "" if row.better == HIGHER else " (lower is better)"
            lines.append(f"  {_what(row.op, row.metric, workload)}{direction}: {row.verdict}")
        noise = tests[tests.workload == workload]
        lines += [f"  {line}" for line in _noise_lines(noise)]
        lines.append("  pairs:")
        cached = _cache_bound(summary, workload)
        for pair in pairwise[pairwise.workload == workload].itertuples():
            lines.append(f"    {_pair_line(pair, summary, cached)}")
    return lines


def _noise_lines(tests: pd.DataFrame) -> list[str]:
    """'With 3 iterations and 20 % noise, differences below 1.6× cannot be told apart'."""
    out = []
    for row in tests.itertuples():
        if row.test == "none" or row.mde_ratio != row.mde_ratio:
            continue
        if row.metric not in ("iops", "ops_per_s", "seconds", "bw_bytes") or (
                row.metric == "bw_bytes" and "iops" in set(tests["metric"])):
            continue
        out.append(f"{_what(row.op, row.metric, row.workload)}: with {row.n} iterations "
                   f"and {100 * row.noise:.0f} % noise, differences below "
                   f"{_mde_text(row.mde_ratio)} cannot be told apart ({row.test})")
    return out


def _pair_line(pair: object, summary: pd.DataFrame, cached: dict[str, str]) -> str:
    what = _what(pair.op, pair.metric, pair.workload)  # type: ignore[attr-defined]
    a, b = pair.a, pair.b  # type: ignore[attr-defined]
    ratio, low, high = pair.ratio, pair.ratio_ci_low, pair.ratio_ci_high  # type: ignore
    p_text = f"p_adj {_p(pair.p_adj)}"  # type: ignore[attr-defined]
    if a in cached or b in cached:
        return f"{what}: {a} vs {b}: cache-bound, not ranked"
    better = _better(summary, pair)
    if not pair.significant:  # type: ignore[attr-defined]
        return (f"{what}: {a} vs {b}: no detectable difference ({ratio:.3g}×, 95 % CI "
                f"{low:.3g}–{high:.3g}×, {p_text}; could have shown "
                f"{_mde_text(pair.mde_ratio)})")  # type: ignore[attr-defined]
    a_wins = (ratio > 1) == (better == HIGHER)
    if not a_wins:
        a, b, ratio, low, high = b, a, 1 / ratio, 1 / high, 1 / low
    direction = "" if better == HIGHER else ", lower is better"
    return (f"{what}: {a} {ratio:.3g}× {b}{direction} (95 % CI {low:.3g}–{high:.3g}×, "
            f"{p_text}, {certainty(pair.p_adj)}, "  # type: ignore[attr-defined]
            f"{pair.magnitude} effect)")  # type: ignore[attr-defined]


def _better(summary: pd.DataFrame, pair: object) -> str:
    cells = summary[summary.metric == pair.metric]  # type: ignore[attr-defined]
    return str(cells["better"].iloc[0]) if not cells.empty else HIGHER


def _pair(pairwise: pd.DataFrame, test: object, winner: str, runner_up: str
          ) -> tuple[float, float, float, float, float] | None:
    """(ratio winner/runner-up, CI low, CI high, p_adj, MDE) from the pairwise table."""
    rows = pairwise[(pairwise.workload == test.workload) & (pairwise.op == test.op)  # type: ignore
                    & (pairwise.metric == test.metric)]  # type: ignore[attr-defined]
    for row in rows.itertuples():
        if (row.a, row.b) == (winner, runner_up):
            return row.ratio, row.ratio_ci_low, row.ratio_ci_high, row.p_adj, row.mde_ratio
        if (row.a, row.b) == (runner_up, winner):
            return (1 / row.ratio, 1 / row.ratio_ci_high, 1 / row.ratio_ci_low, row.p_adj,
                    row.mde_ratio)
    return None


def _cache_bound(summary: pd.DataFrame, workload: str) -> dict[str, str]:
    """Targets whose cells of this workload are cache-bound, with the reason."""
    if "cache_bound" not in summary:
        return {}
    cells = summary[(summary.workload == workload) & summary["cache_bound"].astype(bool)]
    return dict(zip(cells["target"], cells["cache_bound_reason"], strict=True))


def _what(op: str, metric: str, workload: str) -> str:
    per_run = metric.startswith(("cpu_", "host_cpu_"))  # CPU belongs to the whole run
    op_text = "" if per_run or op in str(workload) else f"{op} "
    return f"{op_text}{title(metric, long=True)}"


def _mde_text(mde: float) -> str:
    return "n/a" if mde != mde or math.isinf(mde) else f"{mde:.3g}×"


def _p(value: float) -> str:
    if value != value:
        return "= n/a"
    return "< 0.001" if value < 0.001 else f"= {value:.3g}"
