//! `gpudoctor fleet`: reads node reports (`check --format json`, one per node, written by
//! Slurm, Kubernetes, pdsh or Ansible runs), and finds which nodes are broken and how.
//! Reading is here; the judgement is in aggregate.rs; src/render/fleet.rs formats.

pub mod aggregate;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::findings::Severity;
use crate::fsys::read_stream_limited;
use crate::probes::node::Node;
use crate::probes::nvml::Field;
use crate::report::{parse_saved, read_saved, Saved, SavedError, REPORT_LIMIT};

/// Most of stdin held at once (about 50,000 HGX reports); directories have no limit.
const STDIN_LIMIT: u64 = 4 << 30;

/// A report that could not be used, and why: never dropped silently.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Problem {
    /// The file, or `stdin:LINE`.
    pub source: String,
    /// unreadable, not_json, not_a_report, incompatible_schema, missing.
    pub kind: String,
    pub detail: String,
}

// The parts of a report the fleet view reads are declared minimally: everything else is
// skipped by the parser without being built (10,000 reports must take under a second).

#[derive(Deserialize)]
pub struct FindingIn {
    pub code: String,
    pub severity: Severity,
    pub title: String,
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

/// One node's report, read.
pub struct NodeReport {
    pub source: String,
    pub snapshot: SnapshotIn,
    pub findings: Vec<FindingIn>,
    /// The writing gpudoctor's derived facts: the driver, GPU count and toolkit are read
    /// from here, never worked out again.
    pub derived: crate::report::Derived,
}

/// Every input named on the command line: a file to read, or one document of stdin.
struct Input<'a> {
    source: String,
    what: InputKind<'a>,
}

enum InputKind<'a> {
    File(PathBuf),
    Bytes(&'a [u8]),
}

