"""fio JSON (and json+) -> Measurements, done the way studies often fail to.

Rules:
- Jobs are grouped the way fio reports them: the clones of one section (`numjobs`) are
  ONE observation, keyed by (groupid, jobname); IOPS and bandwidth are summed over them,
  latency means are weighted by each job's completed I/Os. Different sections are
  different observations (a stonewalled sequential read and a random read are never
  added up). Jobs fio itself grouped (`group_reporting`) arrive as one entry per group
  and stay one observation.
- A `total` op is formed within an observation only: its jobs ran at the same time.
- Percentiles of several jobs are computed from their merged json+ histogram bins, the
  same way fio merges them for group_reporting; without bins they are not invented.
- Values in ns and bytes/s; fio before 3.0 reported latency in µs (`clat`, `lat`) and
  bandwidth in KiB/s (`bw`): converted.
- Text around the JSON (`fio: ...` warnings, blank lines) is tolerated.
- A job run with `continue_on_error` finished despite its errors: fio counts the failed
  I/Os in `total_ios` and its IOPS, but not in `io_bytes` or the latency samples. The
  failed ones are taken out (a rate counts operations that did something) and counted as
  the `errors` metric; such a job is not a failed run.
- fio's bandwidth and IOPS statistics over its samples (min, max, stddev; every
  `bw_avg_time`) describe one fio entry: kept when an observation is one entry (one job,
  or a group fio reported as one), never combined across clones.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeGuard

from fslab.core.metrics import Measurement, cpu_measurements
from fslab.parsers.fio_json import (
    DIRECTIONS,
    LATENCY_KINDS,
    Direction,
    DirectionStats,
    FioJob,
    FioResult,
)
from fslab.parsers.fio_latency import latency, percentiles, pooled_stddev, weighted_mean
from fslab.parsers.fio_load import FioParseError


def job_errors(data: FioResult) -> list[str]:
    """Return 'jobname: error N' for every job fio reports as failed (a job that went on
    past its errors, `continue_on_error`, finished: its errors are a metric)."""
    jobs = data.get("jobs") or data.get("client_stats") or []
    return [f"{job.get('jobname', '?')}: error {job['error']}" for job in jobs
            if isinstance(job, dict) and job.get("error") and "total_err" not in job]


ALL_CLIENTS = "All clients"


def parse_fio(data: FioResult) -> list[Measurement]:
    """Every observation of one fio result (see the module's rules), as measurements.

    A result with one observation leaves `section` empty; with several, each
    measurement carries its section's name. Client/server output (`client_stats`) gives
    one row set per host (host = its name) and per observation the aggregate over all
    hosts (host = "All clients"), which is the observation.
    """
    try:
        return _parse(data)
    except (AttributeError, TypeError, KeyError, ValueError, IndexError) as exc:
        if isinstance(exc, FioParseError):
            raise
        raise FioParseError(f"unexpected fio JSON structure ({type(exc).__name__}: "
                            f"{exc})") from None


def _parse(data: FioResult) -> list[Measurement]:
    out: list[Measurement] = []
    if "jobs" in data:
        for section, members in group_jobs(_job_list(data["jobs"])).items():
            out += aggregate_jobs(members, "", section)
        return out
    jobs = [job for job in _job_list(data.get("client_stats"))
            if job.get("jobname") != ALL_CLIENTS]
    if not jobs:
        raise FioParseError("fio result holds no jobs")
    by_host: dict[str, list[FioJob]] = {}
    for job in jobs:
        by_host.setdefault(host_name(job), []).append(job)
    sections = group_jobs(jobs)
    for host, host_jobs in by_host.items():
        for section, members in group_jobs(host_jobs, names_from=sections).items():
            out += aggregate_jobs(members, host, section)
    for section, members in sections.items():
        out += aggregate_jobs(members, ALL_CLIENTS, section)
    return out


def host_name(job: FioJob) -> str:
    """A client/server job's host: its name, and its port when it has one (several servers
    may share an address, e.g. loopback ports)."""
    host = str(job.get("hostname", "?"))
    return f"{host}:{job['port']}" if job.get("port") else host


def _job_list(jobs: object) -> list[FioJob]:
    if not isinstance(jobs, list) or not jobs:
        raise FioParseError("fio result holds no jobs")
    if not all(isinstance(job, dict) for job in jobs):
        raise FioParseError("fio result: a job is not a JSON object")
    return jobs


def observation_key(job: FioJob) -> tuple[int, str]:
    """(groupid, jobname): the clones of one section share it; fio's groups keep theirs."""
    return int(job.get("groupid") or 0), str(job.get("jobname", ""))


