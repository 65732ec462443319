"""Every named suite a campaign can ask for: what a suite is, fio's presets, and the one
lookup (`suites`) that adds the suites fslab's other workloads and a user's plug-ins
declare."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fslab.core.errors import UserError
from fslab.core.plugins import declared
from fslab.workloads.base import Workload
from fslab.workloads.fio import is_fio_option
from fslab.workloads.fio.presets import PRESETS, Preset, job_numjobs, preset_workloads
from fslab.workloads.provenance import STUDIES, Param, Published
from fslab.workloads.published import PUBLISHED

# (jobs wanted, runtime s, file size, the [[workload]] options, the campaign's seed,
# whether the campaign runs at the study's published scale)
Builder = Callable[[list[str], int, int, dict[str, Any], int, bool], list[Workload]]
Parameters = dict[str, dict[str, Param]]  # job -> parameter -> value and source


@dataclass(frozen=True)
class Suite:
    """A named group of workloads, listed by `fslab presets`."""

    name: str
    description: str
    study: str | None  # a key of provenance.STUDIES; None: fslab's own
    parameters: Parameters  # every job's parameters, each with its source
    numjobs: dict[str, int]
    build: Builder
    options: str = ""  # the options a [[workload]] table may set
    # The job names a [[workload]] table with these options expands to (a suite whose
    # jobs depend on its options, like the simulator's `jobs = N`); default: `jobs`.
    names: Callable[[dict[str, Any]], list[str]] | None = None
    # The option names a [[workload]] table (and a sweep) may set; None: any fio option.
    keys: frozenset[str] | None = None
    # Whether fio options are levels too (the simulator: its effects table gives them a
    # known effect, so a sweep or tuner of fio options can be checked against truth).
    fio_levels: bool = False

    def takes(self, option: str) -> bool:
        """Whether `option` is one of this suite's options (a fio suite: any fio option)."""
        if self.keys is None or (self.fio_levels and is_fio_option(option)):
            return is_fio_option(option)
        return option in self.keys

    @property
    def jobs(self) -> list[str]:
        return list(self.parameters)

    @property
    def source(self) -> str:
        """One line: the study, or fslab's own."""
        return STUDIES[self.study].cite if self.study else "fslab's own"

    @property
    def published(self) -> Published | None:
        """The suite at its study's own scale (None: fslab's own, no published scale)."""
        return PUBLISHED.get(self.name)

    def job_names(self, options: dict[str, Any] | None = None) -> list[str]:
        """Every job this suite runs with `options`."""
        return self.names(options or {}) if self.names else self.jobs

    def numjobs_of(self, job: str) -> int:
        """The processes a job runs (1 for jobs not listed, e.g. generated ones)."""
        return self.numjobs.get(job, 1)

    def to_json(self) -> dict[str, object]:
        """The suite for `fslab presets --json`: every parameter with its source."""
        published = self.published
        return {
            "name": self.name, "description": self.description, "study": self.study,
            "cite": self.source, "options": self.options,
            "jobs": {job: {key: param.to_json() for key, param in params.items()}
                     for job, params in self.parameters.items()},
            "published": published.to_json() if published else None,
        }


def _fio_suite(preset: Preset) -> Suite:
    def build(only: list[str], runtime: int, file_size: int,
              options: dict[str, Any], seed: int, published: bool) -> list[Workload]:
        spec = PUBLISHED.get(preset.name) if published else None
        job_options = {job: {key: param.value for key, param in values.items()}
                       for job, values in (spec.sections or {}).items()} if spec else None
        return list(preset_workloads(preset, only=only, runtime=runtime,
                                     file_size=file_size, overrides=options,
                                     job_options=job_options))

    return Suite(preset.name, preset.description, preset.study,
                 {job: preset.parameters(job) for job in preset.jobs},
                 {name: job_numjobs(preset, name) for name in preset.jobs}, build,
                 options="any fio option (applied to [global])")


def picked(only: list[str], workloads: list[Workload]) -> list[Workload]:
    """The workloads a [[workload]] table asked for (`only`: its job names)."""
    return [w for w in workloads if w.name in only]


def only_keys(options: dict[str, Any], allowed: frozenset[str], suite: str) -> None:
    """Refuse, in one line, an option the suite does not take."""
    unknown = sorted(set(options) - allowed)
    if unknown:
        raise UserError(f"{suite}: unknown option {', '.join(unknown)} "
                        f"(allowed: {', '.join(sorted(allowed))})")


# fio's presets; fslab's other workloads each declare their suite in their own module
# (SUITE: core/plugins.py), which imports Suite from here: so this module imports none.
FIO_SUITES: dict[str, Suite] = {name: _fio_suite(preset) for name, preset in PRESETS.items()}


def _checked(suites: dict[str, Suite]) -> dict[str, Suite]:
    """The registry, checked once at load (as the target registry is): every suite lists
    the process count of each of its jobs, and no job name holds "/" (it separates a
    job from its fio section in metrics: metrics.observation_workload)."""
    for name, suite in suites.items():
        if name != suite.name or set(suite.jobs) != set(suite.numjobs):
            raise AssertionError(f"suite {name}: jobs and numjobs name other jobs")
        if any("/" in job or count < 1 for job, count in suite.numjobs.items()):
            raise AssertionError(f"suite {name}: a job name with '/' or numjobs < 1")
    return suites


FIO_SUITES = _checked(FIO_SUITES)


def suites() -> dict[str, Suite]:
    """Every suite: fio's presets, then the plug-ins' (core/plugins.py: SUITE; fslab's own
    workloads first, then a user's), checked as fio's are; no two may share a name."""
    added: dict[str, Suite] = {}
    for suite in declared("SUITE", of=Suite):
        if suite.name in FIO_SUITES or suite.name in added:
            raise UserError(f"a plug-in's suite {suite.name!r} has the name of another suite "
                            "(fslab's own or a plug-in's)")
        added[suite.name] = suite
    return {**FIO_SUITES, **_checked(added)}


def get_suite(name: str) -> Suite:
    """Return a suite by name, or raise a one-line UserError listing the known ones."""
    known = suites()
    try:
        return known[name]
    except KeyError:
        raise UserError(f"unknown preset {name!r}: known presets: {', '.join(known)}") from None