/// Reads the reports named by `args` (files, directories searched for *.json, `-` for
/// reports on stdin) and parses them on every core.
pub fn load(args: &[PathBuf]) -> (Vec<NodeReport>, Vec<Problem>) {
    let mut problems = Vec::new();
    let mut stdin = Vec::new();
    if args.iter().any(|a| a == Path::new("-")) {
        let read = read_stream_limited(std::io::stdin().lock(), STDIN_LIMIT, 0);
        let detail = match read {
            Ok(Some(bytes)) => {
                stdin = bytes;
                None
            }
            Ok(None) => Some(format!(
                "more than {} GiB: pass the reports' directory instead",
                STDIN_LIMIT >> 30
            )),
            Err(e) => Some(e.to_string()),
        };
        if let Some(detail) = detail {
            problems.push(Problem {
                source: "stdin".into(),
                kind: "unreadable".into(),
                detail,
            });
        }
    }
    let mut inputs = Vec::new();
    let mut walk = Walk::default();
    let mut stdin_taken = false;
    for a in args {
        if a == Path::new("-") {
            // Read once: a second `-` has nothing left.
            if std::mem::replace(&mut stdin_taken, true) {
                continue;
            }
            for (line, doc) in split_stream(&stdin) {
                inputs.push(Input {
                    source: format!("stdin:{line}"),
                    what: InputKind::Bytes(doc),
                });
            }
        } else {
            walk.collect(a, true, &mut inputs, &mut problems);
        }
    }
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .clamp(1, 16);
    let chunk = inputs.len().div_ceil(threads).max(1);
    let parsed: Vec<Result<NodeReport, Problem>> = std::thread::scope(|s| {
        let handles: Vec<_> = inputs
            .chunks(chunk)
            .map(|part| s.spawn(move || part.iter().map(parse).collect::<Vec<_>>()))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| {
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
    let mut reports = Vec::new();
    for p in parsed {
        match p {
            Ok(r) => reports.push(r),
            Err(e) => problems.push(e),
        }
    }
    (reports, problems)
}

/// Splits a stream into its JSON documents with the line each starts on: one report per
/// line, or pretty-printed reports one after another (`check --format json` output
/// concatenated). A document that does not parse ends at the next line starting with `{`,
/// so one bad report costs only itself.
fn split_stream(bytes: &[u8]) -> Vec<(usize, &[u8])> {
    let mut docs = Vec::new();
    let (mut pos, mut line, mut counted) = (0, 1, 0);
    loop {
        while pos < bytes.len() && bytes[pos].is_ascii_whitespace() {
            pos += 1;
        }
        if pos >= bytes.len() {
            return docs;
        }
        line += bytes[counted..pos].iter().filter(|&&b| b == b'\n').count();
        counted = pos;
        let mut stream = serde_json::Deserializer::from_slice(&bytes[pos..])
            .into_iter::<serde::de::IgnoredAny>();
        let end = match stream.next() {
            Some(Ok(_)) => pos + stream.byte_offset(),
            _ => bytes[pos..]
                .windows(2)
                .position(|w| w == b"\n{")
                .map_or(bytes.len(), |i| pos + i + 1),
        };
        docs.push((line, &bytes[pos..end]));
        pos = end;
    }
}

/// The directory walk: each directory once (links into a parent, or `latest -> .`, would
/// loop), and only regular files inside them (a FIFO there would block the run).
#[derive(Default)]
struct Walk {
    seen_dirs: std::collections::HashSet<(u64, u64)>,
}

impl Walk {
    fn collect<'a>(
        &mut self,
        path: &Path,
        named: bool,
        inputs: &mut Vec<Input<'a>>,
        problems: &mut Vec<Problem>,
    ) {
        use std::os::unix::fs::MetadataExt;
        let shown = path.display().to_string();
        let problem = |kind: &str, detail: String| Problem {
            source: shown.clone(),
            kind: kind.into(),
            detail,
        };
        let meta = match std::fs::metadata(path) {
            Ok(m) => m,
            Err(e) => {
                let kind = if e.kind() == std::io::ErrorKind::NotFound {
                    "missing"
                } else {
                    "unreadable"
                };
                problems.push(problem(kind, e.to_string()));
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
                    problems.push(problem("unreadable", e.to_string()));
                    return;
                }
            };
            entries.sort();
            for p in entries {
                // *.json goes straight to `collect`, which stats it once.
                let wanted = p.extension().is_some_and(|e| e == "json")
                    || std::fs::metadata(&p).is_ok_and(|m| m.is_dir());
                if wanted {
                    self.collect(&p, false, inputs, problems);
                }
            }
            return;
        }
        // A file named on the command line may be a pipe (`fleet <(…)`); one found in a
        // directory must be a regular file.
        if !meta.is_file() && !named {
            problems.push(problem(
                "unreadable",
                "not a regular file (a FIFO, socket or device); skipped".into(),
            ));
            return;
        }
        if meta.len() > REPORT_LIMIT {
            let e = SavedError::too_large();
            problems.push(problem(e.kind(), e.detail()));
            return;
        }
        inputs.push(Input {
            source: shown,
            what: InputKind::File(path.to_path_buf()),
        });
    }
}

fn parse(input: &Input) -> Result<NodeReport, Problem> {
    let problem = |e: SavedError| Problem {
        source: input.source.clone(),
        kind: e.kind().into(),
        detail: e.detail(),
    };
    // Files are read here, on the parsing threads, and dropped once parsed.
    let owned;
    let bytes: &[u8] = match &input.what {
        InputKind::Bytes(b) => b,
        InputKind::File(p) => {
            owned = read_saved(p).map_err(problem)?;
            &owned
        }
    };
    let saved = parse_saved(bytes, Saved::Report).map_err(problem)?;
    Ok(NodeReport {
        source: input.source.clone(),
        snapshot: saved.snapshot,
        findings: saved.findings,
        derived: saved.derived,
    })
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

    #[test]
    fn natural_order() {
        let mut v = vec!["node10", "node2", "node1", "gpu-a", "node02"];
        assert_ne!(natural_cmp("node2", "node02"), std::cmp::Ordering::Equal);
        v.sort_by(|a, b| natural_cmp(a, b));
        assert_eq!(v, ["gpu-a", "node1", "node02", "node2", "node10"]);
    }
}
