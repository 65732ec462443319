"""The runs table (ResultsDir.load_runs): one row per finished run, failed ones included.

Its columns: who ran what (run_id, iteration, target, fs, workload, and one column per
factor of a sweep), how it went (status; failure, the kind of a failure; reason, for
people; tool_said, a refusing tool's own words), whether caches were dropped before it,
the scale, what the witness saw (fslab/host/witness.py), fio's steadiness, why a fio job
was measured whole rather than in interleaved slices (measured_whole), and its time:
machine_s (the seconds it had the machine: its steps added up), measured_s (of them,
measuring) and wall_s (from its start to its record; a sliced run's spans the other
targets' slices).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from fslab.core.record import RunRecord
from fslab.results.legacy_failures import legacy_failure

KEYS = ("run_id", "iteration", "target", "fs", "workload", "status", "failure", "reason",
        "tool_said", "caches_dropped", "scale")
SEEN = ("others_cpu_pct", "steal_pct", "psi_memory_pct", "other_io_bytes_s")
LATER = ("disturbed", *SEEN, "disturbed_by", "outcome", "steady", "unsteady_because",
         "measured_whole", "machine_s", "measured_s", "wall_s")


def runs_table(found: Iterable[RunRecord], index: Path) -> Any:
    """The runs table of a results directory's records, as a pandas DataFrame (without
    records, from `index`: an import of format 2 wrote one instead of runs)."""
    import pandas as pd

    records = list(found)
    rows = [{**{k: getattr(record, k) for k in KEYS}, "disturbed": record.disturbed,
             **{k: getattr(record.witness, k) if record.witness.seen else None
                for k in SEEN},
             "disturbed_by": "; ".join(record.witness.reasons),
             "outcome": record.workload_metadata.outcome,
             "steady": record.steady, "unsteady_because": record.unsteady_because,
             "measured_whole": record.workload_metadata.whole_because,
             "machine_s": record.machine_s, "measured_s": record.measured_s,
             "wall_s": max(0.0, record.finished - record.started),
             **record.levels}
            for record in records]
    factors = tuple(dict.fromkeys(k for record in records for k in record.levels))
    keys = [*KEYS, *LATER, *factors]
    if not rows and index.exists():
        table = pd.read_csv(index, keep_default_na=False)
        kinds = [legacy_failure(str(status), str(reason)) for status, reason in
                 zip(table["status"], table["reason"], strict=True)]
        return table.assign(
            failure=[str(kind or "") for kind, _ in kinds],
            tool_said=[said for _, said in kinds], caches_dropped=False, scale="",
            outcome="", steady=None, unsteady_because="", measured_whole="", machine_s=0.0,
            measured_s=0.0, wall_s=0.0)[keys]
    return pd.DataFrame(rows, columns=keys)
