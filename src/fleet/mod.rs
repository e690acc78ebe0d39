//! `gpudoctor fleet`: reads node reports (`check --format json`, one per node, written by
//! Slurm, Kubernetes, pdsh or Ansible runs), and finds which nodes are broken and how.
//! Reading is here; the judgement is in aggregate.rs; src/render/fleet.rs formats.

pub mod aggregate;

use std::collections::{BTreeMap, HashSet};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::facts::node::Node;
use crate::facts::nvml::Field;
use crate::findings::Severity;
use crate::report::{parse_saved, read_saved, Saved, SavedError, REPORT_LIMIT};

/// Unusable reports listed one by one; the rest are only counted, by kind (a million junk
/// documents must not become a million lines).
pub const PROBLEMS_LISTED: usize = 100;
/// Inputs parsed per round: what is in flight at once, whatever the input's size.
const BATCH: usize = 4096;
/// Bytes of stdin read at a time (more while one document is longer).
const STDIN_CHUNK: usize = 1 << 20;

/// A report that could not be used, and why: never dropped silently.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Problem {
    /// The file, or `stdin:LINE`.
    pub source: String,
    /// unreadable, not_json, not_a_report, incompatible_schema, missing, duplicate.
    pub kind: String,
    pub detail: String,
}

/// The unusable reports: the first PROBLEMS_LISTED in full, every one counted by kind.
#[derive(Debug, Default)]
pub struct Problems {
    listed: Vec<Problem>,
    counts: BTreeMap<String, usize>,
}

impl Problems {
    pub fn push(&mut self, p: Problem) {
        *self.counts.entry(p.kind.clone()).or_default() += 1;
        if self.listed.len() < PROBLEMS_LISTED {
            self.listed.push(p);
        }
    }

    /// "SOURCE: KIND: DETAIL" for each listed problem, then how many more were not listed.
    pub fn lines(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .listed
            .iter()
            .map(|p| format!("{}: {}: {}", p.source, p.kind.replace('_', " "), p.detail))
            .collect();
        let total: usize = self.counts.values().sum();
        if total > self.listed.len() {
            out.push(format!("… and {} more", total - self.listed.len()));
        }
        out
    }

    pub fn into_parts(self) -> (Vec<Problem>, BTreeMap<String, usize>) {
        (self.listed, self.counts)
    }
}

// The parts of a report the fleet view reads are declared minimally: everything else is
// skipped by the parser without being built (10,000 reports must take under a second).

