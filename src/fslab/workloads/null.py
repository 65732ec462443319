"""The null workload and the simulator: known numbers, instantly, to test the harness and
the statistics. No I/O is done.

`NullWorkload(iops, jitter)` reports iops ± jitter (seeded by the run's name): the
harness tests' fixed numbers. With `cv` or `drift` it is the simulator (`preset =
"null"`): each run's value is log-normal with arithmetic mean `iops × scale` (the
target's `scale`, read from the simulated target's directory) and coefficient of
variation `cv`, times a log-normal factor of mean 1 and CV `drift` that every target of
one iteration and job shares (and every variant of a swept job: they run in the same
rounds). Draws are keyed by (seed, iteration, job,
target), so a
campaign's values do not depend on the order it ran in, the same seed gives the same
values and another seed independent ones. A sitting is a seed (SITTING_SPAN: a tune's
stages are one): with `sitting` each target's level, with `effect_sitting` each entry of
its `effects` table, is drawn once per sitting, so what holds next time has known truth.

A plug-in of fslab's own (core/plugins.py): the module declares the simulator's suite
(SUITE) and the kind that parses the record a run writes (KIND).
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from fslab.core import stopwatch
from fslab.core.errors import UserError
from fslab.core.metrics import Measurement
from fslab.parsers.raw_files import Parsed, RawFiles, RawKind, named, read_json
from fslab.parsers.raw_names import LOG_AVG_MS
from fslab.targets.null import SIMULATOR_FILE  # the null target writes it
from fslab.workloads.base import Capabilities, RunOutput, Where, Workload
from fslab.workloads.fio import is_fio_option
from fslab.workloads.provenance import Param, fslab
from fslab.workloads.suites import Suite, only_keys, picked

if TYPE_CHECKING:
    import numpy as np


LATENCY_P50, LATENCY_P99 = 0.9, 3.0  # percentiles as multiples of the mean latency
INTERVAL_S = 0.1  # the simulated log's interval (fio's log_avg_msec, LOG_AVG_MS)
NULL_RECORD = "null.json"  # a run's value (and latency), and the simulated target's name
# The simulator's own options; any other is a level with an effect only through the
# target's effects table. `tag`: any value, ignored: a factor known to have no effect.
KEYS = frozenset({"jobs", "iops", "cv", "drift", "tag", "sleep", "latency", "depth",
                  "lat_cv", "between", "within", "fixed_s", "sitting", "machine", "host",
                  "effect_sitting"})
# Seeds equal modulo SITTING_SPAN are one sitting of the simulator: its levels (`sitting`)
# and its option effects (`effect_sitting`) are drawn from the seed's remainder, every
# other draw from the whole seed. A campaign's seed is one sitting; a run made of several
# campaigns in one sitting (a tune's screen, race and confirmation: tune/measure.py) runs
# part k under seed + k·SITTING_SPAN, fresh noise each, one sitting's effects for all.
SITTING_SPAN = 2 ** 40


def sitting_of(seed: int) -> int:
    """The simulator's sitting a seed belongs to (SITTING_SPAN)."""
    return seed % SITTING_SPAN


