//! The report every format renders: the JSON contract (documented in docs/ci.md), and
//! the one reader of saved reports (`check --from`, `fleet`).

use std::path::Path;

use schemars::generate::SchemaSettings;
use schemars::transform::{transform_subschemas, Transform};
use schemars::{JsonSchema, Schema};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;

use crate::findings::{Finding, Severity, Summary};
use crate::fsys::read_stream_limited;
use crate::headline::Headline;
use crate::rules::Check;
use crate::snapshot::Snapshot;

/// Bump when a field is renamed, removed or changes meaning.
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Report {
    pub schema_version: u32,
    pub gpudoctor_version: String,
    /// The outcome in one line, decided from the findings and the derived facts
    /// (src/headline.rs): what the human and Markdown reports print first.
    #[serde(default)]
    pub headline: Headline,
    pub snapshot: Snapshot,
    /// Facts the rules derive from several probes, computed once (Snapshot's methods), so
    /// every format and `gpudoctor fleet` read the same answer.
    #[serde(default)]
    pub derived: Derived,
    pub checks: Vec<Check>,
    pub findings: Vec<Finding>,
    pub summary: Summary,
    /// `check --baseline FILE`: what differs from that saved report (facts and findings;
    /// `gpudoctor diff --format json` prints the same object).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<serde_json::Value>,
}

impl Report {
    pub fn new(snapshot: Snapshot, checks: Vec<Check>, findings: Vec<Finding>) -> Report {
        let summary = Summary::of(&findings);
        let derived = Derived::of(&snapshot);
        Report {
            schema_version: SCHEMA_VERSION,
            gpudoctor_version: env!("CARGO_PKG_VERSION").to_string(),
            headline: Headline::of(&snapshot, &derived, &findings, &checks),
            derived,
            snapshot,
            checks,
            findings,
            summary,
            baseline: None,
        }
    }

    pub fn worst(&self) -> Option<Severity> {
        self.findings.iter().map(|f| f.severity).max()
    }
}

