"""Every command as a plain Python function (the CLI is a thin layer over these)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from fslab.campaign import MAX_FILL, Campaign, Overrides, load_campaign
from fslab.errors import UserError
from fslab.lab import CleanupReport, Lab
from fslab.plan import Plan, make_plan
from fslab.runner import NoProgress, Progress, Runner, RunnerResult, build_targets
from fslab.store import ResultsDir
from fslab.targets import IMAGE_LESS, Target
from fslab.units import format_bytes

if TYPE_CHECKING:
    import pandas as pd


@dataclass
class RunResult:
    """What `run` produced: where the results are, and how the runs went."""

    results: ResultsDir
    runner: RunnerResult
    summary: Any = None  # pandas DataFrame of the per-cell summary


def prepare(
    campaign: Campaign,
    *,
    confirmed_devices: frozenset[str] = frozenset(),
    force_device: bool = False,
    problems: list[str] | None = None,
) -> tuple[Plan, dict[str, Target]]:
    """Plan a campaign and check every target and workload, touching nothing.

    Each problem raises a UserError, or is appended to `problems` when a list is given
    (a dry run shows the plan and what would stop it).
    """
    plan = make_plan(campaign)
    targets = build_targets(plan, confirmed_devices, force_device)
    checks = [target.check for target in targets.values()]
    checks += list({run.workload.name: run.workload.check for run in plan.runs}.values())
    checks.append(lambda: _check_space(plan))
    for check in checks:
        try:
            check()
        except UserError as exc:
            if problems is None:
                raise
            problems.append(str(exc))
    return plan, targets


def run(
    campaign: Campaign,
    *,
    out: Path | None = None,
    lab: Lab | None = None,
    resume: bool = False,
    confirmed_devices: frozenset[str] = frozenset(),
    force_device: bool = False,
    progress: Progress | None = None,
) -> RunResult:
    """Run a campaign into a results directory (new, or continued with resume=True)."""
    out = Path(out or campaign.out or default_out(campaign))
    plan, targets = prepare(campaign, confirmed_devices=confirmed_devices,
                            force_device=force_device)
    lab = lab or Lab()
    if resume:
        results = ResultsDir.open(out)
    else:
        results = ResultsDir.create(out)
        results.write_campaign(campaign.to_dict())
    from fslab.environment import capture

    environment = capture(lab.root)
    environment["targets"] = {name: t.describe() for name, t in targets.items()}
    results.write_environment(environment)
    runner = Runner(plan, results, lab, targets, progress or NoProgress())
    outcome = runner.execute()
    return RunResult(results, outcome, analyze(out))


def resume_campaign(out: Path) -> Campaign:
    """The campaign saved in a results directory, for `--resume`."""
    results = ResultsDir.open(out)
    if not results.campaign_path().exists():
        raise UserError(f"{out} has no campaign.toml to resume")
    return load_campaign(results.campaign_path(), Overrides(out=str(out)))


def analyze(results_dir: Path) -> pd.DataFrame:
    """Analyse a results directory; write DIR/stats/ and return the per-cell summary.

    Writes summary.csv (per cell), tests.csv (the omnibus test per workload × op × metric
    and why it was chosen), pairwise.csv (post-hoc pairs with effect sizes) and
    verdicts.txt (the findings in words).
    """
    return _analysis(ResultsDir.open(Path(results_dir))).summary


@dataclass
class Analysis:
    """Everything `analyze` computes, for reporters."""

    metrics: Any
    summary: Any
    tests: Any
    pairwise: Any
    verdicts: list[str]


def _analysis(results: ResultsDir) -> Analysis:
    from fslab.analysis.comparisons import compare_targets
    from fslab.analysis.summary import summarize
    from fslab.analysis.verdicts import verdicts
    from fslab.store import write_atomic

    metrics = results.load_metrics()
    summary = summarize(metrics)
    tests, pairs = compare_targets(metrics)
    results.stats_dir.mkdir(exist_ok=True)
    write_atomic(results.stats_dir / "summary.csv", summary.to_csv(index=False))
    write_atomic(results.stats_dir / "tests.csv", tests.to_csv(index=False))
    write_atomic(results.stats_dir / "pairwise.csv", pairs.to_csv(index=False))
    lines = verdicts(summary, tests, pairs)
    write_atomic(results.stats_dir / "verdicts.txt", "\n".join(lines) + "\n")
    return Analysis(metrics, summary, tests, pairs, lines)


def report(results_dir: Path, output: Path | None = None) -> Path:
    """Write the self-contained HTML report of a results directory; return its path."""
    import tomllib

    from fslab.report.html import build_report
    from fslab.store import write_atomic

    results = ResultsDir.open(Path(results_dir))
    done = _analysis(results)
    campaign_path = results.campaign_path()
    campaign = tomllib.loads(campaign_path.read_text()) if campaign_path.exists() else {}
    page = build_report(results.path, done.summary, done.tests, done.pairwise, done.verdicts,
                        done.metrics, results.load_runs(), results.environment(), campaign,
                        list(results.run_records()))
    output = Path(output or results.path / "report.html")
    write_atomic(output, page)
    return output


def load(results_dir: Path) -> pd.DataFrame:
    """The metrics table of a results directory as a pandas DataFrame."""
    return ResultsDir.open(Path(results_dir)).load_metrics()


def runs(results_dir: Path) -> pd.DataFrame:
    """One row per finished run, with its status and reason."""
    return ResultsDir.open(Path(results_dir)).load_runs()


def cleanup(lab: Lab | None = None) -> CleanupReport:
    """Release what killed fslab sessions left behind (mounts, loop devices, images)."""
    return (lab or Lab()).cleanup()


def default_out(campaign: Campaign) -> Path:
    return Path("results") / f"{campaign.name}-{time.strftime('%Y%m%d-%H%M%S')}"


def _check_space(plan: Plan) -> None:
    """Refuse, before formatting anything, a workload whose files cannot fit an image."""
    checked: set[tuple[str, str]] = set()
    for run in plan.runs:
        key = (run.target.name, run.workload.name)
        if key in checked or run.target.fs in IMAGE_LESS or run.target.device:
            continue
        checked.add(key)
        need = run.workload.required_bytes()
        room = int(run.target.size * MAX_FILL)
        if need > room:
            raise UserError(
                f"workload {run.workload.name} needs {format_bytes(need)} but target "
                f"{run.target.name} ({format_bytes(run.target.size)} image) leaves about "
                f"{format_bytes(room)} for files: raise --size or lower --file-size"
            )
