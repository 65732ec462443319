"""`fslab export`: a results directory as one tidy table for a spreadsheet or another tool
(CSV, or JSON records), rendered from tables the api hands over; nothing is analysed here.

Two tables, each long ("tidy") so that a pivot or a group-by needs nothing else:
- metrics: one row per run × op × metric (× section, for a run observed in sections): the
  run's observation, its slices or files averaged into it as the analysis does, the value
  in SI base units (unit: ns, bytes/s, 1/s, bytes, % …) and which way is better;
- verdicts: one row per compared pair of targets (pairwise.csv): the ratio a/b of geometric
  means with its 95 % interval, the adjusted p-value, the decision and what it would take.
"""

from __future__ import annotations

from typing import Any

TABLES = ("metrics", "verdicts")
FORMATS = ("csv", "json")
METRIC_COLUMNS = ("campaign", "run_id", "iteration", "target", "fs", "fs_impl", "workload",
                  "op", "metric", "value", "unit", "better", "section")
VERDICT_COLUMNS = ("campaign", "workload", "op", "metric", "primary", "a", "b", "better",
                   "ratio", "ratio_ci_low", "ratio_ci_high", "p_adj", "significant",
                   "decision", "margin", "n_a", "n_b", "mde_ratio", "needs_iterations",
                   "test")


def metrics_table(observed: Any, campaign: str) -> Any:
    """The metrics table from the analysis's per-run observations (RUN_KEYS, sample,
    value): `section` is the observation's number within its run (0 for all but runs
    observed in sections)."""
    table = observed.rename(columns={"sample": "section"}).assign(campaign=campaign)
    table = table[list(METRIC_COLUMNS)]
    return table.sort_values(["iteration", "target", "workload", "op", "metric", "section"],
                             kind="stable").reset_index(drop=True)


def verdicts_table(pairwise: Any, campaign: str) -> Any:
    """The verdicts table from pairwise.csv: every compared pair, primary questions first
    (ratio = a / b, so above 1 means a measured more; `better` says which way wins)."""
    table = pairwise.assign(campaign=campaign)
    for column in VERDICT_COLUMNS:
        if column not in table:
            table[column] = ""
    table = table[list(VERDICT_COLUMNS)]
    return table.sort_values(["primary", "workload", "op", "metric"],
                             ascending=[False, True, True, True], kind="stable"
                             ).reset_index(drop=True)


def rendered(table: Any, form: str) -> str:
    """The table as CSV (a header, then one row per line) or JSON (a list of records,
    one object per row; a missing number is null)."""
    if form == "json":
        return str(table.to_json(orient="records", indent=1, double_precision=15)) + "\n"
    return str(table.to_csv(index=False))