/// What the rules take as the machine's driver, GPUs and toolkit, each with its source.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Derived {
    /// The driver version in force: the loaded kernel module's, else the libcuda the
    /// loader picks.
    pub driver: Option<DerivedDriver>,
    /// The newest CUDA the driver supports: NVML's answer, else libcuda's (smoke test).
    pub cuda_driver_version: Option<String>,
    /// GPUs this system exposes: NVML's count, else /dev/nvidiaN nodes, else PCI functions.
    pub gpu_count: Option<DerivedCount>,
    /// GPUs the driver initialised: NVML's count, else /proc/driver/nvidia/gpus; None
    /// without a driver.
    pub driver_gpu_count: Option<DerivedCount>,
    /// The toolkit builds use: torch's CUDA_HOME choice, else the shell's nvcc.
    pub toolkit_in_use: Option<DerivedToolkit>,
    /// Each GPU model with its compute capability.
    pub known_gpus: Vec<DerivedGpu>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DerivedDriver {
    pub version: String,
    pub source: String,
    /// Read from the loaded kernel module (else from the user-space library on disk).
    pub kernel: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DerivedCount {
    pub count: usize,
    pub source: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DerivedToolkit {
    pub root: String,
    pub cuda: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DerivedGpu {
    pub name: String,
    pub compute_capability: String,
    pub source: String,
}

impl Derived {
    pub fn of(snap: &Snapshot) -> Derived {
        Derived {
            driver: snap.driver_version().map(|d| DerivedDriver {
                version: d.version.to_string(),
                source: d.source,
                kernel: d.kernel,
            }),
            cuda_driver_version: snap
                .nvml_system()
                .and_then(|s| s.cuda_driver_version.get().cloned())
                .or_else(|| {
                    snap.smoke
                        .as_ref()
                        .and_then(|p| p.run())
                        .and_then(|r| r.driver_cuda())
                }),
            gpu_count: snap.gpu_count().map(|c| DerivedCount {
                count: c.count,
                source: c.source,
            }),
            driver_gpu_count: snap.driver_gpu_count().map(|c| DerivedCount {
                count: c.count,
                source: c.source,
            }),
            toolkit_in_use: snap.toolkit_in_use().map(|t| DerivedToolkit {
                root: t.root.clone(),
                cuda: t.cuda.map(|v| v.to_string()),
            }),
            known_gpus: snap
                .known_gpus()
                .into_iter()
                .map(|g| DerivedGpu {
                    name: g.name,
                    compute_capability: g.cc.to_string(),
                    source: g.source,
                })
                .collect(),
        }
    }
}

/// The JSON Schema (draft 2020-12) of the report `check --format json` prints, generated
/// from the types that serialize it so the two cannot drift.
pub fn json_schema() -> String {
    let settings = SchemaSettings::draft2020_12()
        .for_serialize()
        .with_transform(CloseObjects::default());
    let mut schema = settings.into_generator().into_root_schema_for::<Report>();
    schema.insert(
        "$id".into(),
        format!("urn:gpudoctor:report:schema_version:{SCHEMA_VERSION}").into(),
    );
    schema.insert("title".into(), "gpudoctor report".into());
    schema.insert(
        "description".into(),
        format!(
            "What `gpudoctor check --format json` prints: schema_version {SCHEMA_VERSION}, \
             generated by gpudoctor {}. Objects are closed: a field this gpudoctor does not \
             write fails validation (newer versions may add fields within the same \
             schema_version; validate those with their own `gpudoctor schema`).",
            env!("CARGO_PKG_VERSION")
        )
        .into(),
    );
    // The report states its own version: pin it so a report of another one is rejected.
    if let Some(Value::Object(v)) = schema.pointer_mut("/properties/schema_version") {
        v.insert("const".into(), SCHEMA_VERSION.into());
    }
    let mut text = serde_json::to_string_pretty(&schema).expect("a schema serializes");
    text.push('\n');
    text
}

/// Closes every object schema (`additionalProperties: false`), so a field the types do
/// not declare fails validation. An object merged from a `#[serde(flatten)]` (Fact's
/// outcome) keeps its properties in `oneOf`/`allOf` branches: it is closed with
/// `unevaluatedProperties`, which sees into them, and the branches stay open.
#[derive(Debug, Clone, Default)]
struct CloseObjects {
    /// Set while inside an in-place branch of an object that is closed above it.
    in_branch: bool,
}

const BRANCHES: [&str; 3] = ["allOf", "anyOf", "oneOf"];

impl Transform for CloseObjects {
    fn transform(&mut self, schema: &mut Schema) {
        let Some(obj) = schema.as_object_mut() else {
            return;
        };
        let has_properties = obj.contains_key("properties");
        let has_branches = BRANCHES.iter().any(|k| obj.contains_key(*k));
        let already =
            obj.contains_key("additionalProperties") || obj.contains_key("unevaluatedProperties");
        if has_properties && !self.in_branch && !already {
            let key = if has_branches {
                "unevaluatedProperties"
            } else {
                "additionalProperties"
            };
            obj.insert(key.into(), false.into());
        }
        // Branches of an object with properties (or of a branch) describe that same object.
        let branches_open = self.in_branch || has_properties;
        let branches: Vec<(String, Value)> = if branches_open {
            BRANCHES
                .iter()
                .filter_map(|k| obj.remove_entry(*k))
                .collect()
        } else {
            Vec::new()
        };
        let outer = std::mem::replace(&mut self.in_branch, false);
        transform_subschemas(self, schema);
        self.in_branch = true;
        for (key, mut value) in branches {
            for branch in value.as_array_mut().into_iter().flatten() {
                if let Ok(branch) = <&mut Schema>::try_from(branch) {
                    self.transform(branch);
                }
            }
            schema.insert(key, value);
        }
        self.in_branch = outer;
    }
}

/// Largest saved report read (`check --from`, `fleet`): a 64-GPU node with MIG is well
/// under 4 MiB.
pub const REPORT_LIMIT: u64 = 64 * 1024 * 1024;

/// What a saved file must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Saved {
    /// A report (`check --format json`): `fleet` needs its findings.
    Report,
    /// A report, or the bare snapshot inside one: `check --from` re-runs the rules.
    ReportOrSnapshot,
}

/// A saved report as read: the snapshot and findings in the caller's types (`fleet`
/// declares only the fields it reads, so 10,000 reports parse in under a second).
#[derive(Debug)]
pub struct SavedReport<S, F> {
    pub snapshot: S,
    /// Empty for a bare snapshot.
    pub findings: Vec<F>,
    /// What the writing gpudoctor derived (empty for a bare snapshot).
    pub derived: Derived,
}

/// Why a saved file cannot be used: `kind()` names the class for `fleet`'s problem list,
/// the text says what was wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SavedError {
    #[error("{0}")]
    Unreadable(String),
    #[error("not JSON: not UTF-8 text")]
    NotUtf8,
    #[error("not JSON: {0}")]
    NotJson(String),
    #[error("{0}")]
    NotAReport(String),
    #[error("schema_version {0} is not supported (this gpudoctor reads {SCHEMA_VERSION})")]
    IncompatibleSchema(String),
}

impl SavedError {
    /// Over REPORT_LIMIT: read no further.
    pub fn too_large() -> SavedError {
        SavedError::Unreadable(format!("larger than {} MiB", REPORT_LIMIT >> 20))
    }

    /// unreadable, not_json, not_a_report or incompatible_schema.
    pub fn kind(&self) -> &'static str {
        match self {
            SavedError::Unreadable(_) | SavedError::NotUtf8 => "unreadable",
            SavedError::NotJson(_) => "not_json",
            SavedError::NotAReport(_) => "not_a_report",
            SavedError::IncompatibleSchema(_) => "incompatible_schema",
        }
    }

    /// The text without its class, for a list that shows the class beside it.
    pub fn detail(&self) -> String {
        match self {
            SavedError::NotUtf8 => "not UTF-8 text".into(),
            SavedError::NotJson(d) => d.clone(),
            e => e.to_string(),
        }
    }
}

