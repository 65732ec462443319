"""The host's CPU share over a run, sampled by the runner (`host_cpu.json`), as rows.

Derived at parse time from the run's own rows: per completed I/O when the workload
counted its I/Os. Results from before the file existed kept the sample in run.json.
"""

from __future__ import annotations

from fslab.core.metrics import Measurement
from fslab.parsers.raw_files import Addition, RawFiles, read_json
from fslab.parsers.raw_names import HOST_CPU

RUN_JSON = "run.json"  # store.RUN_RECORD (parsers sit below the store)


def host_cpu_rows(pct: float, seconds: float,
                  measurements: list[Measurement]) -> list[Measurement]:
    """The host's CPU share for a run with one observation, and per completed I/O when the
    workload counted its I/Os; none when the run holds several observations (sections
    that ran one after the other share the span, which belongs to none of them alone)."""
    if pct != pct or len({m.section for m in measurements}) > 1:
        return []
    out = [Measurement("total", "host_cpu_pct", pct)]
    ios = sum(m.value for m in measurements if m.metric == "ios" and not m.host)
    if ios:
        out.append(Measurement("total", "host_cpu_ns_per_io", seconds * 1e9 / ios))
    return out


def _add(files: RawFiles, measurements: list[Measurement]) -> list[Measurement]:
    names = files.names()
    if HOST_CPU in names:
        seen = read_json(files, HOST_CPU)
    elif RUN_JSON in names:  # results written before host_cpu.json
        seen = read_json(files, RUN_JSON).get("workload_metadata", {}).get("host_cpu")
    else:
        return []
    if not isinstance(seen, dict):
        return []
    return host_cpu_rows(float(seen.get("pct_of_one_core", "nan")),
                         float(seen.get("busy_seconds", "nan")), measurements)


ADDITION = Addition("host_cpu", _add)
