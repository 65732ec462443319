"""The operation sequence: a pure function of the seed and the configuration.

Every decision that defines the workload (which operation, which file, what size, which
offset, whether to sync) comes from one seeded generator and never from the state of the
file system, so the same seed and configuration always give the same sequence; its
SHA-256 is recorded, and a run can be reproduced or compared. Operations are drawn in
vectorised batches (numpy), which keeps the engine's own cost per operation small.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from fslab.aging.config import OPS, AgingConfig

BATCH = 4096


@dataclass
class Batch:
    """The next BATCH planned operations, as parallel lists."""

    codes: list[int]  # index into OPS
    files: list[int]
    others: list[int]  # rename targets
    sizes: list[int]
    fractions: list[float]  # offset or truncation point as a share of the file
    syncs: list[int]  # 0 none, 1 fsync, 2 fdatasync


class OpGenerator:
    """Yields batches of planned operations; `digest` hashes every one drawn so far."""

    def __init__(self, config: AgingConfig) -> None:
        self.config = config
        self.rng = np.random.default_rng(config.seed)
        names = [op for op in OPS if config.mix.get(op, 0) > 0]
        weights = np.array([config.mix[op] for op in names], dtype=float)
        self.codes = np.array([OPS.index(op) for op in names], dtype=np.int64)
        self.cumulative = np.cumsum(weights) / weights.sum()
        self.hash = hashlib.sha256()
        self.count = 0
        self.syncing = config.fsync_probability > 0 or config.fdatasync_probability > 0

    def next_batch(self, size: int = BATCH) -> Batch:
        config, rng = self.config, self.rng
        picks = np.searchsorted(self.cumulative, rng.random(size), side="right")
        codes = self.codes[np.minimum(picks, len(self.codes) - 1)]
        files = self._files(size)
        fractions = rng.random(size)
        # One draw serves as the offset share (reads, writes, truncate) and the rename
        # target: an operation uses one or the other, never both.
        others = (fractions * config.max_files).astype(np.int64)
        sizes = self._sizes(size)
        syncs = np.zeros(size, dtype=np.int64)
        if self.syncing:  # no draw when nothing syncs: the sequence stays the same
            roll = rng.random(size)
            syncs[roll < config.fsync_probability + config.fdatasync_probability] = 2
            syncs[roll < config.fsync_probability] = 1
        for array in (codes, files, others, sizes, fractions, syncs):
            self.hash.update(np.ascontiguousarray(array).tobytes())
        self.count += size
        return Batch(codes.tolist(), files.tolist(), others.tolist(), sizes.tolist(),
                     fractions.tolist(), syncs.tolist())

    @property
    def digest(self) -> str:
        return self.hash.hexdigest()

    def _files(self, size: int) -> np.ndarray:
        config = self.config
        if config.file_choice == "uniform":
            return self.rng.integers(0, config.max_files, size)
        if config.file_choice == "sequential":
            return (self.count + np.arange(size)) % config.max_files
        centre = config.center * config.max_files + config.velocity * (
            self.count + np.arange(size))
        drawn = self.rng.normal(centre, config.stddev * config.max_files)
        return np.floor(drawn).astype(np.int64) % config.max_files  # wraps around

    def _sizes(self, size: int) -> np.ndarray:
        config, rng = self.config, self.rng
        if config.sizes == "fixed":
            return np.full(size, config.size, dtype=np.int64)
        if config.sizes == "uniform":
            return rng.integers(config.size, config.size_max + 1, size)
        values = np.exp(rng.normal(config.mu, config.sigma, size))
        if config.pareto_alpha:
            median = np.exp(config.mu)
            tail = median * (rng.pareto(config.pareto_alpha, size) + 1.0)
            values = np.where(values > median, tail, values)
        return np.clip(values, 1, config.size_max).astype(np.int64)