/// Reads and parses the saved report at `path` (`-`: stdin).
pub fn load_saved<S, F>(path: &Path, want: Saved) -> Result<SavedReport<S, F>, SavedError>
where
    S: DeserializeOwned,
    F: DeserializeOwned,
{
    parse_saved(&read_saved(path)?, want)
}

/// Reads at most REPORT_LIMIT bytes from `path` (`-`: stdin). The user named it: a pipe
/// or process substitution is fine, and has no length to check first.
pub fn read_saved(path: &Path) -> Result<Vec<u8>, SavedError> {
    let read = if path == Path::new("-") {
        read_stream_limited(std::io::stdin().lock(), REPORT_LIMIT, 0)
    } else {
        std::fs::File::open(path).and_then(|f| {
            let size = f.metadata().map_or(0, |m| m.len());
            read_stream_limited(f, REPORT_LIMIT, size)
        })
    };
    let mut bytes = read
        .map_err(|e| SavedError::Unreadable(e.to_string()))?
        .ok_or_else(SavedError::too_large)?;
    // PowerShell's `Out-File` and Notepad write a byte-order mark first.
    if bytes.starts_with(b"\xef\xbb\xbf") {
        bytes.drain(..3);
    }
    Ok(bytes)
}

/// Parses a saved report (or, where `want` allows, a bare snapshot).
pub fn parse_saved<S, F>(bytes: &[u8], want: Saved) -> Result<SavedReport<S, F>, SavedError>
where
    S: DeserializeOwned,
    F: DeserializeOwned,
{
    #[derive(Deserialize)]
    #[serde(bound(deserialize = "S: Deserialize<'de>, F: Deserialize<'de>"))]
    struct ReportIn<S, F> {
        schema_version: Option<u64>,
        #[serde(default = "none")]
        snapshot: Option<S>,
        #[serde(default = "Vec::new")]
        findings: Vec<F>,
        #[serde(default)]
        derived: Derived,
    }
    fn none<S>() -> Option<S> {
        None
    }
    let text = std::str::from_utf8(bytes).map_err(|_| SavedError::NotUtf8)?;
    // PowerShell's `Out-File` and Notepad write a byte-order mark first.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if text.trim().is_empty() {
        return Err(SavedError::NotJson("empty".into()));
    }
    // One parse on the common path; only a file that does not fit is looked at again to
    // say why.
    let error = match serde_json::from_str::<ReportIn<S, F>>(text) {
        Ok(ReportIn {
            schema_version: Some(v),
            snapshot: Some(snapshot),
            findings,
            derived,
        }) if v == u64::from(SCHEMA_VERSION) => {
            return Ok(SavedReport {
                snapshot,
                findings,
                derived,
            });
        }
        Ok(_) => None,
        Err(e) => Some(e),
    };
    // serde_json skips unknown fields without a depth limit but reads typed ones with one:
    // a deep document that does not fit is named for its depth, wherever that is.
    if nested_deeper_than(text, MAX_JSON_DEPTH) {
        return Err(SavedError::NotJson(format!(
            "nested more than {MAX_JSON_DEPTH} levels deep"
        )));
    }
    #[derive(Deserialize)]
    struct Outline {
        /// As written: a number past u64 would read back rounded, as a float.
        #[serde(default, deserialize_with = "present")]
        schema_version: Option<Box<RawValue>>,
        snapshot: Option<serde::de::IgnoredAny>,
        probes: Option<Value>,
    }
    /// A field that is there, `null` included, is Some.
    fn present<'de, D>(d: D) -> Result<Option<Box<RawValue>>, D::Error>
    where
        D: serde::Deserializer<'de>,
    {
        Box::<RawValue>::deserialize(d).map(Some)
    }
    let outline: Outline =
        serde_json::from_str(text).map_err(|e| SavedError::NotJson(e.to_string()))?;
    let or_snapshot = want == Saved::ReportOrSnapshot;
    if outline.snapshot.is_none() {
        // A bare snapshot always records its probes.
        if or_snapshot && outline.probes.as_ref().is_some_and(Value::is_object) {
            return serde_json::from_str(text)
                .map(|snapshot| SavedReport {
                    snapshot,
                    findings: Vec::new(),
                    derived: Derived::default(),
                })
                .map_err(|e| {
                    SavedError::NotAReport(format!("not a gpudoctor report or snapshot: {e}"))
                });
        }
        return Err(SavedError::NotAReport(if or_snapshot {
            "not a gpudoctor report (no \"snapshot\") or snapshot (no \"probes\")".into()
        } else {
            "not a gpudoctor report: no \"snapshot\" (not written by `gpudoctor check --format json`)"
                .into()
        }));
    }
    let ours =
        |v: &RawValue| serde_json::from_str::<u64>(v.get()).ok() == Some(SCHEMA_VERSION.into());
    match &outline.schema_version {
        Some(v) if ours(v) => Err(SavedError::NotAReport(format!(
            "not a gpudoctor report{}: {}",
            if or_snapshot { " or snapshot" } else { "" },
            error.map_or("unreadable report".into(), |e| e.to_string())
        ))),
        other => Err(SavedError::IncompatibleSchema(
            other.as_ref().map_or("missing".into(), |v| shown(v.get())),
        )),
    }
}