def group_jobs(jobs: list[FioJob], names_from: dict[str, list[FioJob]] | None = None,
               ) -> dict[str, list[FioJob]]:
    """The observations among `jobs`: name -> its jobs, in fio's order.

    The name is the section (job) name; "" when there is only one observation. A name
    that two groups share gets its group: "name@g1". `names_from` names the groups the
    way an enclosing grouping did (client/server: a host's jobs as all hosts' are).
    """
    groups: dict[tuple[int, str], list[FioJob]] = {}
    for job in jobs:
        groups.setdefault(observation_key(job), []).append(job)
    if names_from is not None:
        known = {observation_key(members[0]): name for name, members in names_from.items()}
        return {known.get(key, key[1]): members for key, members in groups.items()}
    if len(groups) == 1:
        return {"": next(iter(groups.values()))}
    repeated = {name for _, name in groups if sum(1 for _, n in groups if n == name) > 1}
    return {(f"{name}@g{group}" if name in repeated else name): members
            for (group, name), members in groups.items()}


def observation_map(data: FioResult) -> dict[str, list[str]]:
    """Which jobs formed which observation ("jobname #index (group g)"), for run.json."""
    jobs = data.get("jobs") or [job for job in data.get("client_stats") or []
                                if job.get("jobname") != ALL_CLIENTS]
    index = {id(job): number for number, job in enumerate(jobs)}
    out: dict[str, list[str]] = {}
    for name, members in group_jobs(_job_list(jobs)).items():
        out[name or "(one observation)"] = [
            f"{job.get('jobname', '?')} #{index[id(job)]} (group {job.get('groupid', 0)}"
            + (f", {host_name(job)})" if "hostname" in job else ")") for job in members]
    return out


def clone_rows(data: FioResult) -> list[dict[str, object]]:
    """Each job fio reports (a clone of a section, or a group), with its own IOPS,
    bandwidth and mean completion latency per direction: kept in run.json beside the
    observation for studies that report threads one by one (never an observation)."""
    jobs = data.get("jobs") or []
    out = []
    for number, job in enumerate(jobs):
        if not isinstance(job, dict):
            continue
        row: dict[str, object] = {"job": f"{job.get('jobname', '?')} #{number}",
                               "group": int(job.get("groupid") or 0)}
        if "total_err" in job:
            row["errors"] = int(job["total_err"] or 0)
        for direction in DIRECTIONS:
            stats = _succeeded(job, direction)
            if isinstance(stats, dict) and _ios(stats) > 0:
                clat = latency(stats, "clat")
                row[direction] = {"iops": _iops(stats), "bw_bytes": _bw(stats),
                                  "clat_mean_ns": float(clat["mean"]) if clat else None,
                                  **{metric: number for metric, number
                                     in _sample_statistics(stats).items()}}
        out.append(row)
    return out


def aggregate_jobs(jobs: list[FioJob], host: str = "",
                   section: str = "") -> list[Measurement]:
    """Sum rates and weight latency means over the jobs of one observation, per direction."""
    out: list[Measurement] = []
    active = []
    ios = 0
    counted = [job for job in jobs if "total_err" in job]  # run with continue_on_error
    for direction in DIRECTIONS:
        stats = [s for s in (_succeeded(job, direction) for job in jobs) if _active(s)]
        if not stats:
            continue
        active.append(stats)
        ios += sum(_completed(s) for s in stats)
        out += _direction_measurements(direction, stats, host, section)
        if len(jobs) == 1:
            out += [Measurement(direction, metric, number, host, section=section)
                    for metric, number in _sample_statistics(stats[0]).items()]
        if counted:
            out.append(Measurement(direction, "errors", float(sum(
                int(s.get("failed_ios") or 0) for s in stats)), host, section=section))
    if counted:
        out.append(Measurement("total", "errors", float(sum(
            int(job["total_err"] or 0) for job in counted)), host, section=section))
    if len(active) > 1:  # the jobs of one observation ran at the same time
        out.append(Measurement("total", "iops", sum(_iops(s) for g in active for s in g),
                               host, section=section))
        out.append(Measurement("total", "bw_bytes", sum(_bw(s) for g in active for s in g),
                               host, section=section))
    usr, sys_, cpu_seconds = _cpu(jobs)
    out += cpu_measurements(usr, sys_, cpu_seconds, ios, host, section)
    return out


def _cpu(jobs: list[FioJob]) -> tuple[float, float, float | None]:
    """User and system CPU of an observation as % of one core, and its CPU-seconds.

    fio gives each job's usr_cpu/sys_cpu as % of one CPU over that job's runtime
    (`job_runtime`, ms). A group_reporting entry gives its jobs' average share and their
    summed runtime, so it stands for job_runtime / (its direction runtime) jobs. The
    observation's share is the sum over the jobs it stands for; its CPU-seconds are
    Σ share × job_runtime (None when fio did not give job_runtime: old versions).
    """
    usr = sys_ = 0.0
    seconds = 0.0
    for job in jobs:
        runtime_ms = float(job.get("job_runtime") or 0)
        wall_ms = max((float(job[d].get("runtime") or 0) for d in DIRECTIONS
                       if isinstance(job.get(d), dict)), default=0.0)
        stands_for = max(1, round(runtime_ms / wall_ms)) if wall_ms else 1
        job_usr, job_sys = float(job.get("usr_cpu") or 0), float(job.get("sys_cpu") or 0)
        usr += job_usr * stands_for
        sys_ += job_sys * stands_for
        seconds += (job_usr + job_sys) / 100 * runtime_ms / 1000
    return usr, sys_, seconds if seconds > 0 else None


