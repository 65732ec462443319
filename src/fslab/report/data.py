"""What a report renders: the analysis, the run records, and the directories they came
from. Built by api.report (one directory's stats/, or several seen as one:
fslab/report/several.py); read by every section of the report."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from fslab.core.campaign_settings import CampaignSettings
from fslab.core.environment_record import Environment
from fslab.results.stats_files import Analysis

if TYPE_CHECKING:  # the report reads stats/; the analysis is imported only to pool
    from fslab.analysis.sittings.question import PooledQuestion


@dataclass(frozen=True)
class ResultsSource:
    """One results directory a report draws on, and how its targets are labelled there."""

    path: Path
    label: str  # the directory's label ("" when it is the report's only one)
    targets: dict[str, str]  # its target names -> their labels in the report
    campaign: CampaignSettings
    environment: Environment


@dataclass(frozen=True)
class ReportData:
    """What the report renders: the analysis (as stats/ holds it, or of several
    directories seen as one: fslab/report/several.py), the run records, and each directory's
    campaign and environment."""

    analysis: Analysis
    records: pd.DataFrame  # status of every run (runs table)
    sources: list[ResultsSource]
    intervals: pd.DataFrame | None = None  # fio's per-interval values (results/intervals.py)
    # {job: its fio options as its runs recorded them} (run.json: job_options)
    job_options: dict[str, dict[str, object]] = field(default_factory=dict)
    # Its sittings pooled (stats/pooled.csv, pooled_sittings.csv, the pooled verdicts'
    # lines: `fslab run --again`), or None
    pooled: tuple[list[PooledQuestion], pd.DataFrame, list[str]] | None = None

    def named(self, names: dict[str, str]) -> ReportData:
        """The same data with every target shown by `names` (as short as the campaign
        allows: analysis.factors.levels.target_names); the tables in stats/ keep theirs."""
        if not names or all(k == v for k, v in names.items()):
            return self
        import dataclasses

        def rename(frame: pd.DataFrame | None, *columns: str) -> pd.DataFrame | None:
            if frame is None or frame.empty:
                return frame
            out = frame.copy()
            for column in columns:
                if column in out:
                    out[column] = out[column].astype(str).map(lambda t: names.get(t, t))
            return out

        analysis = dataclasses.replace(
            self.analysis, summary=rename(self.analysis.summary, "target"),
            runs=rename(self.analysis.runs, "target"),
            ranking=rename(self.analysis.ranking, "target", "best"),
            pairs=[dataclasses.replace(p, a=names.get(p.a, p.a), b=names.get(p.b, p.b))
                   for p in self.analysis.pairs])
        return dataclasses.replace(self, analysis=analysis,
                                   records=rename(self.records, "target"),
                                   intervals=rename(self.intervals, "target"))

    @property
    def results_dir(self) -> Path:
        return self.sources[0].path

    @property
    def environment(self) -> Environment:
        return self.sources[0].environment

    @property
    def campaign(self) -> CampaignSettings:
        return self.sources[0].campaign

    @property
    def name(self) -> str:
        if len(self.sources) > 1:
            return " + ".join(source.label for source in self.sources)
        return self.campaign.name or self.results_dir.name
