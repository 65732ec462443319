"""The terminal summary of a results directory (after `fslab run` and `fslab analyze`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fslab.cli.app import console, escape


def print_summary(results_dir: Path, analysis: Any = None, decided: bool = True) -> None:
    """The summary tables, the drift note, mirrors' read splits, the machine time and
    (with `decided`) the time-to-decision line of a results directory, from its analysis
    (`fslab run` passes the one it ended with, and says that line last itself)."""
    from fslab import api
    from fslab.report.terminal import summary_tables

    if analysis is None:
        analysis = api.analysed(results_dir)
    runs = api.runs(results_dir)
    console.print(summary_tables(analysis.summary, runs, api.target_names(results_dir,
                                                                          analysis.summary)))
    verdicts = analysis.verdicts
    for note in verdicts.loc[verdicts["kind"] == "drift", "text"]:
        console.print(note, style="dim")
    for line in member_lines(api.member_split(results_dir)):
        console.print(line, markup=False, highlight=False)
    spent = api.machine_time(results_dir)
    if spent is not None:
        console.print(spent.line(), markup=False, highlight=False)
    if decided:
        print_decision_line(analysis)
    if "disturbed" in runs and runs["disturbed"].astype(bool).any():
        busy = runs[runs["disturbed"].astype(bool)]
        console.print(f"[yellow]{len(busy)} of {len(runs)} runs ran while the machine was "
                      f"busy ({escape(str(busy['disturbed_by'].iloc[0]))}; every one in "
                      "stats/disturbed.csv): fslab run --rerun-disturbed measures them "
                      "again.[/yellow]")


def print_decision_line(analysis: Any) -> None:
    """'Decided 7 of 10 questions in 9 min 12 s of machine time; 3 open: …'."""
    verdicts = analysis.verdicts
    for line in verdicts.loc[verdicts["kind"] == "decided", "text"]:
        console.print(line, markup=False, highlight=False, soft_wrap=True)


def member_lines(split: object) -> list[str]:
    """"md-raid: randrw16k: reads 79.7 % on member 1 (loop3), 20.3 % on member 2 ..."""
    import pandas as pd

    assert isinstance(split, pd.DataFrame)
    lines = []
    for (target, workload), rows in split.groupby(["target", "workload"], sort=False):
        parts = ", ".join(f"{row.read_share:.1%} member {row.member} ({row.device}: "
                          f"{row.read_ios:,} reads, {row.write_ios:,} writes)"
                          for row in rows.itertuples())
        lines.append(f"{target} {workload}: read split {parts} [{rows['source'].iloc[0]}]")
    return lines