@dataclass
class NullWorkload(Capabilities):
    """Reports iops = `iops` ± `jitter`, or simulated values with `cv` / `drift`."""

    name: str = "null"
    family: str = "null"
    iops: float = 1000.0
    jitter: float = 0.0
    sleep_s: float = 0.0
    fail: bool = False
    cv: float = 0.0
    drift: float = 0.0
    seed: int = 0
    latency: bool = False  # report completion latency (module doc)
    depth: float = 1.0  # I/Os in flight (Little's law: mean latency = depth / IOPS)
    lat_cv: float | None = None  # the percentiles' own spread (None: cv)
    between: float = 0.0  # spread between fresh file systems (log scale, as a CV)
    within: float = 0.0  # spread within a run, of one second's mean
    fixed_s: float = 0.0  # virtual seconds a run costs beside measuring
    runtime: float = 0.0  # virtual seconds a run measures (the campaign's runtime)
    job: str = ""  # the job a swept variant is of (its draws share the job's drift)
    sitting: float = 0.0  # log-scale SD of each target's level per sitting (per seed)
    machine: float = 0.0  # the same per simulated host (`host`)
    host: str = ""  # the simulated host (its level is drawn from its name, not the seed)
    effect_sitting: float = 0.0  # log-scale SD of each entry of `effects` per sitting
    # Options beyond the simulator's own (a swept fio option: iodepth=16): they change
    # nothing but through the target's effects table ("iodepth=16" = 1.4).
    levels: dict[str, str] = field(default_factory=dict)
    measures_host_cpu: ClassVar[bool] = False  # known numbers only: no system-wide CPU
    drops_caches: ClassVar[bool] = False  # no I/O: nothing to drop
    PRIMARY: ClassVar[str] = "iops"

    @property
    def watched(self) -> bool:  # type: ignore[override]
        """A draw takes no time and no machine: only a run that sleeps has a witness
        (the tests of the witness hold the runner so)."""
        return self.sleep_s > 0

    def check(self) -> None:
        return None

    def required_bytes(self) -> int:
        return 0

    def render(self, where: Where) -> dict[str, str]:
        return {NULL_RECORD: json.dumps({"iops": self.iops, "cv": self.cv,
                                         "drift": self.drift, "seed": self.seed,
                                         "directory": str(where.directory)})}

    def run(self, where: Where, run_dir: Path) -> RunOutput:
        if self.sleep_s:
            time.sleep(self.sleep_s)
        if self.fail:
            return RunOutput(status="failed", reason="null workload asked to fail")
        target = _simulated_target(where)
        latency: dict[str, float] = {}
        if self.components or self.cv or self.drift:
            value = (self._components(run_name=run_dir.name, target=target, run_dir=run_dir)
                     if self.components else self._simulated(run_dir.name, target))
            if self.latency:
                latency = self._latency(run_dir.name, target, value)
        else:
            rng = random.Random(run_dir.name)
            value = (self.iops + rng.uniform(-self.jitter, self.jitter)) * target.scale
        (run_dir / NULL_RECORD).write_text(json.dumps({"iops": value, **latency,
                                                       **target.to_json()}))
        return RunOutput()

    def _simulated(self, run_name: str, target: Simulated) -> float:
        iteration = int(run_name[1:4]) if run_name[:1] == "i" and run_name[1:4].isdigit() else 0
        import numpy as np  # here: a plan that builds workloads does not load numpy

        job = self.job or self.name
        shared = np.random.default_rng([self.seed, iteration, _key(job)])
        own = np.random.default_rng([self.seed, iteration, _key(self.name),
                                     _key(target.name)])
        factor = _lognormal(shared, 1.0, self.drift)
        truth = self.iops * target.scale * self.effect(target) * self.level(target)
        return _lognormal(own, truth, self.cv * self.effect(target, "cv_effects")) * factor

    def level(self, target: Simulated) -> float:
        """This sitting's and this host's factor of the target's level on this job:
        exp(N(0, sitting)) drawn from the seed (a sitting is a campaign seed), exp(N(0,
        machine)) from the host's name (the same in every sitting on it). The truth a
        pool estimates is the scale's ratio: both factors have a log mean of 0."""
        import numpy as np

        job, name = _key(self.job or self.name), _key(target.name)
        out = 1.0
        if self.sitting:
            rng = np.random.default_rng([sitting_of(self.seed), job, name, _key("sitting")])
            out *= math.exp(rng.normal(0, self.sitting))
        if self.machine:
            rng = np.random.default_rng([_key(self.host), job, name, _key("machine")])
            out *= math.exp(rng.normal(0, self.machine))
        return out

    @property
    def components(self) -> bool:
        """Whether the noise is drawn as variance components (module doc)."""
        return bool(self.between or self.within)

    def _components(self, run_name: str, target: Simulated, run_dir: Path) -> float:
        """A run's value from its file system's luck and its intervals' noise, its log
        written as fio writes one, its virtual machine time counted (module doc)."""
        import numpy as np

        iteration = int(run_name[1:4]) if run_name[:1] == "i" and run_name[1:4].isdigit() else 0
        job = self.job or self.name
        luck = np.random.default_rng([self.seed, iteration, _key(self.name),
                                      _key(target.name), _key("between")])
        moments = np.random.default_rng([self.seed, iteration, _key(self.name),
                                         _key(target.name), _key("within")])
        shared = np.random.default_rng([self.seed, iteration, _key(job)])
        truth = self.iops * target.scale * self.effect(target) * self.level(target)
        count = max(1, round(self.runtime / INTERVAL_S))
        sigma = math.sqrt(math.log1p(self.within ** 2 / INTERVAL_S))  # one interval's
        level = _lognormal(luck, truth, self.between) * _lognormal(shared, 1.0, self.drift)
        intervals = level * np.exp(moments.normal(-sigma * sigma / 2, sigma, count))
        (run_dir / "fio-log_iops.1.log").write_text("".join(
            f"{(i + 1) * LOG_AVG_MS}, {v:.3f}, 0, 0, 0\n" for i, v in enumerate(intervals)))
        stopwatch.add(stopwatch.PROVISION, self.fixed_s)
        stopwatch.add(stopwatch.MEASURE, count * INTERVAL_S)
        return float(intervals.mean())

    def effect(self, target: Simulated, table: str = "effects") -> float:
        """The product of the target's effects (or `table`'s: latency_effects, cv_effects)
        whose options are all present (effect); the target's level of `age` is a level.
        With `effect_sitting`, each entry of `effects` is this sitting's draw of it."""
        levels = {**self.levels, "age": target.age_level} if target.age_level else \
            self.levels
        effects = target.tables()[table]
        if table == "effects" and self.effect_sitting:
            effects = self.sitting_effects(effects)
        return effect(effects, target.mount_options, target.mkfs_options, levels)

    def sitting_effects(self, effects: dict[str, float]) -> dict[str, float]:
        """Each entry of `effects` as this sitting draws it: its log plus a normal deviate
        of SD `effect_sitting`, drawn from the sitting (sitting_of the seed), the job and
        the entry's key — the same in every configuration and stage of the sitting, the
        entry's log mean its truth on average (what a pool of sittings estimates)."""
        import numpy as np

        job = _key(self.job or self.name)
        out = {}
        for key, ratio in effects.items():
            rng = np.random.default_rng([sitting_of(self.seed), job, _key(key),
                                         _key("effect_sitting")])
            out[key] = float(ratio) * math.exp(rng.normal(0.0, self.effect_sitting))
        return out

    def _latency(self, run_name: str, target: Simulated, iops: float) -> dict[str, float]:
        """Completion latency in ns consistent with `iops` (module doc)."""
        import numpy as np

        iteration = int(run_name[1:4]) if run_name[:1] == "i" and run_name[1:4].isdigit() else 0
        rng = np.random.default_rng([self.seed, iteration, _key(self.name),
                                     _key(target.name), _key("latency")])
        mean = self.depth / max(iops, 1e-9) * 1e9 * self.effect(target, "latency_effects")
        spread = self.cv if self.lat_cv is None else self.lat_cv
        return {"clat_mean_ns": mean,
                "clat_p50_ns": _lognormal(rng, mean * LATENCY_P50, spread),
                "clat_p99_ns": _lognormal(rng, mean * LATENCY_P99, spread)}