#[derive(Deserialize, Debug, Clone, PartialEq, Eq, Hash)]
pub struct FindingIn {
    pub code: String,
    pub severity: Severity,
    pub title: String,
    /// What the HTML view shows behind a heat-map cell.
    #[serde(default)]
    pub evidence: Vec<crate::findings::Evidence>,
    #[serde(default)]
    pub fix: Vec<crate::findings::Fix>,
    /// The root cause on that node (reports from before root-cause chains have none).
    #[serde(default)]
    pub caused_by: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub struct SnapshotIn {
    pub node: Option<Node>,
    pub kernel_module: Option<KernelModuleIn>,
    pub pci: Option<PciIn>,
    pub nvml: Option<NvmlIn>,
    pub python: Option<Vec<PythonIn>>,
    pub smoke: Option<SmokeIn>,
    /// What the node's own check expected (so the fleet does not judge it twice).
    pub expect: Option<crate::snapshot::Expect>,
}

/// A Fact: `{"source", "value"}` or `{"source", "missing"}`.
#[derive(Deserialize)]
#[serde(bound(deserialize = "T: Deserialize<'de>"))]
pub struct FactIn<T> {
    #[serde(default = "none")]
    pub value: Option<T>,
}

fn none<T>() -> Option<T> {
    None
}

impl<T> Default for FactIn<T> {
    fn default() -> Self {
        FactIn { value: None }
    }
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub struct KernelModuleIn {
    pub gpus: FactIn<Vec<DriverGpuIn>>,
}

#[derive(Deserialize)]
pub struct DriverGpuIn {
    pub model: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
pub struct PciIn {
    pub devices: FactIn<Vec<PciDeviceIn>>,
}

#[derive(Deserialize)]
pub struct PciDeviceIn {
    pub device_id: String,
    /// gpu, audio, … (src/probes/pci.rs PciRole).
    pub role: String,
}

#[derive(Deserialize)]
pub struct NvmlIn {
    pub result: NvmlResultIn,
}

#[derive(Deserialize)]
pub struct NvmlResultIn {
    /// ok, or timed_out with what came before the hang.
    pub system: Option<NvmlSystemIn>,
    pub partial: Option<NvmlSystemIn>,
}

#[derive(Deserialize)]
pub struct NvmlSystemIn {
    pub devices: Vec<NvmlGpuIn>,
}

#[derive(Deserialize)]
pub struct NvmlGpuIn {
    pub name: Field<String>,
}

#[derive(Deserialize)]
pub struct PythonIn {
    pub primary: bool,
    pub torch: Option<TorchIn>,
}

#[derive(Deserialize)]
pub struct TorchIn {
    pub version: FactIn<String>,
}

#[derive(Deserialize)]
pub struct SmokeIn {
    pub result: SmokeResultIn,
}

#[derive(Deserialize)]
pub struct SmokeResultIn {
    pub run: Option<SmokeRunIn>,
}

#[derive(Deserialize)]
pub struct SmokeRunIn {
    pub devices: Vec<SmokeDeviceIn>,
}

#[derive(Deserialize)]
pub struct SmokeDeviceIn {
    pub matmul: Option<StepIn<MatmulIn>>,
    pub transfer: Option<StepIn<TransferIn>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StepIn<T> {
    Ok(T),
    Failed(serde::de::IgnoredAny),
    Skipped(serde::de::IgnoredAny),
}

#[derive(Deserialize)]
pub struct MatmulIn {
    pub n: u32,
    pub gflops: f64,
}

#[derive(Deserialize)]
pub struct TransferIn {
    pub bytes: u64,
    pub pinned_h2d_gbps: Option<f64>,
    pub pinned_d2h_gbps: Option<f64>,
}

/// One node's report, reduced on the reading thread to what the fleet compares (the
/// snapshot is dropped once read, so memory grows with the usable reports, not the input);
/// its finding counts are filled in by `aggregate`. What nodes share (a model name, a
/// driver version, a finding with its evidence) is held once for the whole fleet
/// (`Interner`).
pub type NodeReport = aggregate::NodeFacts;

/// The fleet's policy, applied to each finding as it is read: false drops it (`--skip`),
/// and it may change the severity (the configured severities).
pub type Policy<'a> = &'a (dyn Fn(&mut FindingIn) -> bool + Sync);

/// One copy of each value many nodes share.
#[derive(Default)]
struct Interner {
    strings: HashSet<Arc<str>>,
    models: HashSet<aggregate::Models>,
    findings: HashSet<Arc<FindingIn>>,
}

impl Interner {
    fn str(&mut self, s: &mut Arc<str>) {
        match self.strings.get(&**s) {
            Some(shared) => *s = shared.clone(),
            None => {
                self.strings.insert(s.clone());
            }
        }
    }

    fn opt(&mut self, s: &mut Option<Arc<str>>) {
        if let Some(s) = s {
            self.str(s);
        }
    }

