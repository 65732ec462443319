"""Every command as a plain Python function (the CLI is a thin layer over these)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fslab.api.history import (  # noqa: F401  (the history's commands, one import away)
    history_add,
    history_campaigns,
    history_changes,
    history_compact,
    history_migrate,
    history_query,
    history_remove,
    history_report,
    record_campaign,
)
from fslab.core.errors import UserError
from fslab.plan.model import Overrides as Overrides  # what `fslab run` flags override
from fslab.plan.preflight import prepare as prepare  # api.prepare: `fslab run --dry-run`
from fslab.results.store import ResultsDir
from fslab.run.campaign import RunResult
from fslab.run.progress import LineProgress as LineProgress  # progress of a campaign
from fslab.run.progress import RichProgress as RichProgress

# Campaign machinery (pydantic models, targets, runner) is imported where a campaign is
# run: `fslab import`, `analyze`, `report` and `compare` start ~0.4 s sooner without it.
if TYPE_CHECKING:
    from collections.abc import Callable

    import pandas as pd

    from fslab.aging.config import AgingConfig
    from fslab.analysis.across.compare import CampaignComparison
    from fslab.host.lab import CleanupReport, Lab
    from fslab.ingest.importer import ImportReport
    from fslab.ingest.reparse import ReparseReport
    from fslab.plan.campaign import Campaign
    from fslab.plan.model import Overrides
    from fslab.run.runner import Progress
    from fslab.targets import TargetSpec
    from fslab.tune.request import Request as TuneRequest


def run(
    campaign: Campaign,
    *,
    out: Path | None = None,
    lab: Lab | None = None,
    resume: bool = False,
    confirmed_devices: frozenset[str] = frozenset(),
    force_device: bool = False,
    progress: Progress | None = None,
    until_ci: float | None = None,
    max_iterations: int = 20,
    until_detectable: float | None = None,
    rerun_disturbed: bool = False,
    rerun_unsteady: bool = False,
    budget: float | None = None,
    resolve: bool = False,
    resolve_budget: float | None = None,
) -> RunResult:
    """Run a campaign into a results directory (new, or continued with resume=True).

    With `until_ci` (a percentage: every headline cell's 95 % interval within that
    factor) or `until_detectable` (a percentage: every primary comparison able to detect
    a difference of that size), the campaign's iterations are a pilot that decides how
    many more to run, up to `max_iterations` in all; estimates and verdicts use only
    those (fslab/run/adaptive.py: this keeps their error rates). What is still short of the
    goal at the end is returned. With `budget` (seconds), a plan that measures for longer
    is refused before anything is made (`fslab run` passes 2 h unless --yes). With
    `resolve`, more iterations are measured only where a primary question is unresolved,
    until each is decided or the campaign's measuring time reaches `resolve_budget`
    seconds (default: `budget`, else 2 h; fslab/run/resolve.py).
    """
    from fslab.host.lab import Lab
    from fslab.run.adaptive import Goal
    from fslab.run.campaign import CampaignRun, both

    goal = Goal(until_ci, until_detectable)
    first = CampaignRun.start(campaign, Path(out or campaign.out or default_out(campaign)),
                              lab or Lab(), resume=resume, force_device=force_device,
                              confirmed_devices=confirmed_devices, budget=budget)
    if resolve and goal:
        raise UserError("--resolve decides questions by looks of its own: drop --until-ci "
                        "and --until-detectable")
    if resolve:
        from fslab.plan.order import DEFAULT_BUDGET_S
        from fslab.run.resolve import resolve as resolve_rounds
        from fslab.run.resolve import start_looking

        first = start_looking(first)
    outcome = first.execute(progress, rerun_disturbed, before=first.pre_run_steps(),
                            rerun_unsteady=rerun_unsteady)
    if resolve:
        spend = resolve_budget or budget or DEFAULT_BUDGET_S
        last, outcome, left_out = resolve_rounds(first, outcome, spend, progress,
                                                 rerun_disturbed, rerun_unsteady)
        result = last.finish(outcome, goal)
        result.unresolved = left_out
        return result
    second = first.second_stage(goal, max_iterations)
    if second is not None:
        outcome = both(outcome, second.execute(progress, rerun_disturbed,
                                               rerun_unsteady=rerun_unsteady))
    return first.finish(outcome, goal)


def age(spec: TargetSpec, settings: AgingConfig, out: Path, *, lab: Lab | None = None,
        image: str = "sparse", confirmed_devices: frozenset[str] = frozenset(),
        force_device: bool = False) -> dict[str, Any]:
    """`fslab age`: age a fresh file system into the results directory `out` (the op log,
    fragmentation probes and their rows, an image: aging/run.py); return the run's record
    (runs/aging/aging.json). Settings: aging.flags builds them from the command line,
    aging.config from a TOML file."""
    from fslab.aging.run import age as run_age
    from fslab.host.lab import Lab

    return run_age(spec, settings, Path(out), lab or Lab(), image,
                   confirmed_devices=confirmed_devices, force_device=force_device)


def resume_campaign(out: Path) -> Campaign:
    """The campaign saved in a results directory, for `--resume`."""
    from fslab.plan.resume import resume_campaign as saved

    return saved(out)


def analyze(results_dir: Path, full: bool = True) -> pd.DataFrame:
    """Analyse a results directory (a campaign's, an import's or an aging run's); write
    DIR/stats/ and return the per-cell summary.

    Writes summary.csv (per cell); with `full` (the default, and `fslab analyze`) every
    other table of stats/ (stats_files.TABLES: tests, pairs, rankings, verdicts, …;
    analysis/pipeline.py). A run ends with the full analysis too.
    """
    from fslab.analysis.pipeline import analyze_results, write_summary

    results = open_results(results_dir)
    return analyze_results(results).summary if full else write_summary(results)


def drift(results_dir: Path) -> str | None:
    """A sentence on machine drift between iterations (analysis.cells.drift), or None."""
    from fslab.analysis.cells.drift import drift_note, iteration_drift
    from fslab.analysis.cells.observations import per_run

    metrics = open_results(results_dir).load_metrics()
    table, shared = iteration_drift(per_run(metrics))
    return drift_note(table, shared)


def reparse(results_dir: Path) -> ReparseReport:
    """`fslab reparse`: rows rebuilt from every run's raw output (see fslab.ingest.reparse)."""
    from fslab.ingest.reparse import reparse as run_parsers

    report = run_parsers(Path(results_dir))
    if open_results(results_dir).stats_dir.exists():
        analyze(Path(results_dir))  # stats/ follows the new rows
    return report


def import_results(paths: list[Path], out: Path, pattern: str | None = None,
                   analyze_after: bool = True) -> ImportReport:
    """`fslab import`: a results directory from files collected elsewhere, analysed (as
    `analyze`) unless `analyze_after` is False."""
    from fslab.ingest.importer import importing, load_analysis_libraries, no_cycle_collection

    done = None
    with no_cycle_collection():
        with importing([Path(p) for p in paths], Path(out), pattern,
                       meanwhile=load_analysis_libraries if analyze_after else None) as job:
            if analyze_after and job.report.imported:  # while the copies are archived
                from fslab.analysis.pipeline import analyse

                done = analyse(job.inputs())
            report = job.finish()
        if done is not None:
            from fslab.analysis.pipeline import write_analysis

            write_analysis(ResultsDir.open(Path(out)), done)
    return report


def report(results_dirs: Path | list[Path], output: Path | None = None,
           say: Callable[[str], object] = lambda _line: None) -> Path:
    """Write the self-contained HTML report of one results directory, or of several seen
    as one (fslab/report/several.py: two campaigns, two aging runs); return its path.

    One directory's report renders stats/ as `fslab analyze` (or the run) left it; when
    stats/ is missing or stale it is analysed once, and `say` is told why. Several are
    analysed together in memory (nothing is written into them); the report goes to
    `output` (default: report.html here).
    """
    from fslab.report.data import ReportData, Source
    from fslab.report.html import build_report
    from fslab.results.store import write_atomic

    dirs = [results_dirs] if isinstance(results_dirs, str | Path) else list(results_dirs)
    opened = [open_results(d) for d in dirs]
    if len(opened) == 1:
        (results,) = opened
        from fslab.results.series import load_series

        analysis = _current_analysis(results, say)
        data = ReportData(analysis, results.load_runs(), [Source(
            results.path, "", {}, _campaign(results), results.environment())],
            load_series(results)).named(target_names(results.path, analysis.summary))
        output = Path(output or results.path / "report.html")
    else:
        from fslab.analysis.pipeline import analyse
        from fslab.report.several import run_tables, several

        sources, inputs = several(opened)
        data = ReportData(analyse(inputs), run_tables(opened, sources), sources)
        output = Path(output or "report.html")
    write_atomic(output, build_report(data))
    return output


def _current_analysis(results: ResultsDir, say: Callable[[str], object]) -> Any:
    """stats/ as the analysis left it, or analysed once now (and said why)."""
    from fslab.results.stats_files import load_analysis, stale_reason

    done = load_analysis(results)
    if done is None:
        from fslab.analysis.pipeline import analyze_results

        say(f"{stale_reason(results)}: analysing {results.path} once (fslab analyze) …")
        done = analyze_results(results)
    return done


def _campaign(results: ResultsDir) -> dict[str, Any]:
    import tomllib

    path = results.campaign_path()
    return tomllib.loads(path.read_text()) if path.exists() else {}


def compare(base: Path, new: Path, margin: float | None = None,
            output: Path | None = None) -> CampaignComparison:
    """Match the cells of two results directories (campaigns, imports or aging runs) and
    decide each question as the verdicts do: improved, regressed, the same within
    `margin` (default: the base campaign's, else ±10 %), or unresolved
    (analysis/across/compare.py); optionally write the comparison as HTML. (The result
    still unpacks as `cells, differences`.)"""
    from fslab.analysis.across.compare import (
        CampaignComparison,
        compare_cells,
        setting_differences,
    )
    from fslab.analysis.pipeline import declared_primaries
    from fslab.core.units import DEFAULT_MARGIN, parse_margin

    base_dir, new_dir = open_results(base), open_results(new)
    base_settings, new_settings = _campaign(base_dir), _campaign(new_dir)
    if margin is None:
        margin = parse_margin(base_settings.get("margin", DEFAULT_MARGIN))
    declared = {**declared_primaries(_records(new_dir)), **declared_primaries(_records(base_dir))}
    cells = compare_cells(base_dir.load_metrics(), new_dir.load_metrics(), margin, declared,
                          tuple(base_settings.get("primary", ())))
    comparison = CampaignComparison(
        Path(base), Path(new), cells,
        setting_differences(base_dir.environment(), new_dir.environment(),
                            base_settings, new_settings),
        margin)
    if output is not None:
        from fslab.report.compare_html import build_compare_report
        from fslab.results.store import write_atomic

        write_atomic(Path(output), build_compare_report(comparison))
    return comparison


def _records(results: ResultsDir) -> list[Any]:
    """A campaign's run records (an import's say nothing the analysis reads)."""
    return [] if results.environment().get("imported") else list(results.run_records())


def tune(campaign: Campaign, request: TuneRequest, out: Path, *, lab: Lab | None = None,
         progress: Progress | None = None, resume: bool = False) -> list[str]:
    """`fslab tune`: screen, race and confirm (fslab/tune/) into `out`; the lines that
    answer it (also in out/stats: tune.csv, tuned.toml; out/tune.html). With `resume`,
    the tune saved in `out` goes on from what is on disk."""
    from fslab.host.lab import Lab
    from fslab.tune import answer
    from fslab.tune import request as requests
    from fslab.tune.driver import Settings
    from fslab.tune.driver import tune as run_tune

    out = Path(out)
    if not resume:
        if (out / requests.TUNE_FILE).exists() or (out.exists() and any(out.iterdir())):
            raise UserError(f"{out} already holds results: pass --resume to continue it, "
                            "or another --out")
        requests.save(out, request)
        import tomli_w

        from fslab.results.store import write_atomic as write

        write(out / "campaign.toml", tomli_w.dumps(campaign.to_dict()))
    space = request.space([t.fs for t in campaign.targets])
    answers = run_tune(campaign, space, Settings(request.margin, request.max_runs,
                                                 request.budget_s), out, lab or Lab(),
                       progress)
    lines = [*space.notes, *answer.write(out, campaign, answers, request.margin)]
    from fslab.report.tune_page import render
    from fslab.results.store import write_atomic

    write_atomic(out / "tune.html", render(campaign.name, answer.page_tables(answers), lines))
    return lines


def tune_request(table: dict[str, Any], flags: dict[str, list[str]], **limits: Any
                 ) -> TuneRequest:
    """What `fslab tune` was asked, from its flags over the campaign's [tune] table
    (tune/request.py)."""
    from fslab.tune.request import request_of

    return request_of(table, flags, **limits)


def tune_plan(campaign: Campaign, request: TuneRequest) -> list[str]:
    """`fslab tune --dry-run`: the stages and what each may take; touches nothing."""
    from fslab.tune.driver import per_run_seconds
    from fslab.tune.request import dry_run
    from fslab.tune.stages import questions_of

    space = request.space([t.fs for t in campaign.targets])
    return dry_run(space, request, per_run_seconds(campaign), len(questions_of(campaign)))


def make_lab(path: Path | None = None) -> Lab:
    """The lab directory (default $FSLAB_LAB or /var/lib/fslab)."""
    from fslab.host.lab import Lab

    return Lab(path)


def load_campaign(path: Path | None, overrides: Overrides) -> Campaign:
    """A campaign from a file (or none) and the flags that override it, resolved and
    checked (plan/campaign.py)."""
    from fslab.plan.campaign import load_campaign as load

    return load(path, overrides)


def tune_resumed(out: Path) -> tuple[Campaign, TuneRequest]:
    """The campaign and request of the tune in `out` (`fslab tune --resume --out DIR`)."""
    from fslab.plan.campaign import Overrides, load_campaign
    from fslab.tune.request import load

    request = load(Path(out))
    return load_campaign(Path(out) / "campaign.toml", Overrides()), request


def target_names(results_dir: Path, summary: pd.DataFrame) -> dict[str, str]:
    """{target: its name as short as the campaign allows} ('data=journal' where every
    target is ext4 and only a mount option varies), for what prints a results directory."""
    from fslab.core.cells import declared_levels, factor_scopes
    from fslab.core.cells import target_names as names_of

    settings = _campaign(open_results(results_dir))
    factors = [f for f in {**declared_levels(settings), **(settings.get("factors") or {})}
               if f in summary.columns]
    if "target_base" not in summary or summary.empty:
        return {}
    cells = summary.drop_duplicates(["target", "workload"])
    return names_of(cells, factor_scopes(settings, factors))


def open_results(path: Path) -> ResultsDir:
    """An existing results directory (format checked); an aging directory from before
    aging runs were results directories is upgraded in place first (aging/legacy.py)."""
    path = Path(path)
    if not (path / "format.json").exists() and (path / "aging.json").exists():
        from fslab.aging.legacy import is_old_aging_dir, upgrade

        if is_old_aging_dir(path):
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


def member_split(results_dir: Path) -> pd.DataFrame:
    """Per member of each mirror target: its reads and writes and its share of the reads
    (from fio's disk statistics or /sys/block: fslab/host/diskstats.py)."""
    import pandas as pd

    from fslab.host.diskstats import SPLIT_COLUMNS, split_rows

    records = open_results(results_dir).run_records()
    return pd.DataFrame(split_rows(records), columns=SPLIT_COLUMNS)


def cleanup(lab: Lab | None = None) -> CleanupReport:
    """Release what killed fslab sessions left behind (mounts, loop devices, images)."""
    from fslab.host.lab import Lab

    return (lab or Lab()).cleanup()


def default_out(campaign: Campaign) -> Path:
    return Path("results") / f"{campaign.name}-{time.strftime('%Y%m%d-%H%M%S')}"


# Types a caller of these functions builds or shows, loaded when first asked for (a
# command that needs none of them, `fslab history add`, does not pay for pydantic or rich).
LAZY = {"Overrides": "fslab.plan.model", "LineProgress": "fslab.run.progress",
        "RichProgress": "fslab.run.progress"}


def __getattr__(name: str) -> Any:
    if name in LAZY:
        import importlib

        return getattr(importlib.import_module(LAZY[name]), name)
    raise AttributeError(name)