def effect(effects: dict[str, float], mount_options: str, mkfs_options: tuple[str, ...],
           levels: dict[str, str]) -> float:
    """The true ratio a configuration has: the product of every effect whose key is
    present — a mount option as written ("noatime", "commit=60"), mkfs options in order
    ("-I 128"), a workload's option or the target's age as name=level ("iodepth=16",
    "age=thesis-80") — and "a+b" when all its parts are."""
    mounted = {part.strip() for part in mount_options.split(",") if part.strip()}
    options = {f"{name}={level}" for name, level in levels.items()}

    def present(key: str) -> bool:
        words = key.split()
        made = any(tuple(mkfs_options[i:i + len(words)]) == tuple(words)
                   for i in range(len(mkfs_options) - len(words) + 1)) if words else False
        return key in mounted or key in options or made

    out = 1.0
    for key, ratio in effects.items():
        if all(present(part.strip()) for part in key.split("+")):
            out *= float(ratio)
    return out


def simulated_jobs(options: dict[str, Any], seed: int, runtime: float = 0.0
                   ) -> list[NullWorkload]:
    """The simulator's jobs w1..wN (the `null` suite); options it does not know of (a
    fio option a sweep or tuner varies) are the jobs' levels; `runtime`: the seconds a
    run measures where its noise is drawn as variance components."""
    jobs = int(options.get("jobs", 1))
    cv, drift = float(options.get("cv", 0.10)), float(options.get("drift", 0.0))
    iops = float(options.get("iops", 1000))
    between, within = float(options.get("between", 0.0)), float(options.get("within", 0.0))
    fixed = float(options.get("fixed_s", 0.0))
    sitting, machine = float(options.get("sitting", 0.0)), float(options.get("machine", 0.0))
    effect_sitting = float(options.get("effect_sitting", 0.0))
    if (jobs < 1 or cv < 0 or drift < 0 or iops <= 0 or not (cv or drift or between or within)
            or min(between, within, fixed, sitting, machine, effect_sitting) < 0):
        raise UserError("null: jobs ≥ 1, iops > 0, cv, drift, between, within, fixed_s, "
                        "sitting, machine and effect_sitting ≥ 0, the spreads not all 0")
    levels = {str(k): str(v) for k, v in options.items() if k not in KEYS}
    sleep = float(options.get("sleep", 0.0))  # seconds a run takes (tests of kills)
    depth = float(options.get("depth", 1.0))
    lat_cv = float(options["lat_cv"]) if "lat_cv" in options else None
    return [NullWorkload(f"w{i}", iops=iops, cv=cv, drift=drift, seed=seed, job=f"w{i}",
                         levels=levels, sleep_s=sleep, latency=bool(options.get("latency")),
                         depth=depth, lat_cv=lat_cv, between=between, within=within,
                         fixed_s=fixed, runtime=float(runtime), sitting=sitting,
                         machine=machine, host=str(options.get("host", "")),
                         effect_sitting=effect_sitting)
            for i in range(1, jobs + 1)]


