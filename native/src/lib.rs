//! fslab's native fio JSON reader: the hot loop of `fslab import`, outside the GIL.
//!
//! `read_fio_files` reads fio JSON files and aggregates each file's jobs into one
//! observation's measurements exactly as `fslab.parsers.fio.parse_fio` does (sums of
//! rates, latency means weighted by sample counts, percentiles of the merged json+
//! bins). It takes only the plain case: a file whose text between its first `{` and
//! last `}` is one fio ≥ 3 JSON object of the expected types. Anything else (dd logs,
//! bonnie++ lines, old fio's µs blocks, a null or a string where a number belongs, an
//! unreadable file) is marked for the Python parser, which gives the reason or the
//! result. So the two can differ only in speed; a test holds their measurements equal.

use std::collections::HashMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use memchr::memmem;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::Deserialize;

const OPS: [&str; 4] = ["read", "write", "trim", "total"];
const TOTAL: u8 = 3;
const METRICS: [&str; 14] = [
    "iops", "bw_bytes", "io_bytes", "clat_mean_ns", "lat_mean_ns", "slat_mean_ns",
    "clat_max_ns", "clat_p50_ns", "clat_p90_ns", "clat_p99_ns", "clat_p99_9_ns",
    "clat_p99_99_ns", "cpu_usr", "cpu_sys",
];
const IOPS: u8 = 0;
const BW: u8 = 1;
const IO_BYTES: u8 = 2;
const MEANS: [u8; 3] = [3, 4, 5]; // clat, lat, slat
const CLAT_MAX: u8 = 6;
const P50: u8 = 7;
const CPU_USR: u8 = 12;
const CPU_SYS: u8 = 13;
/// fio's percentiles that fslab keeps, in %, as `parsers.fio.PERCENTILES`.
const PERCENTILES: [f64; 5] = [50.0, 90.0, 99.0, 99.9, 99.99];
const ALL_CLIENTS: &str = "All clients";

/// A field that is present gives Some(value); a null is an error, as it is for the
/// Python parser (`float(None)`), so such a file goes to Python. Absent → None.
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Option<T>, D::Error> {
    T::deserialize(d).map(Some)
}

#[derive(Deserialize)]
struct Output {
    #[serde(rename = "fio version", default, deserialize_with = "present")]
    version: Option<String>,
    #[serde(default, deserialize_with = "present")]
    jobs: Option<Vec<Job>>,
    #[serde(default, deserialize_with = "present")]
    client_stats: Option<Vec<Job>>,
}

#[derive(Deserialize)]
struct Job {
    #[serde(default, deserialize_with = "present")]
    jobname: Option<String>,
    #[serde(default, deserialize_with = "present")]
    hostname: Option<String>,
    #[serde(default, deserialize_with = "present")]
    port: Option<i64>,
    #[serde(default, deserialize_with = "present")]
    read: Option<Direction>,
    #[serde(default, deserialize_with = "present")]
    write: Option<Direction>,
    #[serde(default, deserialize_with = "present")]
    trim: Option<Direction>,
    #[serde(default, deserialize_with = "present")]
    usr_cpu: Option<f64>,
    #[serde(default, deserialize_with = "present")]
    sys_cpu: Option<f64>,
}

#[derive(Deserialize)]
struct Direction {
    #[serde(default, deserialize_with = "present")]
    total_ios: Option<f64>,
    #[serde(default, deserialize_with = "present")]
    io_bytes: Option<f64>,
    #[serde(default, deserialize_with = "present")]
    io_kbytes: Option<f64>,
    #[serde(default, deserialize_with = "present")]
    iops: Option<f64>,
    #[serde(default, deserialize_with = "present")]
    bw_bytes: Option<f64>,
    #[serde(default, deserialize_with = "present")]
    bw: Option<f64>,
    #[serde(default, deserialize_with = "present")]
    clat_ns: Option<Latency>,
    #[serde(default, deserialize_with = "present")]
    lat_ns: Option<Latency>,
    #[serde(default, deserialize_with = "present")]
    slat_ns: Option<Latency>,
    // fio < 3 wrote these in µs: left to the Python parser, which converts them.
    #[serde(default)]
    clat: Option<IgnoredAny>,
    #[serde(default)]
    lat: Option<IgnoredAny>,
    #[serde(default)]
    slat: Option<IgnoredAny>,
}

