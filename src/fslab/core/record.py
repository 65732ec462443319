"""One run's record (run.json): who ran what where, how it went, and the rows it gave.

Written last, by rename, into `runs/<dir>/` beside the raw output it was parsed from; a
run counts as done only once it exists (store.py). Campaign runs and imported files have
the same record: an import's says where the file came from (`source`), what it was
(`kind`, `tool`) and which fields its path gave (`fields`), and the directory keeps a copy
of the file (packed: store.write_run_archive), so `fslab reparse` can parse either again.

`from_json` reads every record fslab has written (older ones lack keys: they get the
defaults) and keeps keys it does not know in `extra`, so a record read and written again
loses nothing.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from fslab.core.metrics import RowIdentity
from fslab.core.run_parts import TargetDescription, Witness, WorkloadMetadata
from fslab.core.stopwatch import MEASURE


@dataclass
class RunRecord:
    """The record of one finished run (or one imported file)."""

    run_id: str
    campaign: str = ""
    target: str = ""
    fs: str = ""
    fs_impl: str = ""
    workload: str = ""
    iteration: int = 0
    status: str = "ok"
    reason: str = ""
    position: int = 0
    family: str = ""
    started: float = 0.0
    finished: float = 0.0
    caches_dropped: bool = False
    scale: str = ""  # "quick" or "published" (the study's own scale); "": not recorded
    target_description: TargetDescription = field(default_factory=TargetDescription)
    workload_metadata: WorkloadMetadata = field(default_factory=WorkloadMetadata)
    metrics: list[dict[str, object]] = field(default_factory=list)
    # An imported file: its path under the import root, what it is, what its path said.
    source: str = ""
    kind: str = ""
    tool: str = ""
    fields: dict[str, str] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)
    archive: str = ""  # where it was read from when packed (store.write_run_archive)
    # What else the machine did while it measured (fslab/host/witness.py), with `disturbed`.
    witness: Witness = field(default_factory=Witness)
    # A swept cell's level of each factor (plan/sweep.py): columns of the metrics table.
    levels: dict[str, str] = field(default_factory=dict)
    # The cell as fields (core/cell_keys.py): the target as declared and the job; "" in
    # records written before results format 5 (then the target and workload themselves).
    target_base: str = ""
    job: str = ""
    # Why a failed run failed (core/failures.py: '' for a run that measured) and, where a
    # tool refused (mkfs, mount), its own words; "" in records before results format 6.
    failure: str = ""
    tool_said: str = ""
    # Seconds of each step of the run (core/stopwatch.py); a sliced run's slices summed.
    # Its wall time is finished - started (a sliced run's spans the other targets' slices).
    steps: dict[str, float] = field(default_factory=dict)

    @property
    def disturbed(self) -> bool:
        return self.witness.disturbed

    @property
    def steady(self) -> bool | None:
        """False when fio's per-interval logs showed a step or a trend (parsers/fio_logs.py);
        None when not judged."""
        return self.workload_metadata.steady

    @property
    def unsteady_because(self) -> str:
        return self.workload_metadata.unsteady_because

    @property
    def machine_s(self) -> float:
        """The seconds the run had the machine: its steps added up."""
        return sum(self.steps.values())

    @property
    def measured_s(self) -> float:
        """The seconds of it its workload measured."""
        return self.steps.get(MEASURE, 0.0)

    @property
    def imported(self) -> bool:
        return bool(self.source)

    def identity(self) -> RowIdentity:
        """The metrics columns every row of this run shares (metrics.add_rows): its
        identity, then one column per factor of a sweep."""
        description = self.target_description
        return RowIdentity(self.campaign, self.run_id, self.target,
                           self.fs or description.fs, self.fs_impl or description.fs_impl,
                           self.workload, self.iteration, self.target_base or self.target,
                           self.job or self.workload, dict(self.levels))

    def to_json(self) -> dict[str, object]:
        """The record as run.json holds it (an import's empty run-only keys left out)."""
        data = {f.name: getattr(self, f.name) for f in FIELDS if f.name not in NOT_SAVED}
        for name in PARTS:
            data[name] = data[name].to_json()
        if not self.imported:
            for name in IMPORT_ONLY:
                data.pop(name)
        return {**self.extra, **data}

    @classmethod
    def from_json(cls, data: object) -> RunRecord:
        """A record from run.json; ValueError when it is not one."""
        if not isinstance(data, dict) or not isinstance(data.get("run_id"), str):
            raise ValueError("not a run record (no run_id)")
        known = {f.name: f for f in FIELDS if f.name not in NOT_SAVED}
        values: dict[str, Any] = {}
        for name, value in data.items():
            spec = known.get(name)
            if spec is None or value is None:
                continue
            if name in PARTS:
                if not isinstance(value, dict):
                    raise ValueError(f"{name} is {type(value).__name__}, not dict")
                values[name] = PARTS[name].from_json(value)
                continue
            values[name] = _checked(name, value, spec.type)
        return cls(**values, extra={k: v for k, v in data.items() if k not in known})


FIELDS = dataclasses.fields(RunRecord)
# The parts that are records of their own (core/run_parts.py), by field.
PARTS: dict[str, type[TargetDescription] | type[WorkloadMetadata] | type[Witness]] = {
    "target_description": TargetDescription, "workload_metadata": WorkloadMetadata,
    "witness": Witness}
IMPORT_ONLY = ("source", "kind", "tool", "fields")
NOT_SAVED = ("extra", "archive")
_TYPES: dict[str, tuple[type, ...]] = {
    "str": (str,), "int": (int,), "float": (int, float), "bool": (bool,),
    "dict[str, str]": (dict,), "dict[str, float]": (dict,),
    "list[dict[str, object]]": (list,),
}


def _checked(name: str, value: Any, annotation: object) -> Any:
    """`value` if it has the field's type (an int is a float; a bool is not an int)."""
    wanted = _TYPES[str(annotation)]
    if isinstance(value, bool) and bool not in wanted:
        raise ValueError(f"{name} is {value!r}")
    if not isinstance(value, wanted):
        raise ValueError(f"{name} is {type(value).__name__}, not {wanted[0].__name__}")
    if isinstance(value, list):  # metrics: a damaged row is dropped, not the run
        return [row for row in value if isinstance(row, dict)]
    if str(annotation) == "dict[str, float]":  # steps: so is a step that is not seconds
        steps: Any = value  # a dict, checked above
        return {str(k): float(v) for k, v in steps.items()
                if isinstance(v, int | float) and not isinstance(v, bool)}
    number: Any = value  # an int or a float, checked above
    return float(number) if float in wanted else value
