"""fio's own per-interval logs of a run (bandwidth, IOPS and completion latency, one
average every LOG_AVG_MS) as a tidy series, and whether the run was steady.

fslab asks fio for them on the command line (`log_args`): `<stem>_bw.<job>.log`,
`<stem>_iops.<job>.log` and `<stem>_clat.<job>.log` (and fio's slat/lat beside them), one
line per interval: time (ms after the ramp), value (KiB/s, IOPS, ns), direction (0 read,
1 write, 2 trim), …. The jobs of a run are summed per interval (latency: averaged); a
sliced run's slices follow each other in the order they ran.

Steady (a run measured in one piece, at least MIN_SAMPLES intervals), by two stated tests
on its throughput (the sum over directions, bandwidth):
- a step: the split of the series into a before and an after (each at least MIN_SIDE
  intervals) whose means differ most, by a factor of STEP_RATIO or more either way with
  Welch p < STEP_P — a throttle, a stall, a cache that filled;
- a trend, after the SNIA performance test specification's steady-state rule: the series
  in TREND_WINDOWS equal windows, the least-squares line through their means moves by
  TREND_CHANGE or more of their average across the run (a wider bound than SNIA's, see
  TREND_CHANGE).
A run measured in interleaved slices is not judged here (its slices sit between other
targets' on purpose; the rounds' spread is reported as the slices' CV instead).
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from dataclasses import dataclass
from typing import NamedTuple

from fslab.parsers.raw_files import RawFiles
from fslab.parsers.raw_names import LOG_AVG_MS

LOG = re.compile(r"(?P<stem>fio-(?:slice-(?P<slice>\d+)-)?log)_(?P<kind>bw|iops|clat)"
                 r"\.(?P<job>\d+)\.log$")
DIRECTIONS = {0: "read", 1: "write", 2: "trim"}
METRICS = {"bw": "bw_bytes", "iops": "iops", "clat": "clat_mean_ns"}

MIN_SAMPLES = 10  # a second of 100 ms intervals: fewer says nothing about a trend
MIN_SIDE = 3
# Up or down, a factor: above what idle runs do here. On a quiet host idle runs warm up
# or swing by up to 1.22x; on a busy one (the hypervisor stealing up to 68 % of a CPU,
# measured 2026-11-25) 40 idle 6 s runs of the default jobs, measured in one piece, stepped
# by up to 2.45x and trended by up to 76 % of their mean (11 more, marked at 30 %, stepped
# by 1.55-1.79x). A throttle's cliff is ~16x here.
# Softer disturbances (another process's CPU or I/O) are the witness's to see.
STEP_RATIO = 3.0
STEP_P = 0.001
TREND_WINDOWS = 5  # SNIA: a measurement window of five rounds
# SNIA's rule bounds the slope's excursion at 10 % and the data's at 20 % for long runs on
# a preconditioned device; short runs on a virtual disk move by up to 76 % of their mean
# across the run while idle (STEP_RATIO's measurement), so fslab flags a line that moves
# by its whole mean: from 1.5x to 0.5x of it, the step's factor of three.
TREND_CHANGE = 1.0


def job_sections(files: RawFiles) -> dict[int, str]:
    """{fio job number: its section} from the run's job file (fio numbers a section's
    clones one after another, sections in order); {} when the run has no job file."""
    if "job.fio" not in files.names():
        return {}
    sections: list[tuple[str, int]] = []
    shared = 1
    for raw in files.read("job.fio").decode(errors="replace").splitlines():
        line = raw.split(";", 1)[0].split("#", 1)[0].strip()
        if line.startswith("[") and line.endswith("]"):
            sections.append((line[1:-1].strip(), shared))
        elif line.replace(" ", "").startswith("numjobs=") and sections:
            count = int(line.split("=", 1)[1].strip() or 1)
            if sections[-1][0] == "global":
                shared = count
            sections[-1] = (sections[-1][0], count)
    numbers, job = {}, 1
    for name, count in sections:
        if name == "global":
            continue
        for _ in range(count):
            numbers[job] = name
            job += 1
    return numbers


def interval_rows(files: RawFiles, by_section: bool = False) -> list[IntervalRow]:
    """The run's series: {op, metric, t_s, value} rows, jobs combined per interval,
    slices one after another. `by_section`: each fio section's jobs apart (rows gain
    `section`): stonewalled sections each log from their own start, so combined they
    would mix one section's throughput with the next's."""
    logs: dict[tuple[int, str], dict[tuple[str, str], dict[int, list[float]]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(list)))
    sections = job_sections(files) if by_section else {}
    last: dict[tuple[str, int], int] = {}  # (log, direction): its last sample's interval
    for name in files.names():
        found = LOG.match(name)
        if not found:
            continue
        part = int(found["slice"]) if found["slice"] is not None else -1
        kind = found["kind"]
        for line in files.read(name).decode(errors="replace").splitlines():
            fields = [f.strip() for f in line.split(",")]
            if len(fields) < 3:
                continue
            try:
                at, value, direction = int(fields[0]), float(fields[1]), int(fields[2])
            except ValueError:
                continue
            # to the nearest interval, halves up (round() takes 350 and 450 ms both to 4),
            # and never the interval of this log's sample before: one job logs once per
            # interval, so two of its samples are never summed as if two jobs had run
            ordered = (name, direction)
            interval = max(1, (at + LOG_AVG_MS // 2) // LOG_AVG_MS, last.get(ordered, 0) + 1)
            last[ordered] = interval
            section = sections.get(int(found["job"]), "")
            logs[(part, section)][(DIRECTIONS.get(direction, "read"), kind)][interval].append(
                value)
    rows: list[IntervalRow] = []
    offsets: dict[str, int] = defaultdict(int)
    for part, section in sorted(logs):
        longest = 0
        for (op, kind), intervals in sorted(logs[(part, section)].items()):
            for interval, values in sorted(intervals.items()):
                combined = sum(values) if kind != "clat" else sum(values) / len(values)
                value = combined * 1024 if kind == "bw" else combined
                rows.append(IntervalRow(op, METRICS[kind],
                                        (offsets[section] + interval) * LOG_AVG_MS / 1000,
                                        value, section))
                longest = max(longest, interval)
        offsets[section] += longest
    return rows


class IntervalRow(NamedTuple):
    """One interval of a run's per-interval logs: its jobs combined (bandwidth in bytes/s,
    IOPS, mean completion latency in ns), at `t_s` seconds into the run, and the fio
    section whose jobs logged it ('' when sections were not told apart)."""

    op: str
    metric: str
    t_s: float
    value: float
    section: str = ""


@dataclass(frozen=True)
class Steadiness:
    """Whether a run's throughput held still, and if not, why (a sentence)."""

    steady: bool | None  # None: not judged (sliced, or too short)
    reason: str

    def to_json(self) -> dict[str, object]:
        return {"steady": self.steady, "reason": self.reason}


