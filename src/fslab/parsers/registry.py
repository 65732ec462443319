"""Parse is a stage: one registry of the raw outputs fslab reads, one `parse_run`.

Each kind of raw output (a run's fio JSON or its slices, an aging run's op log and
probes, the records fslab's other workloads write, and files imported from elsewhere) is
a `RawKind`: a detector that looks at a run's raw files and a pure parser that turns them
into measurements and the metadata derived from them. The runner, `fslab reparse` and
`fslab import` all call `parse_run`, so a corrected parser reaches old results. fio's
kinds, the aging run's and the imported files' are in `KINDS`; a workload with a tool of
its own declares its kind in its module (`KIND`, read through core/plugins.py), so a new
one is that module and one line in the plug-ins' table.

After the kind's own rows, each of `ADDITIONS` adds what it derives from another raw file
of the run and those rows (the host's CPU share the runner sampled, per I/O of the run).
"""

from __future__ import annotations

from fslab.core.plugins import declared
from fslab.parsers import aging_kind, fio_kinds, host_cpu, imported_kinds
from fslab.parsers.raw_files import Addition, Parsed, RawFiles, RawKind, RawOutputError

# The first kind whose detector claims a run's files parses them: a run's own outputs by
# their names first, then a file imported from elsewhere by its content.
KINDS: list[RawKind] = [
    fio_kinds.FIO,
    aging_kind.AGING,
    fio_kinds.IMPORTED_FIO,
    imported_kinds.IMPORTED_DD,
    imported_kinds.IMPORTED_BONNIE,
]
ADDITIONS: list[Addition] = [host_cpu.ADDITION]


def kinds() -> list[RawKind]:
    """KINDS with the plug-ins' (core/plugins.py: fslab's own workloads, then a user's)
    after the kinds of a run's own outputs and before the detectors of imported files,
    which look at content."""
    own = [kind for kind in KINDS if not kind.name.startswith("imported")]
    return [*own, *declared("KIND", of=RawKind), *(k for k in KINDS if k not in own)]


def parse_run(files: RawFiles) -> Parsed:
    """The run's measurements, parsed by the first kind that claims its raw files."""
    for kind in kinds():
        if kind.detect(files):
            try:
                parsed = kind.parse(files)
                for addition in ADDITIONS:
                    parsed.measurements += addition.add(files, parsed.measurements)
            except RawOutputError:
                raise  # a kind's own verdict on its output (a job's error, a lost host)
            except (OSError, ValueError, KeyError, TypeError, AttributeError,
                    IndexError) as exc:
                raise RawOutputError(f"{kind.describes or kind.name} unreadable: "
                                     f"{exc}") from exc
            return parsed
    raise RawOutputError("not " + _readable())


def _readable() -> str:
    names = [kind.describes for kind in kinds() if kind.describes]
    return ", ".join(names[:-1]) + " or " + names[-1] if len(names) > 1 else "".join(names)