    fn node(&mut self, mut facts: aggregate::NodeFacts, findings: Vec<FindingIn>) -> NodeReport {
        // What the node keeps of its own is copied on this thread: left where a parsing
        // thread allocated it, among the documents it freed, each kept string pins a page of
        // that thread's heap (glibc gives busy threads heaps of their own).
        facts.name = Arc::from(&*facts.name);
        for s in [
            Some(&mut facts.source),
            facts.hostname.as_mut(),
            facts.slurm_job.as_mut(),
            facts.kubernetes_pod.as_mut(),
            facts.machine_id.as_mut(),
            facts.time.as_mut(),
        ]
        .into_iter()
        .flatten()
        {
            *s = s.as_str().to_owned();
        }
        self.str(&mut facts.gpu_model);
        self.opt(&mut facts.pci_id);
        self.opt(&mut facts.driver);
        self.opt(&mut facts.cuda);
        self.opt(&mut facts.toolkit);
        self.opt(&mut facts.torch);
        match self.models.get(&facts.models) {
            Some(shared) => facts.models = shared.clone(),
            None => {
                let mut named = facts.models.entries().to_vec();
                for (m, _) in &mut named {
                    self.str(m);
                }
                facts.models = aggregate::Models::new(named);
                self.models.insert(facts.models.clone());
            }
        }
        // A new vector: `collect` would reuse the parsed one's allocation, all of it.
        let mut shared = Vec::with_capacity(findings.len());
        for f in findings {
            shared.push(match self.findings.get(&f) {
                Some(same) => same.clone(),
                None => {
                    let f = Arc::new(f);
                    self.findings.insert(f.clone());
                    f
                }
            });
        }
        facts.findings = shared;
        facts
    }
}

/// One input: a file to read, one document of stdin, or a path that already failed (kept
/// in line, so problems are listed in the order the inputs came).
enum Input<'a> {
    File(String, PathBuf),
    Bytes(String, &'a [u8]),
    Failed(Problem),
}

/// What has been read so far.
struct Loaded<'p> {
    reports: Vec<NodeReport>,
    problems: Problems,
    threads: usize,
    policy: Policy<'p>,
    interner: Interner,
}

type Parsed = (aggregate::NodeFacts, Vec<FindingIn>);

impl Loaded<'_> {
    /// Parses `inputs` on every core, keeping what each yields in input order.
    fn take(&mut self, inputs: &[Input]) {
        let chunk = inputs.len().div_ceil(self.threads).max(1);
        let policy = self.policy;
        let parsed: Vec<Vec<Result<Parsed, Problem>>> = std::thread::scope(|s| {
            let handles: Vec<_> = inputs
                .chunks(chunk)
                .map(|part| {
                    s.spawn(move || part.iter().map(|i| parse(i, policy)).collect::<Vec<_>>())
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join().unwrap_or_else(|_| {
                        vec![Err(Problem {
                            source: "?".into(),
                            kind: "unreadable".into(),
                            detail: "a reader thread failed (a bug)".into(),
                        })]
                    })
                })
                .collect()
        });
        for p in parsed.into_iter().flatten() {
            match p {
                Ok((facts, findings)) => {
                    let r = self.interner.node(facts, findings);
                    self.reports.push(r);
                }
                Err(e) => self.problems.push(e),
            }
        }
    }
}

/// Reads the reports named by `args` (files, directories searched for *.json, `-` for
/// reports on stdin) and parses them on every core, a batch at a time, applying `policy`
/// to each finding.
pub fn load(args: &[PathBuf], policy: Policy) -> (Vec<NodeReport>, Problems) {
    let mut loaded = Loaded {
        reports: Vec::new(),
        problems: Problems::default(),
        threads: std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
            .clamp(1, 16),
        policy,
        interner: Interner::default(),
    };
    let mut walk = Walk::default();
    let mut stdin_taken = false;
    for a in args {
        if a == Path::new("-") {
            // Read once: a second `-` has nothing left.
            if std::mem::replace(&mut stdin_taken, true) {
                continue;
            }
            walk.flush(&mut loaded);
            read_stream(
                std::io::stdin().lock(),
                &mut loaded,
                STDIN_CHUNK,
                REPORT_LIMIT,
            );
        } else {
            walk.collect(a, true, &mut loaded);
        }
    }
    walk.flush(&mut loaded);
    (loaded.reports, loaded.problems)
}

/// Reads a stream of reports: one per line, or pretty-printed reports one after another
/// (`check --format json` output concatenated). A chunk at a time: only the documents
/// being parsed are held, however long the stream; a document longer than `limit` is
/// skipped.
fn read_stream(mut r: impl Read, loaded: &mut Loaded, chunk: usize, limit: u64) {
    let mut buf: Vec<u8> = Vec::new();
    // The line buf[0] is on.
    let mut line = 1;
    let mut eof = false;
    // Dropping an over-long document up to the next line starting with `{`.
    let mut skipping = false;
    while !eof {
        let want = chunk.max(buf.len());
        match r.by_ref().take(want as u64).read_to_end(&mut buf) {
            Ok(n) => eof = n < want,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                loaded.problems.push(Problem {
                    source: format!("stdin:{line}"),
                    kind: "unreadable".into(),
                    detail: e.to_string(),
                });
                eof = true;
            }
        }
        if skipping {
            // The last byte may be the newline before a `{` still to come.
            let cut = match buf.windows(2).position(|w| w == b"\n{") {
                Some(i) => {
                    skipping = false;
                    i + 1
                }
                None if eof => buf.len(),
                None => buf.len().saturating_sub(1),
            };
            line += newlines(&buf[..cut]);
            buf.drain(..cut);
            if skipping {
                continue;
            }
        }
        let mut off = 0;
        loop {
            let (docs, consumed, next_line) = split_stream(&buf[off..], line, eof, BATCH);
            let inputs: Vec<Input> = docs
                .iter()
                .map(|(l, d)| Input::Bytes(format!("stdin:{l}"), d))
                .collect();
            loaded.take(&inputs);
            off += consumed;
            line = next_line;
            if docs.len() < BATCH {
                break;
            }
        }
        buf.drain(..off);
        if !eof && buf.len() as u64 > limit {
            let e = SavedError::too_large();
            loaded.problems.push(Problem {
                source: format!("stdin:{line}"),
                kind: e.kind().into(),
                detail: e.detail(),
            });
            skipping = true;
        }
    }
}

fn newlines(b: &[u8]) -> usize {
    b.iter().filter(|&&c| c == b'\n').count()
}

/// Splits off up to `max` complete JSON documents from the start of `bytes` (which starts
/// on line `line`), with the line each starts on; returns them, the bytes they took and
/// the line after them. A document that does not parse ends at the next line starting
/// with `{`, so one bad report costs only itself. Before `eof`, a document that may go on
/// past the end of `bytes` is left for the next read.
fn split_stream(
    bytes: &[u8],
    mut line: usize,
    eof: bool,
    max: usize,
) -> (Vec<(usize, &[u8])>, usize, usize) {
    let mut docs = Vec::new();
    let (mut pos, mut counted) = (0, 0);
    loop {
        while pos < bytes.len() && bytes[pos].is_ascii_whitespace() {
            pos += 1;
        }
        line += newlines(&bytes[counted..pos]);
        counted = pos;
        if pos >= bytes.len() || docs.len() == max {
            return (docs, pos, line);
        }
        let mut stream = serde_json::Deserializer::from_slice(&bytes[pos..])
            .into_iter::<serde::de::IgnoredAny>();
        let end = match stream.next() {
            // A number at the end may have more digits to come.
            Some(Ok(_)) => Some(pos + stream.byte_offset()).filter(|&e| eof || e < bytes.len()),
            Some(Err(e)) if e.is_eof() && !eof => None,
            _ => bytes[pos..]
                .windows(2)
                .position(|w| w == b"\n{")
                .map(|i| pos + i + 1)
                .or(eof.then_some(bytes.len())),
        };
        let Some(end) = end else {
            return (docs, pos, line);
        };
        docs.push((line, &bytes[pos..end]));
        pos = end;
    }
}

/// The directory walk: each directory once (links into a parent, or `latest -> .`, would
/// loop), and only regular files inside them (a FIFO there would block the run). Files
/// are parsed a batch at a time as they are found.
#[derive(Default)]
struct Walk {
    seen_dirs: std::collections::HashSet<(u64, u64)>,
    pending: Vec<Input<'static>>,
}

impl Walk {
    fn push(&mut self, input: Input<'static>, loaded: &mut Loaded) {
        self.pending.push(input);
        if self.pending.len() >= BATCH {
            self.flush(loaded);
        }
    }