#[derive(Deserialize)]
struct Latency {
    #[serde(rename = "N", default, deserialize_with = "present")]
    n: Option<f64>,
    #[serde(default, deserialize_with = "present")]
    mean: Option<f64>,
    #[serde(default, deserialize_with = "present")]
    max: Option<f64>,
    #[serde(default, deserialize_with = "present")]
    percentile: Option<Pairs>,
    #[serde(default, deserialize_with = "present")]
    bins: Option<Bins>,
}

/// fio's percentile list: keys (percentages written as text) read as numbers, in file
/// order. A key Python's float() reads differently (spaces, "_") or twice is an error,
/// which leaves the file to Python.
struct Pairs(Vec<(f64, f64)>);

/// json+ bins: keys are latencies in ns written as digits; every pair is kept, as
/// Python's numeric bin reader keeps them.
struct Bins(Vec<(f64, f64)>);

struct PairsVisitor;

impl<'de> Visitor<'de> for PairsVisitor {
    type Value = Vec<(f64, f64)>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an object of numbers")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out: Vec<(f64, f64)> = Vec::with_capacity(map.size_hint().unwrap_or(32));
        while let Some((key, value)) = map.next_entry::<std::borrow::Cow<'de, str>, f64>()? {
            let plain = key.trim() == key && !key.contains('_');
            match key.parse::<f64>() {
                Ok(p) if plain && !out.iter().any(|&(q, _)| q == p) => out.push((p, value)),
                _ => return Err(serde::de::Error::custom("percentile key for Python")),
            }
        }
        Ok(out)
    }
}

impl<'de> Deserialize<'de> for Pairs {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(PairsVisitor).map(Pairs)
    }
}

struct BinsVisitor;

/// A bins key: the digits of an integer latency, read from the raw bytes (no UTF-8 check
/// and no string made: a json+ file has thousands of them).
struct Latency64(i64);

impl<'de> Deserialize<'de> for Latency64 {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_bytes(DigitsVisitor)
    }
}

struct DigitsVisitor;

impl<'de> Visitor<'de> for DigitsVisitor {
    type Value = Latency64;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an integer written as digits")
    }
    fn visit_bytes<E: serde::de::Error>(self, key: &[u8]) -> Result<Latency64, E> {
        if key.is_empty() || key.len() > 18 || !key.iter().all(u8::is_ascii_digit) {
            return Err(E::custom("bin key is not an integer")); // Python decides
        }
        Ok(Latency64(key.iter().fold(0i64, |n, &b| n * 10 + i64::from(b - b'0'))))
    }
    fn visit_borrowed_bytes<E: serde::de::Error>(self, key: &'de [u8]) -> Result<Latency64, E> {
        self.visit_bytes(key)
    }
    fn visit_str<E: serde::de::Error>(self, key: &str) -> Result<Latency64, E> {
        self.visit_bytes(key.as_bytes())
    }
}

impl<'de> Visitor<'de> for BinsVisitor {
    type Value = Vec<(f64, f64)>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("json+ bins")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::with_capacity(map.size_hint().unwrap_or(256));
        while let Some((Latency64(ns), count)) = map.next_entry::<Latency64, f64>()? {
            out.push((ns as f64, count));
        }
        Ok(out)
    }
}

impl<'de> Deserialize<'de> for Bins {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_map(BinsVisitor).map(Bins)
    }
}

/// One measurement: op, metric, value, host (index into the file's host names).
type Row = (u8, u8, f64, u32);

/// What the Rust side made of one file.
enum Parsed {
    Fio { jobname: String, tool: String, hosts: Vec<String>, rows: Vec<Row> },
    /// Not the plain case (or not fio at all): the Python parser decides.
    Python,
}

/// The plain case could not be followed; the Python parser takes the file.
struct NotPlain;

fn truthy(x: Option<f64>) -> bool {
    matches!(x, Some(v) if v != 0.0)
}

/// `_ios` of parsers/fio.py: completed I/Os, else bytes (Python's int() truncates).
fn ios(d: &Direction) -> f64 {
    let by_count = d.total_ios.unwrap_or(0.0).trunc();
    if by_count != 0.0 { by_count } else { d.io_bytes.unwrap_or(0.0).trunc() }
}

