"""The null workload: returns known numbers instantly, to test the harness itself."""

from __future__ import annotations

import json
import random
import time
from dataclasses import dataclass
from pathlib import Path

from fslab.metrics import Measurement
from fslab.workloads.base import RunOutput, Where


@dataclass
class NullWorkload:
    """Reports iops = `iops` ± `jitter` (seeded by the run directory name)."""

    name: str = "null"
    family: str = "null"
    iops: float = 1000.0
    jitter: float = 0.0
    sleep_s: float = 0.0
    fail: bool = False
    measures_host_cpu: bool = False  # known numbers only: no system-wide CPU row

    def check(self) -> None:
        return None

    def required_bytes(self) -> int:
        return 0

    def render(self, where: Where) -> dict[str, str]:
        return {"null.json": json.dumps({"iops": self.iops, "directory": str(where.directory)})}

    def run(self, where: Where, run_dir: Path) -> RunOutput:
        if self.sleep_s:
            time.sleep(self.sleep_s)
        if self.fail:
            return RunOutput(status="failed", reason="null workload asked to fail")
        rng = random.Random(run_dir.name)
        value = self.iops + rng.uniform(-self.jitter, self.jitter)
        (run_dir / "null.json").write_text(json.dumps({"iops": value}))
        return RunOutput(measurements=self.parse(run_dir))

    def parse(self, run_dir: Path) -> list[Measurement]:
        value = json.loads((run_dir / "null.json").read_text())["iops"]
        return [Measurement("read", "iops", value)]
