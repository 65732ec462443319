"""Runs the witness saw disturbed (fslab/host/witness.py): a table and one sentence for the
verdicts, so a busy machine is named instead of passing for "no detectable difference"."""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd

from fslab.analysis.step import Step
from fslab.core.record import RunRecord

COLUMNS = ["run_id", "target", "workload", "iteration", "disturbed", "others_cpu_pct",
           "steal_pct", "psi_memory_pct", "other_io_bytes_s", "reasons", "measured_again"]

# What this step does, in one statement the report prints (stats/methods.csv).
METHOD = ("Machine: each run is watched (fslab/host/witness.py: other processes' CPU, stolen CPU, "
          "memory pressure, other I/O on the lab's disk); runs that crossed a threshold are "
          'named and can be measured again (fslab run --rerun-disturbed).')


def disturbance(records: Iterable[RunRecord]) -> pd.DataFrame:
    """One row per run that carries a witness (imports carry none)."""
    rows = []
    for record in records:
        seen = record.witness
        if not seen.seen:
            continue
        rows.append({"run_id": record.run_id, "target": record.target,
                     "workload": record.workload, "iteration": record.iteration,
                     "disturbed": seen.disturbed, "others_cpu_pct": seen.others_cpu_pct,
                     "steal_pct": seen.steal_pct, "psi_memory_pct": seen.psi_memory_pct,
                     "other_io_bytes_s": seen.other_io_bytes_s,
                     "reasons": "; ".join(seen.reasons),
                     "measured_again": seen.rerun_of is not None})
    return pd.DataFrame(rows, columns=COLUMNS)


def unsteady_note(records: Iterable[RunRecord]) -> str | None:
    """'2 of 75 runs were not steady — throughput stepped 0.48× after 1.5 s (…)', or None:
    a run whose throughput stepped or trended within its window (parsers/fio_logs.py)
    measured something other than one steady state, like a disturbed run."""
    judged = [r for r in records if r.steady is not None]
    unsteady = [r for r in judged if r.steady is False]
    if not unsteady:
        return None
    first = unsteady[0]
    return (f"Steadiness: {len(unsteady)} of {len(judged)} runs judged were not steady — "
            f"{first.unsteady_because} ({first.run_id}). Their values mix two states: "
            f"compare with care, or measure them again with fslab run --rerun-unsteady.")


def disturbance_note(table: pd.DataFrame) -> str | None:
    """'3 of 75 runs ran while other processes used 41 % of a CPU …', or None."""
    if table.empty:
        return None
    hit = table[table["disturbed"]]
    again = int(table["measured_again"].sum())
    redo = (f" {again} disturbed run{'s' * (again != 1)} were measured again." if again
            else "")
    if hit.empty:
        return f"Machine: quiet during all {len(table)} runs (fslab's witness).{redo}" \
            if again else None
    cpu = hit["others_cpu_pct"].astype(float)
    worst = hit.loc[cpu.idxmax()] if cpu.notna().any() else hit.iloc[0]
    return (f"Machine: {len(hit)} of {len(table)} runs ran while it was busy — "
            f"{worst['reasons']} (the worst, {worst['run_id']}). Their values include "
            f"that load, not only the file system: compare with care, or measure them "
            f"again with fslab run --rerun-disturbed.{redo}")


def _seen(records: list[RunRecord]) -> tuple[pd.DataFrame, list[str]]:
    """The witness's table, and the machine's notes for the verdicts' head."""
    table = disturbance(records)
    return table, [note for note in (disturbance_note(table), unsteady_note(records)) if note]


STEP = Step("disturbance", reads=("records",), makes=("disturbed", "machine_notes"),
            run=_seen, method=METHOD, tables={"disturbed": "disturbed.csv"},
            optional=frozenset({"disturbed"}))
