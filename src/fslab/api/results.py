"""Results directories as plain functions: open, load, report, compare, and the names a
report shows targets by."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from fslab.aging.legacy import is_old_aging_dir, upgrade
from fslab.analysis.across.compare import (
    CampaignComparison,
    compare_cells,
    setting_differences,
    spread_words,
)
from fslab.analysis.pairs.questions import declared_primaries
from fslab.analysis.pipeline import analyse, analyze_results
from fslab.analysis.sittings.repeat import PRIOR
from fslab.api.pool import is_pool_only, read_pool
from fslab.core.cell_keys import factor_scopes
from fslab.core.cell_keys import target_names as names_of
from fslab.history.identity import campaign_id
from fslab.history.sittings import level_spread
from fslab.host.diskstats import SPLIT_COLUMNS, split_rows
from fslab.report.compare_html import build_compare_report
from fslab.report.data import ReportData, ResultsSource
from fslab.report.html import build_report
from fslab.report.pooled_section import pooled_report
from fslab.report.run_text import ResultsView
from fslab.report.several import run_tables, several
from fslab.results.costs import machine_time as machine_time_of
from fslab.results.intervals import load_intervals
from fslab.results.stats_files import load_analysis, stale_reason
from fslab.results.store import ResultsDir, write_atomic

if TYPE_CHECKING:
    from collections.abc import Callable

    import pandas as pd

    from fslab.core.environment_record import SittingSpread
    from fslab.core.record import RunRecord
    from fslab.results.costs import MachineTime
    from fslab.results.stats_files import Analysis


def report(results_dirs: Path | list[Path], output: Path | None = None,
           say: Callable[[str], object] = lambda _line: None) -> Path:
    """Write the self-contained HTML report of one results directory, or of several seen
    as one (fslab/report/several.py: two campaigns, two aging runs); return its path.

    One directory's report renders stats/ as `fslab analyze` (or the run) left it; when
    stats/ is missing or stale it is analysed once, and `say` is told why. Several are
    analysed together in memory (nothing is written into them); the report goes to
    `output` (default: report.html here).
    """
    dirs = [results_dirs] if isinstance(results_dirs, str | Path) else list(results_dirs)

    if len(dirs) == 1 and is_pool_only(Path(dirs[0])):
        output = Path(output or Path(dirs[0]) / "report.html")
        name, *tables = read_pool(Path(dirs[0]))
        write_atomic(output, pooled_report(name, *tables))
        return output
    opened = [open_results(d) for d in dirs]
    if len(opened) == 1:
        (results,) = opened

        analysis = _current_analysis(results, say)
        data = ReportData(analysis, results.load_runs(), [ResultsSource(
            results.path, "", {}, results.campaign_settings(), results.environment())],
            load_intervals(results), _job_options(results),
            read_pool(results.path)[1:] if (results.path / "pool.json").exists()
            else None).named(target_names(results.path, analysis.summary))
        output = Path(output or results.path / "report.html")
    else:
        sources, inputs = several(opened)
        data = ReportData(analyse(inputs), run_tables(opened, sources), sources)
        output = Path(output or "report.html")
    write_atomic(output, build_report(data))
    return output


def _job_options(results: ResultsDir) -> dict[str, dict[str, object]]:
    """{job: its fio options as one of its runs recorded them} (the report's captions)."""
    found: dict[str, dict[str, object]] = {}
    for record in results.run_records():
        options = record.workload_metadata.section("job_options")
        if options:
            found.setdefault(record.job or record.workload, options)
    return found


def _current_analysis(results: ResultsDir, say: Callable[[str], object]) -> Analysis:
    """stats/ as the analysis left it, or analysed once now (and said why)."""
    done = load_analysis(results)
    if done is None:
        say(f"{stale_reason(results)}: analysing {results.path} once (fslab analyze) …")
        done = analyze_results(results)
    return done


def compare(base: Path, new: Path, margin: float | None = None,
            output: Path | None = None, catalogue: Path | None = None,
            within_sitting: bool = False) -> CampaignComparison:
    """Match the cells of two results directories (campaigns, imports or aging runs) and
    decide each question as the verdicts do: improved, regressed, the same within
    `margin` (default: the base campaign's, else ±10 %), or unresolved — counting how far
    a target moves between two sittings (the host's history in `catalogue`, else the
    stated prior; `within_sitting`: the iterations alone), analysis/across/compare.py;
    optionally write the comparison as HTML. (The result unpacks as `cells,
    differences` too.)"""
    base_dir, new_dir = open_results(base), open_results(new)
    base_settings, new_settings = base_dir.campaign_settings(), new_dir.campaign_settings()
    if margin is None:
        margin = base_settings.margin
    hosts = [_host(d) for d in (base_dir, new_dir)]
    spread = None if within_sitting else _level_spread(catalogue, hosts[0], (base, new))
    declared = {**declared_primaries(_records(new_dir)), **declared_primaries(_records(base_dir))}
    cells = compare_cells(base_dir.load_metrics(), new_dir.load_metrics(), margin, declared,
                          base_settings.primary, spread=spread)
    comparison = CampaignComparison(
        Path(base), Path(new), cells,
        setting_differences(base_dir.environment(), new_dir.environment(),
                            base_settings, new_settings),
        margin, spread_words(spread, hosts[0], hosts[0] != hosts[1]))
    if output is not None:
        write_atomic(Path(output), build_compare_report(comparison))
    return comparison


def _host(results: ResultsDir) -> str:
    """The host a results directory sat on."""
    environment = results.environment()
    return (environment.sitting.host if environment.sitting else "") or environment.host


def _level_spread(catalogue: Path | None, host: str, sittings: tuple[Path, Path]
                  ) -> SittingSpread:
    """How far a level moves between two sittings on `host`: its history in the
    catalogue (the two compared left out), else the stated prior."""
    if catalogue is None or not Path(catalogue).exists():
        return PRIOR

    return level_spread(catalogue, host, {campaign_id(Path(s)) for s in sittings})


def _records(results: ResultsDir) -> list[RunRecord]:
    """A campaign's run records (an import's say nothing the analysis reads)."""
    return [] if results.environment().imported else list(results.run_records())


def target_names(results_dir: Path, summary: pd.DataFrame) -> dict[str, str]:
    """{target: its name as short as the campaign allows} ('data=journal' where every
    target is ext4 and only a mount option varies), for what prints a results directory."""
    settings = open_results(results_dir).campaign_settings()
    factors = [f for f in {**settings.levels, **settings.scopes} if f in summary.columns]
    if "target_base" not in summary or summary.empty:
        return {}
    cells = summary.drop_duplicates(["target", "workload"])
    return names_of(cells, factor_scopes(settings.scopes, factors))


def open_results(path: Path) -> ResultsDir:
    """An existing results directory (format checked); an aging directory from before
    aging runs were results directories is upgraded in place first (aging/legacy.py)."""
    path = Path(path)
    if not (path / "format.json").exists() and (path / "aging.json").exists() \
            and is_old_aging_dir(path):
        return upgrade(path)
    return ResultsDir.open(path)


def results_dir(path: Path) -> ResultsDir:
    """An existing results directory (format checked)."""
    return open_results(path)


def load(results_dir: Path) -> pd.DataFrame:
    """The metrics table of a results directory as a pandas DataFrame."""
    return open_results(results_dir).load_metrics()


def runs(results_dir: Path) -> pd.DataFrame:
    """One row per finished run, with its status and reason."""
    return open_results(results_dir).load_runs()


def machine_time(results_dir: Path) -> MachineTime | None:
    """The machine time of a results directory's runs by step, and the share that
    measured (results/costs.py: a MachineTime, or None when no run recorded steps)."""
    return machine_time_of(open_results(results_dir))


def analysed(directory: Path) -> Analysis:
    """Analyse a results directory, write stats/, and return the whole analysis."""
    return analyze_results(open_results(directory))


def results_view(results_dir: Path, analysis: Analysis | None = None) -> ResultsView:
    """A results directory as the terminal shows it (report/run_text.py): its analysis
    (`analysis`, or stats/ as written, analysed once where it is missing or stale), runs,
    target names, mirrors' read splits and machine time."""
    done = analysis if analysis is not None else analysed(results_dir)
    spent = machine_time(results_dir)
    return ResultsView(Path(results_dir), done, runs(results_dir),
                       target_names(results_dir, done.summary), member_split(results_dir),
                       spent.line() if spent is not None else None)


def member_split(results_dir: Path) -> pd.DataFrame:
    """Per member of each mirror target: its reads and writes and its share of the reads
    (from fio's disk statistics or /sys/block: fslab/host/diskstats.py)."""
    import pandas as pd

    records = open_results(results_dir).run_records()
    return pd.DataFrame(split_rows(records), columns=SPLIT_COLUMNS)