fn bw(d: &Direction) -> f64 {
    d.bw_bytes.unwrap_or_else(|| d.bw.unwrap_or(0.0) * 1024.0)
}

fn io_bytes(d: &Direction) -> f64 {
    match d.io_bytes {
        Some(b) => b.trunc(),
        None => d.io_kbytes.unwrap_or(0.0).trunc() * 1024.0,
    }
}

/// A latency block in ns; Err when only fio < 3's µs block is there (Python converts it).
fn latency(d: &Direction, kind: usize) -> Result<Option<&Latency>, NotPlain> {
    let (ns, old) = match kind {
        0 => (&d.clat_ns, d.clat.is_some()),
        1 => (&d.lat_ns, d.lat.is_some()),
        _ => (&d.slat_ns, d.slat.is_some()),
    };
    match ns {
        Some(block) => Ok(Some(block)),
        None if old => Err(NotPlain),
        None => Ok(None),
    }
}

fn sampled(block: Option<&Latency>) -> Option<&Latency> {
    block.filter(|b| truthy(b.n))
}

fn weighted_mean(blocks: &[Option<&Latency>]) -> Result<Option<f64>, NotPlain> {
    let (mut total, mut count) = (0.0f64, 0.0f64);
    for block in blocks.iter().filter_map(|b| sampled(*b)) {
        let weight = block.n.unwrap_or(0.0).trunc();
        total += block.mean.ok_or(NotPlain)? * weight;
        count += weight;
    }
    Ok(if count != 0.0 { Some(total / count) } else { None })
}

/// `_percentiles` of parsers/fio.py, as (index into PERCENTILES, value): from the merged
/// json+ bins (fio's own rule: the first bin whose cumulative count reaches p % of the
/// samples), or a lone job's own list.
fn percentiles(clats: &[Option<&Latency>]) -> Result<Vec<(usize, f64)>, NotPlain> {
    let blocks: Vec<&Latency> = clats.iter().filter_map(|b| sampled(*b)).collect();
    if blocks.is_empty() {
        return Ok(vec![]);
    }
    let with_bins = |b: &&Latency| matches!(&b.bins, Some(Bins(v)) if !v.is_empty());
    if blocks.iter().all(with_bins) {
        let mut bins: Vec<(f64, f64)> =
            blocks.iter().flat_map(|b| b.bins.as_ref().unwrap().0.iter().copied()).collect();
        if bins.iter().any(|&(_, count)| count < 0.0) {
            return Err(NotPlain); // numpy's search on an unsorted sum is not ours to copy
        }
        bins.sort_by(|a, b| a.0.total_cmp(&b.0)); // stable, as numpy's argsort(kind="stable")
        let mut cumulative = Vec::with_capacity(bins.len());
        let mut sum = 0.0f64;
        for &(_, count) in &bins {
            sum += count;
            cumulative.push(sum);
        }
        return Ok(PERCENTILES
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let target = (p / 100.0) * sum;
                let index = cumulative.partition_point(|&c| c < target);
                (i, bins[index.min(bins.len() - 1)].0)
            })
            .collect());
    }
    if blocks.len() == 1 {
        if let Some(Pairs(listed)) = &blocks[0].percentile {
            // As Python's {float(k): v}: a p that is not listed is skipped.
            return Ok(PERCENTILES
                .iter()
                .enumerate()
                .filter_map(|(i, p)| listed.iter().find(|(k, _)| k == p).map(|&(_, v)| (i, v)))
                .collect());
        }
    }
    Ok(vec![])
}

