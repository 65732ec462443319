"""A Measure with known truth, without campaigns: each configuration's value in a round is
its true ratio times noise, drawn as the simulator draws (workloads/null.py) and more
(a heavy tail, a drift across rounds), keyed by (seed, stage, round, configuration) so a
stage measured again gives the same values. For the benchmarks and tests that run a tune's
stages hundreds of times (benchmarks/tune_race, benchmarks/tune_vs_search); the
simulator target itself is the end-to-end check."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from fslab.core.metrics import HIGHER
from fslab.tune.measure import Question, StageData
from fslab.tune.space import Config


@dataclass
class SimulatedMeasure:
    """Values of `truth(config)` × noise: log-normal of coefficient of variation `cv`
    times `cv_effects(config)` (a configuration's own spread: 2 doubles its CV), or log-t
    of `tail_df` degrees of freedom with the same scale, times a factor every
    configuration of a round shares (log-normal, `drift`) and a trend of `trend` per
    round (log scale). With `latency`, each configuration's p99 completion latency in
    ns is `latency(config)` with its own noise of `cv`."""

    truth: Callable[[Config], float]
    cv: float = 0.10
    seed: int = 0
    drift: float = 0.0
    trend: float = 0.0
    tail_df: float = 0.0
    latency: Callable[[Config], float] | None = None
    cv_effects: Callable[[Config], float] | None = None
    better: str = HIGHER
    runs: int = 0
    seen: dict[str, dict[Config, dict[int, float]]] = field(default_factory=dict)
    seen_latency: dict[str, dict[Config, dict[int, float]]] = field(default_factory=dict)

    def __call__(self, stage: str, rounds: range, configs: Sequence[Config]) -> StageData:
        values = self.seen.setdefault(stage, {})
        latencies = self.seen_latency.setdefault(stage, {})
        for r in rounds:
            shared = self._draw(stage, r, ())
            for config in configs:
                if r in values.get(config, {}):
                    continue
                self.runs += 1
                noise = self._noise(stage, r, config, self._cv(config))
                values.setdefault(config, {})[r] = (self.truth(config) * math.exp(
                    noise + shared * self.drift + self.trend * r))
                if self.latency is not None:
                    own = self._noise(stage, r, (*config, -1), self.cv)
                    latencies.setdefault(config, {})[r] = self.latency(config) * math.exp(own)
        bounded = {"clat_p99_ns": {c: dict(v) for c, v in latencies.items()}} \
            if self.latency is not None else {}
        return StageData(Question("sim", "w1", "read", "iops", self.better),
                        {c: dict(v) for c, v in values.items()}, bounded)

    def _draw(self, stage: str, number: int, config: tuple[int, ...]) -> float:
        return float(_rng(self.seed, stage, number, "shared", config).normal())

    def _cv(self, config: Config) -> float:
        return self.cv * (self.cv_effects(config) if self.cv_effects is not None else 1.0)

    def _noise(self, stage: str, number: int, config: tuple[int, ...], cv: float) -> float:
        """A log-scale draw with mean 0 on the ratio scale's log (log-normal: −σ²/2)."""
        sigma = math.sqrt(math.log1p(cv * cv))
        rng = _rng(self.seed, stage, number, "own", config)
        if self.tail_df:
            scale = sigma * math.sqrt((self.tail_df - 2) / self.tail_df)
            return float(rng.standard_t(self.tail_df)) * scale
        return float(rng.normal(-sigma * sigma / 2, sigma))


def _rng(*key: object) -> np.random.Generator:
    """A generator of its own for each key, by a hash of the key's text (small integer
    seeds of similar lists gave draws correlated enough to show in a coverage check)."""
    digest = hashlib.blake2b(repr(key).encode(), digest_size=16).digest()
    return np.random.default_rng(int.from_bytes(digest, "little"))
