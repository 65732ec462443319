"""A results directory's rows for the catalogue: its per-run values (the analysis' own
runs table, so the history sees the observations the verdicts saw) and its cells."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from fslab.history.identity import Identity

if TYPE_CHECKING:
    import pandas as pd

    from fslab.results.store import ResultsDir

LEVEL = 0.95


def runs_table(directory: Path, identity: Identity) -> pd.DataFrame:
    """One row per run, metric and sample: the analysis' runs table (the directory is
    analysed first when its stats/ is missing or older than its metrics), with the
    witness' verdict, whether the metric is its workload's primary one, and signatures."""
    import pandas as pd

    from fslab.results.stats_files import load_analysis
    from fslab.results.store import ResultsDir

    results = ResultsDir.open(directory)
    analysis = load_analysis(results)
    if analysis is None:
        from fslab.analysis.pipeline import analyze_results

        analysis = analyze_results(results)
    runs = analysis.runs.copy()
    for column in runs.columns:
        if isinstance(runs[column].dtype, pd.CategoricalDtype):
            runs[column] = runs[column].astype(str)
    disturbed = analysis.disturbed
    flagged = (set(disturbed.loc[disturbed["disturbed"].astype(bool), "run_id"].astype(str))
               if not disturbed.empty and "disturbed" in disturbed else set())
    runs["disturbed"] = runs["run_id"].isin(flagged)
    runs["primary"] = _primary(runs, results)
    w_sig, t_sig = identity.workload_signatures, identity.target_signatures
    runs["workload_signature"] = [w_sig.get(w, w_sig.get("*", "")) for w in runs["workload"]]
    runs["target_signature"] = [t_sig.get(t, "") for t in runs["target"]]
    runs["campaign_id"] = identity.campaign_id
    if "sample" not in runs:
        runs["sample"] = 0
    return runs


def _primary(runs: pd.DataFrame, results: ResultsDir) -> list[bool]:
    """Whether each row is its workload's primary question (analysis.pairs.questions):
    the verdicts' question, also where a campaign has one target to rank (the usual
    history: one file system, version after version)."""
    from fslab.analysis.pairs.questions import primary_questions
    from fslab.analysis.pipeline import campaign_settings, declared_primaries

    records = [] if results.environment().get("imported") else list(results.run_records())
    asked = primary_questions(runs, declared_primaries(records),
                              tuple(campaign_settings(results).get("primary", ())))
    return [key in asked for key in zip(runs["workload"].astype(str), runs["op"].astype(str),
                                        runs["metric"].astype(str), strict=True)]


def cells_table(runs: pd.DataFrame) -> pd.DataFrame:
    """Per target × workload × op × metric: n, geometric mean with its t interval on the
    log scale (the summary's own: analysis.cells.stats.log_ci), disturbed runs. Values ≤ 0
    are left out of the logs (a count of zero errors has no geometric mean)."""
    import pandas as pd

    from fslab.analysis.cells.stats import log_ci

    keys = ["campaign_id", "target", "workload", "op", "metric", "unit", "better",
            "primary", "workload_signature", "target_signature"]
    rows = []
    for key, group in runs.groupby(keys, sort=False, observed=True):
        interval = log_ci(group["value"].to_numpy(dtype=float), LEVEL)
        rows.append({**dict(zip(keys, key, strict=True)), "n": interval.n,
                     "geomean": interval.center, "ci_low": interval.ci_low,
                     "ci_high": interval.ci_high,
                     "disturbed": int(group.drop_duplicates("run_id")["disturbed"].sum())})
    return pd.DataFrame(rows)