/// The deepest nesting of arrays and objects serde_json reads (its recursion limit is 128).
pub const MAX_JSON_DEPTH: usize = 127;

/// Whether arrays and objects nest deeper than `limit` anywhere in `text`: a scan that keeps
/// one counter, for text serde_json would read only in part.
fn nested_deeper_than(text: &str, limit: usize) -> bool {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for b in text.bytes() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > limit {
                    return true;
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

/// A value from the file for a message: as written, cut short when long.
fn shown(raw: &str) -> String {
    const MAX: usize = 40;
    match raw.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}…", &raw[..cut]),
        None => raw.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::de::IgnoredAny;

    fn parse(text: &str, want: Saved) -> Result<SavedReport<Value, IgnoredAny>, SavedError> {
        parse_saved(text.as_bytes(), want)
    }

    #[test]
    fn a_report_and_a_bare_snapshot() {
        let report = r#"{"schema_version": 1, "snapshot": {"probes": {}}, "findings": [1, 2]}"#;
        let r = parse(report, Saved::Report).unwrap();
        assert_eq!(r.snapshot["probes"], serde_json::json!({}));
        assert_eq!(r.findings.len(), 2);
        let bare = r#"{"probes": {"pci": {}}}"#;
        let r = parse(bare, Saved::ReportOrSnapshot).unwrap();
        assert!(r.findings.is_empty());
        assert_eq!(
            parse(bare, Saved::Report).unwrap_err().kind(),
            "not_a_report"
        );
    }

    #[test]
    fn each_failure_has_its_kind_and_one_text() {
        let err = |bytes: &[u8]| {
            parse_saved::<Value, IgnoredAny>(bytes, Saved::ReportOrSnapshot).unwrap_err()
        };
        let e = err(b"\xff\xfe not json");
        assert_eq!(
            (e.kind(), e.detail().as_str()),
            ("unreadable", "not UTF-8 text")
        );
        assert_eq!(e.to_string(), "not JSON: not UTF-8 text");
        let e = err(b"  \n");
        assert_eq!(
            (e.kind(), e.to_string().as_str()),
            ("not_json", "not JSON: empty")
        );
        assert_eq!(err(b"{\"snap").kind(), "not_json");
        for text in [
            r#"{"name": "x"}"#,
            r#"{"probes": []}"#,
            r#"{"schema_version": 1}"#,
        ] {
            assert_eq!(err(text.as_bytes()).kind(), "not_a_report", "{text}");
        }
        let e = err(br#"{"schema_version": 99, "snapshot": {}}"#);
        assert_eq!(e.kind(), "incompatible_schema");
        assert_eq!(
            e.to_string(),
            "schema_version 99 is not supported (this gpudoctor reads 1)"
        );
        let e = err(br#"{"snapshot": {}}"#);
        assert!(e.to_string().starts_with("schema_version missing"), "{e}");
        // JSON but not this shape: what does not fit is named.
        let e = parse_saved::<Vec<u8>, IgnoredAny>(
            br#"{"schema_version": 1, "snapshot": {}}"#,
            Saved::Report,
        )
        .unwrap_err();
        assert_eq!(e.kind(), "not_a_report");
        assert!(e.to_string().starts_with("not a gpudoctor report: "), "{e}");
    }

    #[test]
    fn json_nested_too_deeply_is_not_json_wherever_it_is() {
        let deep = |n: usize| format!("{}1{}", "[".repeat(n), "]".repeat(n));
        // The bound is serde_json's own: one level more and it refuses.
        assert!(serde_json::from_str::<Value>(&deep(MAX_JSON_DEPTH)).is_ok());
        assert!(serde_json::from_str::<Value>(&deep(MAX_JSON_DEPTH + 1)).is_err());
        let object = |n: usize| format!("{}1{}", r#"{"a":"#.repeat(n), "}".repeat(n));
        for text in [
            // In a field no type reads: serde_json skipped it without a limit.
            object(100_000),
            format!(r#"{{"snapshot": {{}}, "x": {}}}"#, deep(100_000)),
            // In the snapshot, read against a type: serde_json's limit.
            format!(r#"{{"schema_version": 1, "snapshot": {}}}"#, deep(100_000)),
            deep(MAX_JSON_DEPTH + 1),
        ] {
            let e = parse(&text, Saved::ReportOrSnapshot).unwrap_err();
            assert_eq!(e.kind(), "not_json", "{e}");
            assert_eq!(e.to_string(), "not JSON: nested more than 127 levels deep");
        }
        // A report that reads is read: what it nests where nothing looks is skipped.
        let text = format!(
            r#"{{"schema_version": 1, "snapshot": {{}}, "x": {}}}"#,
            deep(100_000)
        );
        assert!(parse(&text, Saved::Report).is_ok());
        // Brackets inside strings, escaped quotes included, are text.
        let text = format!(r#"{{"name": "\"{}", "probes": []}}"#, "[".repeat(1000));
        assert_eq!(
            parse(&text, Saved::ReportOrSnapshot).unwrap_err().kind(),
            "not_a_report"
        );
    }

    #[test]
    fn a_schema_version_is_quoted_as_written() {
        let err = |v: &str| {
            let text = format!(r#"{{"schema_version": {v}, "snapshot": {{}}}}"#);
            parse(&text, Saved::Report).unwrap_err().to_string()
        };
        let unsupported =
            |v: &str| format!("schema_version {v} is not supported (this gpudoctor reads 1)");
        // 2^70 read back as a float, 1.1805916207174113e21.
        for v in [
            "1180591620717411303424",
            "-1180591620717411303424",
            "1.0",
            "null",
            "\"1\"",
        ] {
            assert_eq!(err(v), unsupported(v));
        }
        let long = format!("\"{}\"", "x".repeat(1000));
        assert_eq!(err(&long), unsupported(&format!("\"{}…", "x".repeat(39))));
    }

    #[test]
    fn a_file_over_the_limit_is_not_read_whole() {
        let e = read_saved(Path::new("/dev/zero")).unwrap_err();
        assert_eq!(e, SavedError::Unreadable("larger than 64 MiB".into()));
        let e = read_saved(Path::new("/nonexistent/r.json")).unwrap_err();
        assert_eq!(e.kind(), "unreadable");
    }
}
