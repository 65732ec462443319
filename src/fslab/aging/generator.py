"""The operation sequence: a pure function of the seed and the configuration.

Every decision that defines the workload (which operation, which file, what size, which
offset, whether to sync) comes from one seeded generator and never from the state of the
file system, so the same seed and configuration always give the same sequence: its hash
is recorded, and a run can be reproduced or compared.
"""

from __future__ import annotations

import bisect
import hashlib
import math
import random
import struct
from collections.abc import Iterator
from dataclasses import dataclass

from fslab.aging.config import OPS, AgingConfig

_RECORD = struct.Struct("<BIIQdB")  # what the sequence hash covers, per operation


@dataclass(frozen=True, slots=True)
class Op:
    """One planned operation."""

    code: int  # index into OPS
    file: int
    other: int  # rename target
    size: int
    fraction: float  # offset or truncation point as a share of the file
    sync: int  # 0 none, 1 fsync, 2 fdatasync


class OpGenerator:
    """Yields the planned operations; `digest` hashes every one yielded so far."""

    def __init__(self, config: AgingConfig) -> None:
        self.config = config
        self.rng = random.Random(config.seed)
        names = [op for op in OPS if config.mix.get(op, 0) > 0]
        weights = [config.mix[op] for op in names]
        total = sum(weights)
        self.codes = [OPS.index(op) for op in names]
        self.cumulative = [sum(weights[: i + 1]) / total for i in range(len(weights))]
        self.hash = hashlib.sha256()
        self.count = 0

    def __iter__(self) -> Iterator[Op]:
        return self

    def __next__(self) -> Op:
        rng, config = self.rng, self.config
        code = self.codes[min(bisect.bisect_right(self.cumulative, rng.random()),
                              len(self.codes) - 1)]
        file, other = self._file(), self._file()
        roll = rng.random()
        sync = 1 if roll < config.fsync_probability else (
            2 if roll < config.fsync_probability + config.fdatasync_probability else 0)
        op = Op(code, file, other, self._size(), rng.random(), sync)
        self.count += 1
        self.hash.update(_RECORD.pack(code, file, other, op.size, op.fraction, sync))
        return op

    @property
    def digest(self) -> str:
        return self.hash.hexdigest()

    def _file(self) -> int:
        config = self.config
        if config.file_choice == "uniform":
            return int(self.rng.random() * config.max_files)
        if config.file_choice == "sequential":
            return self.count % config.max_files
        centre = config.center * config.max_files + config.velocity * self.count
        index = int(self.rng.gauss(centre, config.stddev * config.max_files))
        return index % config.max_files  # the working set wraps around the file space

    def _size(self) -> int:
        config, rng = self.config, self.rng
        if config.sizes == "fixed":
            return config.size
        if config.sizes == "uniform":
            return rng.randint(config.size, config.size_max)
        value = math.exp(rng.gauss(config.mu, config.sigma))
        if config.pareto_alpha and value > math.exp(config.mu):
            value = math.exp(config.mu) * rng.paretovariate(config.pareto_alpha)
        return max(1, min(int(value), config.size_max))