/// `aggregate_jobs` of parsers/fio.py for one host's (or all) jobs.
fn aggregate(jobs: &[&Job], host: u32, rows: &mut Vec<Row>) -> Result<(), NotPlain> {
    let mut active: Vec<Vec<&Direction>> = Vec::new();
    let directions: [fn(&Job) -> Option<&Direction>; 3] =
        [|j| j.read.as_ref(), |j| j.write.as_ref(), |j| j.trim.as_ref()];
    for (op, pick) in directions.iter().enumerate() {
        let stats: Vec<&Direction> =
            jobs.iter().filter_map(|j| pick(j)).filter(|d| ios(d) > 0.0).collect();
        if stats.is_empty() {
            continue;
        }
        let op = op as u8;
        let sum = |f: &dyn Fn(&Direction) -> f64| stats.iter().fold(0.0, |acc, d| acc + f(d));
        rows.push((op, IOPS, sum(&|d| d.iops.unwrap_or(0.0)), host));
        rows.push((op, BW, sum(&bw), host));
        rows.push((op, IO_BYTES, sum(&io_bytes), host));
        let mut kinds: [Vec<Option<&Latency>>; 3] = Default::default();
        for d in &stats {
            for (kind, blocks) in kinds.iter_mut().enumerate() {
                blocks.push(latency(d, kind)?);
            }
        }
        for (kind, blocks) in kinds.iter().enumerate() {
            if let Some(mean) = weighted_mean(blocks)? {
                rows.push((op, MEANS[kind], mean, host));
            }
        }
        let mut maximum: Option<f64> = None;
        for block in kinds[0].iter().filter_map(|b| sampled(*b)) {
            let max = block.max.ok_or(NotPlain)?;
            maximum = Some(maximum.map_or(max, |m: f64| if max > m { max } else { m }));
        }
        if let Some(max) = maximum {
            rows.push((op, CLAT_MAX, max, host));
        }
        for (i, value) in percentiles(&kinds[0])? {
            rows.push((op, P50 + i as u8, value, host));
        }
        active.push(stats);
    }
    if active.len() > 1 {
        let all = || active.iter().flatten();
        rows.push((TOTAL, IOPS, all().fold(0.0, |a, d| a + d.iops.unwrap_or(0.0)), host));
        rows.push((TOTAL, BW, all().fold(0.0, |a, d| a + bw(d)), host));
    }
    rows.push((TOTAL, CPU_USR, jobs.iter().fold(0.0, |a, j| a + j.usr_cpu.unwrap_or(0.0)), host));
    rows.push((TOTAL, CPU_SYS, jobs.iter().fold(0.0, |a, j| a + j.sys_cpu.unwrap_or(0.0)), host));
    Ok(())
}

fn looks_like_fio(raw: &[u8]) -> bool {
    memchr::memchr(b'{', raw).is_some()
        && (memmem::find(raw, b"fio version").is_some()
            || memmem::find(raw, b"client_stats").is_some()
            || memmem::find(raw, b"\"jobs\"").is_some())
}

fn parse(raw: &[u8]) -> Result<Parsed, NotPlain> {
    if !looks_like_fio(raw) {
        return Ok(Parsed::Python);
    }
    let start = memchr::memchr(b'{', raw).ok_or(NotPlain)?;
    let end = memchr::memrchr(b'}', raw).ok_or(NotPlain)?;
    if end <= start {
        return Err(NotPlain);
    }
    let output: Output = serde_json::from_slice(&raw[start..=end]).map_err(|_| NotPlain)?;
    let mut hosts: Vec<String> = vec![String::new()];
    let mut rows: Vec<Row> = Vec::with_capacity(32);
    let first = match (&output.jobs, &output.client_stats) {
        (Some(jobs), _) => {
            let all: Vec<&Job> = jobs.iter().collect();
            if all.is_empty() {
                return Err(NotPlain);
            }
            aggregate(&all, 0, &mut rows)?;
            &jobs[0]
        }
        (None, Some(clients)) => {
            let jobs: Vec<&Job> =
                clients.iter().filter(|j| j.jobname.as_deref() != Some(ALL_CLIENTS)).collect();
            if jobs.is_empty() {
                return Err(NotPlain);
            }
            let mut by_host: Vec<(String, Vec<&Job>)> = Vec::new();
            for job in &jobs {
                let mut host = job.hostname.clone().unwrap_or_else(|| "?".into());
                if let Some(port) = job.port.filter(|&p| p != 0) {
                    host = format!("{host}:{port}");
                }
                match by_host.iter_mut().find(|(h, _)| *h == host) {
                    Some((_, list)) => list.push(job),
                    None => by_host.push((host, vec![job])),
                }
            }
            for (host, list) in by_host {
                hosts.push(host);
                aggregate(&list, (hosts.len() - 1) as u32, &mut rows)?;
            }
            hosts.push(ALL_CLIENTS.into());
            aggregate(&jobs, (hosts.len() - 1) as u32, &mut rows)?;
            &clients[0]
        }
        (None, None) => return Err(NotPlain),
    };
    Ok(Parsed::Fio {
        jobname: first.jobname.clone().unwrap_or_default(),
        tool: output.version.unwrap_or_else(|| "fio".into()),
        hosts,
        rows,
    })
}

