"""What a campaign's runs cost in machine time, and how much of it measured.

Every run records the seconds of its steps (run.json `steps`, core/stopwatch.py); the
share that measures is the campaign's runs' measuring seconds over the seconds of all
runs, those of the participants beside the targets (the disk's ceiling, in a results
directory of its own inside this one) included: they are paid for the same answers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from fslab.core.stopwatch import MEASURE, ORDER
from fslab.core.units import format_duration
from fslab.results.format_history import FORMAT
from fslab.results.store import ResultsDir

# How the summary names the steps (in the order of ORDER, the measuring itself apart).
WORDS = {"provision": "making targets", "mkfs": "mkfs", "mount": "mount",
         "space": "waiting for space", "probe": "probes", "layout": "laying out files",
         "cache_drop": "cache drops", "fio_start": "fio starting", "ramp": "ramps",
         "record": "parsing", "teardown": "teardown", "harness": "fslab itself"}


@dataclass(frozen=True)
class MachineTime:
    """The seconds of a campaign's runs by step, and of the runs beside its targets."""

    steps: dict[str, float] = field(default_factory=dict)  # the campaign's runs
    beside: dict[str, float] = field(default_factory=dict)  # participants' runs, by name

    @property
    def total_s(self) -> float:
        return sum(self.steps.values()) + sum(self.beside.values())

    @property
    def measured_s(self) -> float:
        return self.steps.get(MEASURE, 0.0)

    @property
    def share(self) -> float:
        """The share of the runs' machine time that measured (nan without runs)."""
        return self.measured_s / self.total_s if self.total_s else float("nan")

    def line(self) -> str:
        """'Machine time: 7 min 17 s of runs, 2 min 30 s measuring (34 %); ...'."""
        rest = [(WORDS.get(name, name), seconds) for name, seconds in
                sorted(self.steps.items(), key=lambda item: -item[1])
                if name != MEASURE and seconds >= 0.5]
        rest += [(f"the runs in {name}/ beside the targets", seconds)
                 for name, seconds in self.beside.items() if seconds >= 0.5]
        rest.sort(key=lambda item: -item[1])
        text = (f"Machine time: {format_duration(self.total_s)} of runs, "
                f"{format_duration(self.measured_s)} measuring ({100 * self.share:.0f} %)")
        if rest:
            text += "; the rest " + ", ".join(f"{words} {format_duration(seconds)}"
                                              for words, seconds in rest)
        return text


def machine_time(results: ResultsDir) -> MachineTime | None:
    """The machine time of a results directory's runs; None when no run recorded steps
    (an import, or results older than step timing)."""
    steps = _summed(results)
    if not steps:
        return None
    beside = {}
    for path in sorted(results.path.iterdir()):
        if path.is_dir() and (path / FORMAT.marker).exists():
            seconds = sum(_summed(ResultsDir.open(Path(path))).values())
            if seconds:
                beside[path.name] = seconds
    ordered = {name: steps[name] for name in [*ORDER, *sorted(set(steps) - set(ORDER))]
               if name in steps}
    return MachineTime(ordered, beside)


def _summed(results: ResultsDir) -> dict[str, float]:
    found: dict[str, float] = {}
    for record in results.run_records():
        for name, seconds in record.steps.items():
            found[name] = found.get(name, 0.0) + seconds
    return found