def _lognormal(rng: np.random.Generator, mean: float, cv: float) -> float:
    """One log-normal draw with this arithmetic mean and coefficient of variation."""
    if not cv:
        return mean
    sigma = math.sqrt(math.log1p(cv * cv))
    return float(mean * math.exp(rng.normal(-sigma * sigma / 2, sigma)))


def _key(text: str) -> int:
    """A stable 64-bit key for a name (Python's hash() changes between processes)."""
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")


@dataclass(frozen=True)
class Simulated:
    """The simulated target a run is on (the null target writes it: SIMULATOR_FILE): its
    name, its scale, its options and its effects tables."""

    name: str = ""
    scale: float = 1.0
    mount_options: str = ""
    mkfs_options: tuple[str, ...] = ()
    effects: dict[str, float] = field(default_factory=dict)
    latency_effects: dict[str, float] = field(default_factory=dict)
    cv_effects: dict[str, float] = field(default_factory=dict)
    age_level: str = ""  # its level of `age` (a level of its effects: "age=thesis-80")

    def tables(self) -> dict[str, dict[str, float]]:
        """Its effects tables by name: on the level, the latency and the spread (CV)."""
        return {"effects": self.effects, "latency_effects": self.latency_effects,
                "cv_effects": self.cv_effects}

    def to_json(self) -> dict[str, object]:
        return {"name": self.name, "scale": self.scale, "mount_options": self.mount_options,
                "mkfs_options": list(self.mkfs_options), **self.tables(),
                "age_level": self.age_level}