fn read_one(path: &PathBuf) -> Parsed {
    match std::fs::read(path) {
        Ok(raw) => parse(&raw).unwrap_or(Parsed::Python),
        Err(_) => Parsed::Python, // Python reports the reason
    }
}

/// Each file in `paths`, parsed on `threads` threads (files taken from a shared queue).
fn read_all(paths: &[PathBuf], threads: usize) -> Vec<Parsed> {
    let next = AtomicUsize::new(0);
    let mut slots: Vec<Option<Parsed>> = (0..paths.len()).map(|_| None).collect();
    let done: Vec<Vec<(usize, Parsed)>> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads.max(1))
            .map(|_| {
                scope.spawn(|| {
                    let mut mine = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= paths.len() {
                            return mine;
                        }
                        mine.push((i, read_one(&paths[i])));
                    }
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().expect("reader thread")).collect()
    });
    for (i, parsed) in done.into_iter().flatten() {
        slots[i] = Some(parsed);
    }
    slots.into_iter().map(|s| s.unwrap_or(Parsed::Python)).collect()
}

fn le_bytes<T: Copy, const N: usize>(values: &[T], to: fn(T) -> [u8; N]) -> Vec<u8> {
    values.iter().flat_map(|&v| to(v)).collect()
}

/// Read and aggregate fio JSON files; return columns for fslab's importer.
///
/// Returns a dict: `parsed` (one byte per file: 1 = parsed here, 0 = for the Python
/// parser), `jobname` and `tool` (per file), the rows as little-endian arrays `file`
/// (u32, index into `paths`), `op` (u8, into `ops`), `metric` (u8, into `metrics`),
/// `value` (f64) and `host` (u32, into `hosts`).
#[pyfunction]
#[pyo3(signature = (paths, threads = 2))]
fn read_fio_files<'py>(py: Python<'py>, paths: Vec<PathBuf>, threads: usize) -> PyResult<Bound<'py, PyDict>> {
    let parsed = py.detach(|| read_all(&paths, threads));
    let mut status = Vec::with_capacity(parsed.len());
    let (mut jobnames, mut tools) = (Vec::with_capacity(parsed.len()), Vec::with_capacity(parsed.len()));
    let (mut file, mut op, mut metric, mut value, mut host) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut host_names: Vec<String> = Vec::new();
    let mut host_index: HashMap<String, u32> = HashMap::new();
    for (i, result) in parsed.into_iter().enumerate() {
        match result {
            Parsed::Fio { jobname, tool, hosts, rows } => {
                status.push(1u8);
                jobnames.push(jobname);
                tools.push(tool);
                let ids: Vec<u32> = hosts
                    .into_iter()
                    .map(|h| {
                        *host_index.entry(h.clone()).or_insert_with(|| {
                            host_names.push(h);
                            (host_names.len() - 1) as u32
                        })
                    })
                    .collect();
                for (o, m, v, h) in rows {
                    file.push(i as u32);
                    op.push(o);
                    metric.push(m);
                    value.push(v);
                    host.push(ids[h as usize]);
                }
            }
            Parsed::Python => {
                status.push(0u8);
                jobnames.push(String::new());
                tools.push(String::new());
            }
        }
    }
    let out = PyDict::new(py);
    out.set_item("parsed", PyBytes::new(py, &status))?;
    out.set_item("jobname", jobnames)?;
    out.set_item("tool", tools)?;
    out.set_item("file", PyBytes::new(py, &le_bytes(&file, u32::to_le_bytes)))?;
    out.set_item("op", PyBytes::new(py, &op))?;
    out.set_item("metric", PyBytes::new(py, &metric))?;
    out.set_item("value", PyBytes::new(py, &le_bytes(&value, f64::to_le_bytes)))?;
    out.set_item("host", PyBytes::new(py, &le_bytes(&host, u32::to_le_bytes)))?;
    out.set_item("hosts", host_names)?;
    out.set_item("ops", OPS.to_vec())?;
    out.set_item("metrics", METRICS.to_vec())?;
    Ok(out)
}

#[pymodule]
fn fslab_native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(read_fio_files, m)?)?;
    Ok(())
}