    fn flush(&mut self, loaded: &mut Loaded) {
        loaded.take(&self.pending);
        self.pending.clear();
    }

    fn collect(&mut self, path: &Path, named: bool, loaded: &mut Loaded) {
        use std::os::unix::fs::MetadataExt;
        let shown = path.display().to_string();
        let problem = |kind: &str, detail: String| {
            Input::Failed(Problem {
                source: shown.clone(),
                kind: kind.into(),
                detail,
            })
        };
        let meta = match std::fs::metadata(path) {
            Ok(m) => m,
            Err(e) => {
                let kind = if e.kind() == std::io::ErrorKind::NotFound {
                    "missing"
                } else {
                    "unreadable"
                };
                self.push(problem(kind, e.to_string()), loaded);
                return;
            }
        };
        if meta.is_dir() {
            if !self.seen_dirs.insert((meta.dev(), meta.ino())) {
                return;
            }
            let mut entries: Vec<PathBuf> = match std::fs::read_dir(path) {
                Ok(rd) => rd.filter_map(|e| e.ok().map(|e| e.path())).collect(),
                Err(e) => {
                    self.push(problem("unreadable", e.to_string()), loaded);
                    return;
                }
            };
            entries.sort();
            for p in entries {
                // *.json goes straight to `collect`, which stats it once.
                let wanted = p.extension().is_some_and(|e| e == "json")
                    || std::fs::metadata(&p).is_ok_and(|m| m.is_dir());
                if wanted {
                    self.collect(&p, false, loaded);
                }
            }
            return;
        }
        // A file named on the command line may be a pipe (`fleet <(…)`); one found in a
        // directory must be a regular file.
        if !meta.is_file() && !named {
            let p = problem(
                "unreadable",
                "not a regular file (a FIFO, socket or device); skipped".into(),
            );
            self.push(p, loaded);
            return;
        }
        if meta.len() > REPORT_LIMIT {
            let e = SavedError::too_large();
            self.push(problem(e.kind(), e.detail()), loaded);
            return;
        }
        self.push(Input::File(shown, path.to_path_buf()), loaded);
    }
}

fn parse(input: &Input, policy: Policy) -> Result<Parsed, Problem> {
    let (source, owned);
    let bytes: &[u8] = match input {
        Input::Failed(p) => return Err(p.clone()),
        Input::Bytes(s, b) => {
            source = s;
            b
        }
        // Files are read here, on the parsing threads, and dropped once parsed.
        Input::File(s, p) => {
            source = s;
            owned = read_saved(p).map_err(|e| problem(s, e))?;
            &owned
        }
    };
    if bytes.len() as u64 > REPORT_LIMIT {
        return Err(problem(source, SavedError::too_large()));
    }
    let mut saved: crate::report::SavedReport<SnapshotIn, FindingIn> =
        parse_saved(bytes, Saved::Report).map_err(|e| problem(source, e))?;
    saved.findings.retain_mut(|f| policy(f));
    Ok((
        aggregate::facts(source, &saved.snapshot, &saved.derived),
        saved.findings,
    ))
}

fn problem(source: &str, e: SavedError) -> Problem {
    Problem {
        source: source.into(),
        kind: e.kind().into(),
        detail: e.detail(),
    }
}

/// "node2" before "node10": digit runs compare as numbers.
pub fn natural_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    let (mut x, mut y) = (a.as_bytes(), b.as_bytes());
    loop {
        match (x.first(), y.first()) {
            // Equal as numbers ("node2", "node02"): the plain bytes decide, so the order
            // is total.
            (None, None) => return a.cmp(b),
            (None, _) => return std::cmp::Ordering::Less,
            (_, None) => return std::cmp::Ordering::Greater,
            (Some(p), Some(q)) if p.is_ascii_digit() && q.is_ascii_digit() => {
                let i = x.iter().take_while(|c| c.is_ascii_digit()).count();
                let j = y.iter().take_while(|c| c.is_ascii_digit()).count();
                let (na, nb) = (&x[..i], &y[..j]);
                let strip = |s: &[u8]| -> Vec<u8> {
                    let z = s.iter().take_while(|&&c| c == b'0').count();
                    s[z..].to_vec()
                };
                let (sa, sb) = (strip(na), strip(nb));
                let ord = sa.len().cmp(&sb.len()).then(sa.cmp(&sb));
                if ord != std::cmp::Ordering::Equal {
                    return ord;
                }
                x = &x[i..];
                y = &y[j..];
            }
            (Some(p), Some(q)) => {
                if p != q {
                    return p.cmp(q);
                }
                x = &x[1..];
                y = &y[1..];
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(input: &[u8], chunk: usize, limit: u64) -> (Vec<String>, Vec<Problem>) {
        let mut loaded = Loaded {
            reports: Vec::new(),
            problems: Problems::default(),
            threads: 2,
            policy: &|_| true,
            interner: Interner::default(),
        };
        read_stream(input, &mut loaded, chunk, limit);
        let names = loaded.reports.iter().map(|r| r.source.clone()).collect();
        (names, loaded.problems.into_parts().0)
    }

    /// Documents cut anywhere by the reads come out as when the stream is read whole.
    #[test]
    fn chunked_reading_splits_as_reading_whole() {
        let report = |name: &str| {
            format!(
                r#"{{"schema_version": {}, "snapshot": {{"node": {{"name": "{name}", "time": ""}}}}}}"#,
                crate::report::SCHEMA_VERSION
            )
        };
        let pretty = serde_json::to_string_pretty(
            &serde_json::from_str::<serde_json::Value>(&report("p")).unwrap(),
        )
        .unwrap();
        let input = format!(
            "{}\n\n{pretty}\n12 345\n{{\"broken\": \n{}\ngarbage\n{}",
            report("a"),
            report("b"),
            report("c")
        );
        let whole = read(input.as_bytes(), 1 << 20, 1 << 20);
        assert_eq!(whole.0, ["stdin:1", "stdin:3", "stdin:14", "stdin:16"]);
        let problems: Vec<(&str, &str)> = whole
            .1
            .iter()
            .map(|p| (p.source.as_str(), p.kind.as_str()))
            .collect();
        assert_eq!(
            problems,
            [
                ("stdin:12", "not_json"),
                ("stdin:12", "not_json"),
                ("stdin:13", "not_json"),
                ("stdin:15", "not_json")
            ]
        );
        for chunk in 1..40 {
            assert_eq!(
                read(input.as_bytes(), chunk, 1 << 20),
                whole,
                "chunk {chunk}"
            );
        }
    }

    /// A document longer than the limit is skipped up to the next line starting with `{`.
    #[test]
    fn an_over_long_document_costs_only_itself() {
        let input = format!(
            "{{\"x\": \"{}\"}}\n{{\"schema_version\": {}, \"snapshot\": {{}}}}\n",
            "a".repeat(500),
            crate::report::SCHEMA_VERSION
        );
        let (reports, problems) = read(input.as_bytes(), 8, 100);
        assert_eq!(reports, ["stdin:2"]);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(
            (problems[0].source.as_str(), problems[0].kind.as_str()),
            ("stdin:1", "unreadable")
        );
    }

    #[test]
    fn problems_past_the_listed_ones_are_counted() {
        let mut p = Problems::default();
        for i in 0..PROBLEMS_LISTED + 5 {
            p.push(Problem {
                source: format!("stdin:{i}"),
                kind: if i % 2 == 0 { "not_json" } else { "missing" }.into(),
                detail: String::new(),
            });
        }
        let (listed, counts) = p.into_parts();
        assert_eq!(listed.len(), PROBLEMS_LISTED);
        assert_eq!(counts.values().sum::<usize>(), PROBLEMS_LISTED + 5);
        assert_eq!(counts["not_json"], 53);
    }

    #[test]
    fn natural_order() {
        let mut v = vec!["node10", "node2", "node1", "gpu-a", "node02"];
        assert_ne!(natural_cmp("node2", "node02"), std::cmp::Ordering::Equal);
        v.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(v, ["gpu-a", "node1", "node02", "node2", "node10"]);
    }
}