def _simulated_target(where: Where) -> Simulated:
    """The simulated target's name and scale (1 on any other target)."""
    if where.directory is not None:
        path = where.directory.parent / SIMULATOR_FILE
        if path.exists():
            data = json.loads(path.read_text())
            latency, spread = ({str(k): float(v) for k, v in (data.get(table) or {}).items()}
                               for table in ("latency_effects", "cv_effects"))
            return Simulated(str(data.get("name", "")), float(data.get("scale", 1.0)),
                             str(data.get("mount_options") or ""),
                             tuple(str(o) for o in data.get("mkfs_options") or ()),
                             {str(k): float(v) for k, v in (data.get("effects") or {}).items()},
                             latency, spread, str(data.get("age_level") or ""))
    return Simulated(where.directory.parent.name if where.directory else "")


def _parse(files: RawFiles) -> Parsed:
    record = read_json(files, NULL_RECORD)
    latency = [Measurement("read", name, record[name]) for name in
               ("clat_mean_ns", "clat_p50_ns", "clat_p99_ns") if name in record]
    return Parsed("null", [Measurement("read", "iops", record["iops"]), *latency])


def _names(options: dict[str, Any]) -> list[str]:
    return [f"w{i}" for i in range(1, int(options.get("jobs", 1)) + 1)]


def _build(only: list[str], runtime: int, file_size: int,
           options: dict[str, Any], seed: int, published: bool) -> list[Workload]:
    only_keys({k: v for k, v in options.items() if not is_fio_option(k)}, KEYS, "null")
    return picked(only, list[Workload](simulated_jobs(options, seed, runtime)))


_SIMULATOR = fslab("the simulator: known truth for checking the statistics")
SUITE = Suite(
    "null",
    "The simulator: no I/O; each job w1..wN is an independent question whose values "
    "are log-normal with mean iops × the target's `scale` and coefficient of variation "
    "cv, times a factor shared by every target within an iteration and job (CV drift); "
    "the campaign's seed makes the draws; `tag` is ignored (a factor known to have no "
    "effect, for checking sweeps); `latency = true` adds completion latency for `depth` "
    "I/Os in flight (Little's law), its percentiles with their own spread `lat_cv`, "
    "times the target's latency_effects. With `between` (the spread between fresh file "
    "systems), `within` (within a run, for one second of measuring) and `fixed_s` "
    "(seconds a run costs beside measuring), a run of `runtime` seconds draws its file "
    "system's luck and a 100 ms log of the run like fio's, and counts virtual machine "
    "time. `sitting`: the log-scale SD of each target's level per sitting (a sitting is a "
    "campaign seed; a tune's stages are one sitting); `effect_sitting`: the log-scale SD "
    "of each entry of the target's `effects` per sitting (an option's effect that moves "
    "between sittings); `machine`: the same per simulated host, `host` its name (a "
    "campaign of the simulator records it as its sitting's host). A whole campaign runs in "
    "about a second.",
    None,
    {"w1": {"jobs": Param(1, _SIMULATOR), "iops": Param(1000, _SIMULATOR),
            "cv": Param(0.10, _SIMULATOR), "drift": Param(0.0, _SIMULATOR)}},
    {"w1": 1}, _build, options="jobs, iops, cv, drift, latency, depth, lat_cv, "
    "between, within, fixed_s, sitting, effect_sitting, machine, host, tag (ignored: a "
    "factor without effect), any fio option "
    "(an effect only through the target's effects table)",
    names=_names, keys=KEYS, fio_levels=True)
KIND = RawKind("null", "", named(NULL_RECORD), _parse)
