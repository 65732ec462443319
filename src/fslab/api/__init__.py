"""Every command as a plain Python function (the CLI is a thin layer over these)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from fslab.aging.age import age as run_age
from fslab.aging.flags import AgingFlags  # noqa: F401  (a type callers build)
from fslab.analysis.cells.drift import drift_note, iteration_drift
from fslab.analysis.cells.observations import per_run
from fslab.analysis.pipeline import analyse, analyze_results, write_analysis, write_summary
from fslab.api import campaigns, tuning
from fslab.api.again import pool_again
from fslab.api.campaigns import default_out
from fslab.api.export import export, export_table  # noqa: F401  (`fslab export`)
from fslab.api.history import (  # noqa: F401  (the history's commands, one import away)
    history_add,
    history_campaigns,
    history_changes,
    history_compact,
    history_migrate,
    history_query,
    history_remove,
    history_report,
    history_spreads,
    record_campaign,
)
from fslab.api.machine import (  # noqa: F401  (the machine's commands, one import away)
    aging_request,
    doctor,
    doctor_tune,
    make_lab,
    presets_json,
    presets_tables,
    quick_check,
    serve,
    serve_exposure,
    targets_table,
)
from fslab.api.pool import pool, pool_catalogue, pool_dirs  # noqa: F401  (`fslab pool`)
from fslab.api.results import (  # noqa: F401  (results directories, one import away)
    analysed,
    compare,
    load,
    machine_time,
    member_split,
    open_results,
    report,
    results_dir,
    results_view,
    runs,
    target_names,
)
from fslab.api.tune import (  # noqa: F401  (`fslab tune`, one import away)
    tune,
    tune_again,
    tune_plan,
)
from fslab.api.tuning import TuneFlags
from fslab.core.aging_record import AgingRecord, Parameters
from fslab.history.series import method
from fslab.host.doctor import BAD, OK  # noqa: F401  (a type callers build)
from fslab.host.lab import Lab
from fslab.ingest.importer import importing, load_analysis_libraries, no_cycle_collection
from fslab.ingest.reparse import reparse as run_parsers
from fslab.plan import loading
from fslab.plan.levels import parse_flag
from fslab.plan.order import DEFAULT_BUDGET_S  # noqa: F401  (a type callers build)
from fslab.plan.preflight import prepare as prepare  # api.prepare: `fslab run --dry-run`
from fslab.plan.preview import plan_renderable
from fslab.plan.resume import resume_campaign as saved_campaign
from fslab.plan.schema import Overrides
from fslab.report.run_text import RunOutcome, goal_text
from fslab.results.stats_files import load_analysis
from fslab.results.store import ResultsDir
from fslab.run.campaign_run import RunResult
from fslab.run.lab_space import campaign_need
from fslab.run.orchestrator import RunOptions, run_campaign
from fslab.run.pieces import measured_how
from fslab.run.progress import LineProgress, RichProgress  # noqa: F401  (a type callers build)

if TYPE_CHECKING:
    import pandas as pd
    from rich.console import RenderableType

    from fslab.aging.config import AgingConfig
    from fslab.api.campaigns import RunRequest
    from fslab.api.tuning import TuneJob
    from fslab.host.lab import CleanupReport
    from fslab.ingest.importer import ImportReport
    from fslab.ingest.reparse import ReparseReport
    from fslab.plan.order import Plan
    from fslab.plan.schema import Campaign
    from fslab.results.stats_files import Analysis
    from fslab.run.runner import Progress
    from fslab.targets import Target, TargetSpec


def run(campaign: Campaign, out: Path | None = None, options: RunOptions | None = None, *,
        lab: Lab | None = None, progress: Progress | None = None) -> RunResult:
    """Run a campaign into a results directory `out` (default: the campaign's own, else
    results/NAME-TIME), new or continued (`options.resume`), as `options` say
    (run/orchestrator.RunOptions: `fslab run`'s flags by their names).

    With `until_ci` (a percentage: every headline cell's 95 % interval within that
    factor) or `until_detectable` (a percentage: every primary comparison able to detect
    a difference of that size), the campaign's iterations are a pilot that decides how
    many more to run, up to `max_iterations` in all; estimates and verdicts use only
    those (fslab/run/adaptive.py: this keeps their error rates). What is still short of the
    goal at the end is returned. With `budget` (seconds), a plan that measures for longer
    is refused before anything is made, unless `yes` (`fslab run` passes 2 h). With
    `resolve`, more iterations are measured only where a primary question is unresolved,
    until each is decided or the campaign's machine time reaches `budget` seconds
    (default 2 h; fslab/run/resolve.py). With `catalogue` (the catalogue it will be
    recorded in), its host's between-sitting spread is read from it for the repeat
    intervals (pairwise.csv repeat_low, repeat_high; analysis/sittings). With `summarise`
    (what `fslab run` does), the finished campaign is recorded in `catalogue` (its results
    stand whatever the catalogue does), a new sitting of `again` (api.campaign_for) is
    pooled with the directory's others, and the result's `outcome` is what the command
    prints of it (report/run_text.py).
    """
    options = options or RunOptions()
    result = run_campaign(campaign, Path(out or campaign.out or default_out(campaign)),
                          lab or Lab(), options, progress)
    if not options.summarise:
        return result
    catalogue, again = options.catalogue, options.again
    recorded, why = (record_campaign(catalogue, result.results.path) if catalogue
                     else (None, ""))
    pooled = pool_again(again, catalogue) if again is not None else None
    counts = result.runner
    result.outcome = RunOutcome(
        results_view(result.results.path, result.analysis), counts.ok, counts.failed,
        counts.skipped, counts.reruns, list(counts.warnings),
        goal_text(options.until_ci, options.until_detectable), list(result.unconverged),
        list(result.unresolved), catalogue, recorded, why,
        list(pooled.lines) if pooled is not None else [],
        again / "stats" / "pooled.csv" if pooled is not None and again is not None else None)
    return result


def tune_request(campaign_file: Path | None, flags: TuneFlags) -> TuneJob:
    """`fslab tune`'s request: the campaign and the tune's space and limits (new, resumed
    from --out, or --again DIR's), where it goes; flags that do not go together are
    refused in one line (api/tuning.py)."""
    return tuning.tune_request(campaign_file, flags)


def campaign_for(campaign_file: Path | None, overrides: Overrides, options: RunOptions,
                 out: Path | None = None) -> RunRequest:
    """`fslab run`'s request: the campaign (new, resumed from `out`, or `options.again`'s
    as a new sitting), where it goes and how it runs; flags that do not go together are
    refused in one line (api/campaigns.py)."""
    return campaigns.campaign_for(campaign_file, overrides, options, out)


def age(spec: TargetSpec, settings: AgingConfig, out: Path, *, lab: Lab | None = None,
        image: str = "sparse", confirmed_devices: frozenset[str] = frozenset(),
        force_device: bool = False,
        parameters: Parameters | None = None) -> AgingRecord:
    """`fslab age`: age a fresh file system into the results directory `out` (the op log,
    fragmentation probes and their rows, an image: aging/age.py); return the run's record
    (runs/aging/aging.json, with `parameters`: every setting and its source). Settings:
    aging.flags builds them from the command line, aging.config from a TOML file."""
    return run_age(spec, settings, Path(out), lab or Lab(), image,
                   confirmed_devices=confirmed_devices, force_device=force_device,
                   parameters=parameters)


def resume_campaign(out: Path) -> Campaign:
    """The campaign saved in a results directory, for `--resume`."""
    return saved_campaign(out)


def analyze(directory: Path, full: bool = True) -> pd.DataFrame:
    """Analyse a results directory (a campaign's, an import's or an aging run's); write
    DIR/stats/ and return the per-cell summary.

    Writes summary.csv (per cell); with `full` (the default, and `fslab analyze`) every
    other table of stats/ (each step's: tests, pairs, rankings, verdicts, …;
    analysis/step.py). A run ends with the full analysis too.
    """
    results = open_results(directory)
    return analyze_results(results).summary if full else write_summary(results)


def drift(directory: Path) -> str | None:
    """A sentence on machine drift between iterations (analysis.cells.drift), or None."""
    metrics = open_results(directory).load_metrics()
    table, shared = iteration_drift(per_run(metrics))
    return drift_note(table, shared)


def reparse(directory: Path) -> ReparseReport:
    """`fslab reparse`: rows rebuilt from every run's raw output (see fslab.ingest.reparse)."""
    done = run_parsers(Path(directory))
    if open_results(directory).stats_dir.exists():
        analyze(Path(directory))  # stats/ follows the new rows
    return done


def import_results(paths: list[Path], out: Path, pattern: str | None = None,
                   analyze_after: bool = True) -> ImportReport:
    """`fslab import`: a results directory from files collected elsewhere, analysed (as
    `analyze`) unless `analyze_after` is False."""
    done = None
    with no_cycle_collection():
        with importing([Path(p) for p in paths], Path(out), pattern,
                       meanwhile=load_analysis_libraries if analyze_after else None) as job:
            if analyze_after and job.report.imported:  # while the copies are archived
                done = analyse(job.inputs())
            report = job.finish()
        if done is not None:
            write_analysis(ResultsDir.open(Path(out)), done)
    return report


def stats_of(directory: Path) -> Analysis | None:
    """A results directory's analysis as stats/ holds it, or None when missing or stale."""
    return load_analysis(open_results(directory))


def parse_factor(text: str) -> tuple[str, list[str]]:
    """`--sweep`/`--factor NAME=V1,V2,...` -> (NAME, [V1, V2, ...]); one clear error."""
    return parse_flag(text)


def plan_preview(plan: Plan, targets: dict[str, Target], lab_root: Path) -> RenderableType:
    """`fslab run --dry-run`'s text: the plan before anything is made (plan/preview.py),
    with how each workload is measured (in interleaved slices, or whole and why)."""
    firsts = {run.workload.name: run for run in reversed(plan.runs)}
    measured = {name: measured_how(run, plan.campaign) for name, run in firsts.items()}
    return plan_renderable(plan, targets, lab_root, dict(sorted(measured.items())))


def dry_run(campaign: Campaign, lab_root: Path, confirmed_devices: frozenset[str] = frozenset(),
            force_device: bool = False) -> tuple[RenderableType, list[str]]:
    """`fslab run --dry-run`: (the plan as text, what would stop the campaign before it
    touched anything)."""
    from rich.console import Group

    problems: list[str] = []
    plan, targets = prepare(campaign, confirmed_devices=confirmed_devices,
                            force_device=force_device, problems=problems)
    need = campaign_need(plan.runs, targets)  # the lab's disk against what it must hold
    if short := need.shortfall(lab_root):
        problems.append(short)
    return Group(plan_preview(plan, targets, lab_root), need.line(lab_root)), problems


def history_method() -> str:
    """How the history finds and tests a change, in one statement."""
    return method()


def load_campaign(path: Path | None, overrides: Overrides) -> Campaign:
    """A campaign from a file (or none) and the flags that override it, resolved and
    checked (plan/loading.py)."""
    return loading.load_campaign(path, overrides)


def cleanup(lab: Lab | None = None) -> CleanupReport:
    """Release what killed fslab sessions left behind (mounts, loop devices, images)."""
    return (lab or Lab()).cleanup()
