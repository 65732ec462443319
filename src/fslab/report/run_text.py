"""What the terminal says of a results directory (`fslab analyze`) and of a campaign that
just ran (`fslab run`): rich renderables and lines from typed values the api hands over
(ResultsView, RunOutcome); nothing is read or computed here."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import RenderableType
from rich.markup import escape
from rich.text import Text

from fslab.report.terminal import summary_tables
from fslab.results.stats_files import Analysis

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class ResultsView:
    """A results directory as the terminal shows it: its analysis, its runs, each target's
    name as short as the campaign allows, each mirror member's share of the reads and the
    line saying what the runs cost (None where no run recorded its steps)."""

    path: Path
    analysis: Analysis
    runs: pd.DataFrame
    names: dict[str, str]
    member_split: pd.DataFrame
    machine_line: str | None = None


@dataclass(frozen=True)
class RunOutcome:
    """What `fslab run` reports beside its results: the goal of an adaptive campaign and
    the cells short of it, what --resolve's budget did not reach, the runner's counts and
    warnings, and the catalogue's answer (recorded, or why not)."""

    view: ResultsView
    ok: int
    failed: int
    kept: int
    reruns: int
    warnings: list[str] = field(default_factory=list)
    goal: str = ""  # "±5 % CIs and 10 % detectable" ('' for a plain campaign)
    unconverged: list[str] = field(default_factory=list)
    unresolved: list[str] = field(default_factory=list)
    catalogue: Path | None = None
    recorded: str | None = None  # what the catalogue recorded, or None with `not_recorded`
    not_recorded: str = ""
    pooled: list[str] = field(default_factory=list)  # --again: the sittings' pooled answers
    pooled_file: Path | None = None


def _plain(text: str) -> Text:
    return Text(text)


def whole_lines(runs: pd.DataFrame) -> list[str]:
    """The fio jobs measured whole, not in interleaved slices, with why: their runs met
    whatever moment of the disk they ran in (one line per reason)."""
    if "measured_whole" not in runs:
        return []
    whole = runs[runs["measured_whole"].fillna("").astype(str) != ""]
    by_reason = whole.groupby("measured_whole", sort=True)["workload"].unique()
    return [f"{', '.join(sorted(map(str, names)))}: measured whole, not in interleaved "
            f"slices ({why})" for why, names in by_reason.items()]


def results_text(view: ResultsView, decided: bool = True) -> list[RenderableType]:
    """The summary tables, the drift note, mirrors' read splits, the machine time, (with
    `decided`) the campaign's decided line, and what a busy machine did to its runs."""
    verdicts = view.analysis.verdicts
    out: list[RenderableType] = [summary_tables(view.analysis.summary, view.runs, view.names)]
    out += [Text(note, style="dim") for note in verdicts.loc[verdicts["kind"] == "drift",
                                                              "text"]]
    out += [_plain(line) for line in member_lines(view.member_split)]
    if view.machine_line is not None:
        out.append(_plain(view.machine_line))
    out += [_plain(line) for line in whole_lines(view.runs)]
    if decided:
        out += decided_text(view.analysis)
    runs = view.runs
    if "disturbed" in runs and runs["disturbed"].astype(bool).any():
        busy = runs[runs["disturbed"].astype(bool)]
        out.append(f"[yellow]{len(busy)} of {len(runs)} runs ran while the machine was "
                   f"busy ({escape(str(busy['disturbed_by'].iloc[0]))}; every one in "
                   "stats/disturbed.csv): fslab run --rerun-disturbed measures them "
                   "again.[/yellow]")
    return out


def decided_text(analysis: Analysis) -> list[RenderableType]:
    """'Decided 7 of 10 questions in 9 min 12 s of machine time; 3 open: …'."""
    verdicts = analysis.verdicts
    return [_plain(line) for line in verdicts.loc[verdicts["kind"] == "decided", "text"]]


def member_lines(split: pd.DataFrame) -> list[str]:
    """"md-raid: randrw16k: reads 79.7 % on member 1 (loop3), 20.3 % on member 2 ..."""
    lines = []
    for (target, workload), rows in split.groupby(["target", "workload"], sort=False):
        parts = ", ".join(f"{row.read_share:.1%} member {row.member} ({row.device}: "
                          f"{row.read_ios:,} reads, {row.write_ios:,} writes)"
                          for row in rows.itertuples())
        lines.append(f"{target} {workload}: read split {parts} [{rows['source'].iloc[0]}]")
    return lines


def run_text(outcome: RunOutcome) -> tuple[list[RenderableType], list[RenderableType]]:
    """(what `fslab run` says on stdout, what on stderr) once its campaign is over."""
    path = outcome.view.path
    out: list[RenderableType] = results_text(outcome.view, decided=False)
    err: list[RenderableType] = [f"[yellow]warning: {w}[/yellow]" for w in outcome.warnings]
    if outcome.goal:
        if outcome.unconverged:
            out.append(f"[yellow]Not at {outcome.goal} after the second stage (planned "
                       "from the pilot's spread; reported, not chased):[/yellow]")
            out += [f"  {escape(cell)}" for cell in outcome.unconverged]
        else:
            out.append(f"Every cell at {outcome.goal}.")
    out += [f"[yellow]Not resolved within --budget: {escape(line)}[/yellow]"
            for line in outcome.unresolved]
    out.append(f"Next: fslab report {path} (HTML; the tests, effect sizes and verdicts are "
               f"in {path / 'stats'})")
    if outcome.catalogue is not None:
        if outcome.recorded is not None:
            out.append(Text(f"Catalogue {outcome.catalogue}: {outcome.recorded}"))
        else:  # the campaign's results stand whatever happened to the catalogue
            err.append(Text(
                f"catalogue {outcome.catalogue}: this campaign was not recorded "
                f"({outcome.not_recorded}); record it later with: fslab history add {path} "
                f"--catalogue {outcome.catalogue}"))
    out.append(f"Results: {path}  ({outcome.ok} runs ok, {outcome.failed} failed, "
               f"{outcome.kept} kept from before"
               + (f", {outcome.reruns} measured again" if outcome.reruns else "") + ")")
    out += decided_text(outcome.view.analysis)
    if outcome.pooled:
        out.append(Text("\n".join(outcome.pooled)))
        out.append(Text(f"Wrote {outcome.pooled_file}"))
    return out, err


def goal_text(until_ci: float | None, until_detectable: float | None) -> str:
    """An adaptive campaign's goal in words ('' for a plain campaign)."""
    return " and ".join(filter(None, [
        f"±{until_ci:g} % CIs" if until_ci else "",
        f"{until_detectable:g} % detectable" if until_detectable else ""]))