def _direction_measurements(
    op: str, stats: list[DirectionStats], host: str, section: str
) -> list[Measurement]:
    # Measurements built positionally and each latency block looked up once: an import
    # of 10^4 files spends most of its time here and in the JSON parser.
    iops = bw = 0.0
    io_bytes = 0
    for s in stats:
        iops += _iops(s)
        bw += _bw(s)
        io_bytes += _io_bytes(s)
    out = [Measurement(op, "iops", iops, host, 0, "", section),
           Measurement(op, "bw_bytes", bw, host, 0, "", section),
           Measurement(op, "io_bytes", float(io_bytes), host, 0, "", section)]
    blocks = {kind: [latency(s, kind) for s in stats] for kind in LATENCY_KINDS}
    for kind, found in blocks.items():
        mean = weighted_mean(found)
        if mean is not None:
            out.append(Measurement(op, f"{kind}_mean_ns", mean, host, 0, "", section))
    for kind, found in blocks.items():  # min, max and the spread over every I/O
        sampled = [b for b in found if b and b.get("N")]
        if sampled:
            out.append(Measurement(op, f"{kind}_max_ns", float(max(b["max"] for b in sampled)),
                                   host, 0, "", section))
            out.append(Measurement(op, f"{kind}_min_ns", float(min(b["min"] for b in sampled)),
                                   host, 0, "", section))
            spread = pooled_stddev(sampled)
            if spread is not None:
                out.append(Measurement(op, f"{kind}_stddev_ns", spread, host, 0, "", section))
    out += [Measurement(op, metric, number, host, 0, "", section)
            for metric, number in percentiles(blocks["clat"]).items()]
    return out


def _succeeded(job: FioJob, direction: Direction) -> DirectionStats | None:
    """A job's statistics of one direction with its failed I/Os taken out of `total_ios`
    and IOPS (kept as `failed_ios`): the latency samples count the I/Os that completed
    without error. Unchanged for a job without counted errors, or without samples."""
    stats = job.get(direction)
    if not job.get("total_err") or not isinstance(stats, dict):
        return stats
    clat = latency(stats, "clat") or {}
    total, done = int(stats.get("total_ios") or 0), int(clat.get("N") or 0)
    if total <= done or (not done and _io_bytes(stats)):  # nothing failed, or no samples
        return stats
    return {**stats, "total_ios": done, "failed_ios": total - done,
            "iops": _iops(stats) * done / total}


# fio's statistics over its bandwidth and IOPS samples -> (metric, scale to our units)
SAMPLE_STATISTICS = {"bw_min": ("bw_min_bytes", 1024.0), "bw_max": ("bw_max_bytes", 1024.0),
                     "bw_dev": ("bw_stddev_bytes", 1024.0), "iops_min": ("iops_min", 1.0),
                     "iops_max": ("iops_max", 1.0), "iops_stddev": ("iops_stddev", 1.0)}


def _sample_statistics(stats: DirectionStats) -> dict[str, float]:
    """Min, max and stddev of one fio entry's bandwidth (fio: KiB/s) and IOPS samples;
    none when fio took no sample (a run shorter than bw_avg_time)."""
    if not stats.get("bw_samples"):
        return {}
    found: Mapping[str, object] = stats
    return {metric: float(value) * scale for key, (metric, scale) in SAMPLE_STATISTICS.items()
            if isinstance(value := found.get(key), int | float)}


def _active(stats: object) -> TypeGuard[DirectionStats]:
    """The direction did I/O (or tried: every I/O of it failed, counted)."""
    return _ios(stats) > 0 or bool(isinstance(stats, dict) and stats.get("failed_ios"))


def _ios(stats: object) -> int:
    if not stats:
        return 0
    if not isinstance(stats, dict):
        raise FioParseError(f"a direction's statistics are {type(stats).__name__}, "
                            "not an object")
    return int(stats.get("total_ios") or 0) or int(stats.get("io_bytes") or 0)


def _completed(stats: DirectionStats) -> int:
    """Completed I/Os of one direction: total_ios, or the clat sample count (old fio)."""
    if stats.get("total_ios"):
        return int(stats["total_ios"])
    clat = latency(stats, "clat")
    return int(clat.get("N") or 0) if clat else 0


def _iops(stats: DirectionStats) -> float:
    return float(stats.get("iops", 0.0))


def _bw(stats: DirectionStats) -> float:
    if "bw_bytes" in stats:
        return float(stats["bw_bytes"])
    return float(stats.get("bw", 0.0)) * 1024.0  # old fio: KiB/s


def _io_bytes(stats: DirectionStats) -> int:
    if "io_bytes" in stats:
        return int(stats["io_bytes"])
    return int(stats.get("io_kbytes", 0)) * 1024