def throughput(rows: list[IntervalRow]) -> list[float]:
    """Bandwidth summed over directions, per interval, in time order."""
    per: dict[float, float] = defaultdict(float)
    for row in rows:
        if row.metric == "bw_bytes":
            per[row.t_s] += row.value
    return [per[t] for t in sorted(per)]


def judge_sections(rows: list[IntervalRow], sliced: bool = False) -> Steadiness:
    """judge() on each section's throughput (interval_rows(by_section=True)): the run is
    unsteady when one of its sections is, and the reason names it."""
    names = list(dict.fromkeys(row.section for row in rows))
    verdicts = {name: judge(throughput([r for r in rows if r.section == name]),
                            sliced) for name in names}
    for name, verdict in verdicts.items():
        if verdict.steady is False:
            return Steadiness(False, f"{name}: {verdict.reason}" if len(names) > 1
                              else verdict.reason)
    judged = [v for v in verdicts.values() if v.steady]
    if judged:
        return Steadiness(True, "")
    return next(iter(verdicts.values()), Steadiness(None, "no intervals"))


def judge(values: list[float], sliced: bool = False) -> Steadiness:
    """The step and trend tests of the module docstring on a throughput series."""
    if sliced:
        return Steadiness(None, "measured in interleaved slices: judged by their spread")
    if len(values) < MIN_SAMPLES:
        return Steadiness(None, f"{len(values)} intervals of {LOG_AVG_MS} ms: too short "
                                "to judge")
    step = _step(values)
    if step:
        return Steadiness(False, step)
    trend = _trend(values)
    if trend:
        return Steadiness(False, trend)
    return Steadiness(True, "")


def _step(values: list[float]) -> str:
    best, where = 0.0, 0
    for split in range(MIN_SIDE, len(values) - MIN_SIDE + 1):
        mean_before = sum(values[:split]) / split
        mean_after = sum(values[split:]) / (len(values) - split)
        if mean_before > 0 and mean_after > 0:
            change = abs(math.log(mean_after / mean_before))
            if change > best:
                best, where = change, split
    if not where or math.exp(best) < STEP_RATIO:
        return ""
    before, after = values[:where], values[where:]
    p = _welch_p(before, after)
    if not p < STEP_P:
        return ""
    mean_before, mean_after = sum(before) / len(before), sum(after) / len(after)
    return (f"throughput stepped {mean_after / mean_before:.2f}× after "
            f"{where * LOG_AVG_MS / 1000:.1f} s (a factor of {STEP_RATIO:g} or more at "
            f"p < {STEP_P})")


def _trend(values: list[float]) -> str:
    size = len(values) // TREND_WINDOWS
    means = [sum(values[i * size:(i + 1) * size]) / size for i in range(TREND_WINDOWS)]
    average = sum(means) / len(means)
    if average <= 0:
        return ""
    centre = (TREND_WINDOWS - 1) / 2
    slope = (sum((i - centre) * (m - average) for i, m in enumerate(means))
             / sum((i - centre) ** 2 for i in range(TREND_WINDOWS)))
    moved = slope * (TREND_WINDOWS - 1) / average
    if abs(moved) < TREND_CHANGE:
        return ""
    return (f"throughput trended {moved:+.0%} across the run (SNIA rule: under "
            f"{TREND_CHANGE:.0%} over {TREND_WINDOWS} windows)")


def _welch_p(a: list[float], b: list[float]) -> float:
    """Welch's two-sided p (as scipy.stats.ttest_ind(equal_var=False), held to it by a
    test), from scipy.special: scipy.stats costs two seconds to import in every run."""
    from scipy.special import stdtr

    va = sum((x - sum(a) / len(a)) ** 2 for x in a) / (len(a) - 1)
    vb = sum((x - sum(b) / len(b)) ** 2 for x in b) / (len(b) - 1)
    se2 = va / len(a) + vb / len(b)
    if se2 <= 0:
        return 0.0 if sum(a) / len(a) != sum(b) / len(b) else 1.0
    t = (sum(a) / len(a) - sum(b) / len(b)) / math.sqrt(se2)
    df = se2 ** 2 / ((va / len(a)) ** 2 / (len(a) - 1) + (vb / len(b)) ** 2 / (len(b) - 1)) \
        if va + vb > 0 else len(a) + len(b) - 2.0
    return float(2 * stdtr(df, -abs(t)))
