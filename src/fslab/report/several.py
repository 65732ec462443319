"""Several results directories seen as one (`fslab report A B ...`): two campaigns, two
aging runs (80 % against 99 % utilisation, ext4 against xfs), before and after a change.

Each directory's targets keep their rows, labelled by the directory they came from (the
directory's name alone when it holds one target, as an aging run does; else
"<directory>:<target>"). Iterations of different directories are not blocks of each
other: each directory's are moved by ITERATION_STRIDE × its place, so a pair within one
directory is still compared within its iterations and a pair across two never is.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import pandas as pd

from fslab.analysis.pipeline import Inputs, inputs_of
from fslab.core.campaign_settings import CampaignSettings
from fslab.core.environment_record import ByIteration, Environment
from fslab.report.data import ResultsSource
from fslab.results.store import ResultsDir

ITERATION_STRIDE = 1000  # the second directory's iteration 1 is 1001, the third's 2001


def several(directories: list[ResultsDir]) -> tuple[list[ResultsSource], Inputs]:
    """Each directory as a labelled ResultsSource, and their analysis inputs as one campaign
    (see the module doc). Directory labels are their names, numbered where two share one."""
    names = [d.path.name for d in directories]
    labelled: list[ResultsSource] = []
    metrics, records = [], []
    environment = Environment()
    for number, results in enumerate(directories):
        name = names[number]
        label = name if names.count(name) == 1 else f"{name} ({number + 1})"
        inputs = inputs_of(results)
        targets = sorted({record.target for record in inputs.records})
        label_of = {t: label if len(targets) == 1 else f"{label}:{t}" for t in targets}
        labelled.append(ResultsSource(results.path, label, label_of, inputs.settings,
                               inputs.environment))
        shift = number * ITERATION_STRIDE
        frame = inputs.metrics.astype({"target": str, "run_id": str})
        frame["target"] = frame["target"].map(lambda t, names=label_of: names.get(t, t))
        frame["run_id"] = label + "/" + frame["run_id"]
        frame["iteration"] = frame["iteration"].astype(int) + shift
        metrics.append(frame)
        records += [dataclasses.replace(
            r, target=label_of.get(r.target, r.target), run_id=f"{label}/{r.run_id}",
            iteration=r.iteration + shift) for r in inputs.records]
        env = inputs.environment
        environment.targets.update({label_of.get(name, name): info
                                    for name, info in env.targets.items()})
        _merge(environment.ceilings, env.ceilings)
        _merge(environment.ceilings_by_iteration, _shifted(env.ceilings_by_iteration, shift))
        environment.imported = environment.imported or env.imported
        environment.memory_bytes = environment.memory_bytes or env.memory_bytes
    primaries = {s.campaign.primary for s in labelled}
    settings = CampaignSettings(name=" + ".join(s.label for s in labelled),
                                primary=primaries.pop() if len(primaries) == 1 else ())
    return labelled, Inputs(pd.concat(metrics, ignore_index=True), records, environment,
                            settings)


def run_tables(directories: list[ResultsDir], labelled: list[ResultsSource]) -> pd.DataFrame:
    """Every directory's runs table (ResultsDir.load_runs), labelled as `several` labels
    its rows."""
    tables = []
    for results, source in zip(directories, labelled, strict=True):
        runs = results.load_runs()
        runs["target"] = runs["target"].map(lambda t, s=source: s.targets.get(t, t))
        runs["run_id"] = source.label + "/" + runs["run_id"].astype(str)
        tables.append(runs)
    return pd.concat(tables, ignore_index=True)


def _merge(into: dict[str, Any], more: Mapping[str, Any]) -> None:
    for key, value in more.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = value


def _shifted(by_iteration: ByIteration, shift: int) -> ByIteration:
    """ceilings_by_iteration ({workload: {op: {metric: {iteration: value}}}}) with its
    iterations moved by `shift`."""
    return {workload: {op: {metric: {str(int(i) + shift): v for i, v in values.items()}
                            for metric, values in metrics.items()}
                       for op, metrics in ops.items()}
            for workload, ops in by_iteration.items()}
