//! "What changed since it worked": two saved reports (`check --format json`) compared fact
//! by fact, and their findings matched by code and subject.
//!
//! Each report is read as the typed view of its `schema_version` (v1.rs: the fields compared,
//! each optional), not as this build's `Report`, so a report written by an older gpudoctor is
//! read as far as it goes. The rules:
//! - A report with `schema_version` 1 ..= [`SCHEMA_VERSION`] is read. A newer one is refused
//!   ([`DiffError::NewerSchema`]): its fields may mean something this build does not know.
//! - A field one report does not record (an older gpudoctor did not write it) is *not
//!   compared*, never *changed*: it is listed in [`ReportDiff::not_compared`].
//! - A list one report records (GPUs, wheels, variables, toolkits) and the other does not
//!   is not compared either; within two recorded lists an entry on one side only was
//!   *added* or *removed*.
//! - Facts that depend on a probe that answered on one side only (per-GPU NVML facts when
//!   NVML failed) are left out: the probe's own status is compared instead.
//! - A file that is not a report (a bare snapshot, other JSON, not JSON) is an error that
//!   names the file.
//!
//! What is compared is chosen (extract.rs): driver, kernel module, GPUs, toolkits,
//! libraries, PyTorch and its wheels, variables that steer CUDA, place and host. Volatile
//! readings (temperatures, clocks, memory in use, processes, timings) are not.

mod extract;
mod v1;

use std::collections::{HashMap, HashSet};
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::findings::Severity;
use crate::report::{read_saved, Report, SavedError, SCHEMA_VERSION};

use extract::{Entry, Facts, Role};

/// The version of the diff's own JSON (`diff --format json`). Bump when a field is
/// renamed, removed or changes meaning.
pub const DIFF_VERSION: u32 = 1;

/// Two reports compared.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ReportDiff {
    pub diff_version: u32,
    pub old: ReportSide,
    pub new: ReportSide,
    /// Facts that differ, by section, in report order.
    pub changes: Vec<Change>,
    /// Facts (or lists) one report records and the other does not: not judged as changed.
    pub not_compared: Vec<NotCompared>,
    pub findings: FindingChanges,
}

/// Which report a side is, as the header names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ReportSide {
    /// What the user called it: a file name, "this run"; "old report" / "new report" when
    /// `compare` was given bare values.
    pub label: String,
    pub schema_version: u32,
    pub gpudoctor_version: Option<String>,
    pub hostname: Option<String>,
    /// When the report was made (RFC 3339, as the report says).
    pub time: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Section {
    Host,
    Driver,
    Gpus,
    Toolkits,
    Python,
    Environment,
}

impl Section {
    pub fn title(self) -> &'static str {
        match self {
            Section::Host => "Host",
            Section::Driver => "Driver",
            Section::Gpus => "GPUs",
            Section::Toolkits => "CUDA toolkits and libraries",
            Section::Python => "Python",
            Section::Environment => "Environment",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    Changed,
    /// Only in the new report (a GPU appeared, a wheel was installed, a variable set).
    Added,
    /// Only in the old report.
    Removed,
}

/// One fact that differs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Change {
    pub section: Section,
    /// Stable across runs and versions: `driver.version`, `gpu[GPU-…].pcie.width`,
    /// `python[/venv/…].wheel[nvidia-cudnn-cu12]`, `env[CUDA_VISIBLE_DEVICES]`.
    pub key: String,
    pub label: String,
    pub kind: ChangeKind,
    /// As the report says it (text from the inspected system, not escaped); None when absent
    /// on that side (kind added or removed).
    pub old: Option<String>,
    pub new: Option<String>,
    /// How an absent side reads ("gone", "unset", "not installed").
    #[serde(skip)]
    pub absent: &'static str,
}

impl Change {
    /// The old value as shown: the absent word when there is none.
    pub fn old_text(&self) -> &str {
        self.old.as_deref().unwrap_or(self.absent)
    }

    pub fn new_text(&self) -> &str {
        self.new.as_deref().unwrap_or(self.absent)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Which {
    Old,
    New,
}

/// A fact or list only one report records.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NotCompared {
    pub section: Section,
    pub key: String,
    pub label: String,
    pub recorded_in: Which,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct FindingChanges {
    /// Worst first, then by code.
    pub appeared: Vec<FindingRef>,
    pub went_away: Vec<FindingRef>,
    /// Same code and subject, another severity.
    pub severity_changed: Vec<SeverityChange>,
}

impl FindingChanges {
    pub fn is_empty(&self) -> bool {
        self.appeared.is_empty() && self.went_away.is_empty() && self.severity_changed.is_empty()
    }
}

/// A finding as the diff lists it: matched across reports by code and subject.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FindingRef {
    pub code: String,
    pub severity: Severity,
    pub title: String,
    /// The facts its evidence marks (`gpu:0`, `env:CUDA_VISIBLE_DEVICES`), comma-joined;
    /// None when it marks none.
    pub subject: Option<String>,
    /// The finding as its report has it (evidence, reasons, fixes), for the text view's
    /// finding layout; the JSON lists the reference only.
    #[serde(skip)]
    pub finding: crate::findings::Finding,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SeverityChange {
    pub code: String,
    pub subject: Option<String>,
    /// The new report's title.
    pub title: String,
    pub old: Severity,
    pub new: Severity,
}

impl ReportDiff {
    /// Nothing differs: no fact, no finding. Facts one side does not record do not count.
    pub fn is_empty(&self) -> bool {
        self.changes.is_empty() && self.findings.is_empty()
    }
}

/// Why two reports cannot be compared; the text names the file (or side).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DiffError {
    /// Unreadable, too large, not UTF-8 or not JSON.
    #[error("{name}: {error}")]
    Unreadable { name: String, error: SavedError },
    #[error("{name}: not a gpudoctor report: {why}")]
    NotAReport { name: String, why: String },
    #[error(
        "{name}: schema_version {found} is newer than this gpudoctor reads (1 to {SCHEMA_VERSION}): \
         compare with the gpudoctor that wrote it, or a newer one"
    )]
    NewerSchema { name: String, found: u64 },
}

#[cfg(test)]
impl DiffError {
    /// unreadable, not_json, not_a_report or newer_schema.
    pub fn kind(&self) -> &'static str {
        match self {
            DiffError::Unreadable { error, .. } => error.kind(),
            DiffError::NotAReport { .. } => "not_a_report",
            DiffError::NewerSchema { .. } => "newer_schema",
        }
    }
}

/// Compares two reports given as JSON values (`check --format json` output, of this or an
/// older gpudoctor). Errors name the sides "old report" and "new report".
#[cfg(test)]
pub fn compare(old: &Value, new: &Value) -> Result<ReportDiff, DiffError> {
    compare_named(old, "old report", new, "new report")
}

/// Reads a saved report (`-`: stdin) as JSON, at most REPORT_LIMIT bytes. Whether it is a
/// report is decided by `compare`.
pub fn load(path: &Path) -> Result<Value, DiffError> {
    let name = path_name(path);
    let unreadable = |error| DiffError::Unreadable {
        name: name.clone(),
        error,
    };
    let bytes = read_saved(path).map_err(unreadable)?;
    let text = std::str::from_utf8(&bytes).map_err(|_| unreadable(SavedError::NotUtf8))?;
    if text.trim().is_empty() {
        return Err(unreadable(SavedError::NotJson("empty".into())));
    }
    serde_json::from_str(text).map_err(|e| unreadable(SavedError::NotJson(e.to_string())))
}

/// `gpudoctor diff OLD NEW`: both files read and compared; the sides are labelled by their
/// paths and errors name the file.
pub fn compare_files(old: &Path, new: &Path) -> Result<ReportDiff, DiffError> {
    let (old_name, new_name) = (path_name(old), path_name(new));
    let (o, n) = (load(old)?, load(new)?);
    compare_named(&o, &old_name, &n, &new_name)
}

/// `check --baseline OLD`: the saved report (read and checked with `load_baseline` before
/// probing) against the one this run made. The sides are labelled by the path and "this run".
pub fn against_baseline(
    baseline: &Path,
    old: &Value,
    current: &Report,
) -> Result<ReportDiff, DiffError> {
    let new = serde_json::to_value(current).map_err(|e| DiffError::NotAReport {
        name: "this run".into(),
        why: format!("the report does not serialise: {e}"),
    })?;
    compare_named(old, &path_name(baseline), &new, "this run")
}

/// Reads a baseline report and checks it can be compared (a report, of a schema this
/// build reads), so a bad --baseline fails before any probing.
pub fn load_baseline(baseline: &Path) -> Result<Value, DiffError> {
    let name = path_name(baseline);
    let old = load(baseline)?;
    let version = version(&old, &name)?;
    findings(&read(&old, version, &name)?, &name)?;
    Ok(old)
}

fn path_name(path: &Path) -> String {
    if path == Path::new("-") {
        "stdin".into()
    } else {
        crate::render::printable(&path.to_string_lossy()).into_owned()
    }
}

fn compare_named(
    old: &Value,
    old_name: &str,
    new: &Value,
    new_name: &str,
) -> Result<ReportDiff, DiffError> {
    let (old_version, new_version) = (version(old, old_name)?, version(new, new_name)?);
    let old = read(old, old_version, old_name)?;
    let new = read(new, new_version, new_name)?;
    let old_side = side(&old, old_name, old_version);
    let new_side = side(&new, new_name, new_version);
    let old_findings = findings(&old, old_name)?;
    let new_findings = findings(&new, new_name)?;

    let ctx = extract::Context::of(&old, &new);
    let (old_facts, new_facts) = extract::both(&old, &new, &ctx);
    let (changes, mut not_compared) = compare_facts(&old_facts, &new_facts);

    let findings = match (old_findings, new_findings) {
        (Some(o), Some(n)) => compare_findings(o, n),
        (o, n) => {
            // An old report always had findings; one without them is read for its facts.
            if o.is_some() != n.is_some() {
                not_compared.push(NotCompared {
                    section: Section::Host,
                    key: "findings".into(),
                    label: "Findings".into(),
                    recorded_in: if o.is_some() { Which::Old } else { Which::New },
                });
            }
            FindingChanges::default()
        }
    };
    Ok(ReportDiff {
        diff_version: DIFF_VERSION,
        old: old_side,
        new: new_side,
        changes,
        not_compared,
        findings,
    })
}

/// Checks that `v` is a report this build reads (its outline: the typed read is `read`),
/// and says its schema_version.
fn version(v: &Value, name: &str) -> Result<u32, DiffError> {
    let not = |why: String| DiffError::NotAReport {
        name: name.to_string(),
        why,
    };
    let Some(obj) = v.as_object() else {
        return Err(not(format!("a JSON {}, not an object", json_kind(v))));
    };
    let version =
        match obj.get("schema_version") {
            None if obj.get("probes").is_some_and(Value::is_object) => return Err(not(
                "a bare snapshot has no findings to compare: save `gpudoctor check --format json`"
                    .into(),
            )),
            None => {
                return Err(not(
                    "no \"schema_version\" (not written by `gpudoctor check --format json`)".into(),
                ))
            }
            Some(v) => v,
        };
    let version = match version.as_u64() {
        Some(n) if n > u64::from(SCHEMA_VERSION) => {
            return Err(DiffError::NewerSchema {
                name: name.to_string(),
                found: n,
            })
        }
        Some(n) if n >= 1 => n as u32,
        _ => {
            let mut shown: String = version.to_string().chars().take(40).collect();
            if shown.len() < version.to_string().len() {
                shown.push('…');
            }
            return Err(not(format!("schema_version {shown} is not a version")));
        }
    };
    if !obj.get("snapshot").is_some_and(Value::is_object) {
        return Err(not("no \"snapshot\" object".into()));
    }
    if obj.get("findings").is_some_and(|f| !f.is_array()) {
        return Err(not("\"findings\" is not a list".into()));
    }
    Ok(version)
}

/// Which report a side is.
fn side(r: &v1::Report, name: &str, schema_version: u32) -> ReportSide {
    let node = r.snapshot.node.as_ref();
    ReportSide {
        label: name.to_string(),
        schema_version,
        gpudoctor_version: r.gpudoctor_version.clone(),
        hostname: node.and_then(|n| n.hostname.clone().flatten().or_else(|| n.name.clone())),
        time: node.and_then(|n| n.time.clone()),
    }
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The report as the typed view of its schema_version (checked by `version`).
fn read(v: &Value, schema_version: u32, name: &str) -> Result<v1::Report, DiffError> {
    let read = match schema_version {
        1 => v1::read(v),
        n => Err(format!("schema_version {n} has no reader")),
    };
    read.map_err(|why| DiffError::NotAReport {
        name: name.to_string(),
        why,
    })
}

/// The report's findings; None when it has no `findings` field.
fn findings(r: &v1::Report, name: &str) -> Result<Option<Vec<FindingRef>>, DiffError> {
    let Some(list) = &r.findings else {
        return Ok(None);
    };
    let mut out = Vec::with_capacity(list.len());
    for (i, f) in list.iter().enumerate() {
        let severity = f.severity.as_deref().and_then(|s| {
            Severity::deserialize(
                serde::de::value::StrDeserializer::<serde::de::value::Error>::new(s),
            )
            .ok()
        });
        let (Some(code), Some(severity)) = (&f.code, severity) else {
            return Err(DiffError::NotAReport {
                name: name.to_string(),
                why: format!("findings[{i}] has no code or no known severity"),
            });
        };
        let mut subjects: Vec<&str> = f
            .evidence
            .iter()
            .flatten()
            .filter_map(|e| e.fact.as_deref())
            .collect();
        subjects.sort_unstable();
        subjects.dedup();
        let title = f.title.clone().unwrap_or_default();
        let mut finding = crate::findings::Finding::new(code, severity, title.clone());
        finding.detail = f.detail.clone().unwrap_or_default();
        finding.evidence = f
            .evidence
            .iter()
            .flatten()
            .map(|e| crate::findings::Evidence {
                fact: None,
                value: e.value.clone().unwrap_or_default(),
                source: e.source.clone().unwrap_or_default(),
            })
            .collect();
        finding.fix = f
            .fix
            .iter()
            .flatten()
            .map(|x| crate::findings::Fix {
                text: x.text.clone().unwrap_or_default(),
                command: x.command.clone(),
            })
            .collect();
        finding.caused_by = f.caused_by.clone();
        finding.cause_note = f.cause_note.clone();
        out.push(FindingRef {
            code: code.clone(),
            severity,
            title,
            subject: (!subjects.is_empty()).then(|| subjects.join(", ")),
            finding,
        });
    }
    Ok(Some(out))
}

/// Matches findings by (code, subject); several with the same key pair up in order.
fn compare_findings(old: Vec<FindingRef>, new: Vec<FindingRef>) -> FindingChanges {
    type Key = (String, Option<String>);
    let key = |f: &FindingRef| -> Key { (f.code.clone(), f.subject.clone()) };
    let mut unmatched_new: HashMap<Key, Vec<FindingRef>> = HashMap::new();
    let mut new_order: Vec<Key> = Vec::new();
    for f in new {
        let k = key(&f);
        if !unmatched_new.contains_key(&k) {
            new_order.push(k.clone());
        }
        unmatched_new.entry(k).or_default().push(f);
    }
    for v in unmatched_new.values_mut() {
        v.reverse(); // pop() takes them in report order
    }
    let mut out = FindingChanges::default();
    for f in old {
        match unmatched_new.get_mut(&key(&f)).and_then(Vec::pop) {
            Some(n) if n.severity != f.severity => out.severity_changed.push(SeverityChange {
                code: n.code,
                subject: n.subject,
                title: n.title,
                old: f.severity,
                new: n.severity,
            }),
            Some(_) => {}
            None => out.went_away.push(f),
        }
    }
    for k in new_order {
        if let Some(mut left) = unmatched_new.remove(&k) {
            left.reverse();
            out.appeared.extend(left);
        }
    }
    let worst_first = |a: &FindingRef, b: &FindingRef| {
        b.severity
            .cmp(&a.severity)
            .then_with(|| a.code.cmp(&b.code))
    };
    out.appeared.sort_by(worst_first);
    out.went_away.sort_by(worst_first);
    out.severity_changed.sort_by(|a, b| {
        b.new
            .max(b.old)
            .cmp(&a.new.max(a.old))
            .then_with(|| a.code.cmp(&b.code))
    });
    out
}

/// Every fact of either side, judged: changed, added, removed, or not compared.
fn compare_facts(old: &Facts, new: &Facts) -> (Vec<Change>, Vec<NotCompared>) {
    let mut judge = Judge::default();
    // Report order: the new report's, then what only the old one has; sections first.
    let mut keys: Vec<&str> = new.order().collect();
    keys.extend(old.order().filter(|k| new.get(k).is_none()));
    for (pos, key) in keys.into_iter().enumerate() {
        match (old.get(key), new.get(key)) {
            (Some(o), Some(n)) => match (&o.value, &n.value) {
                (Some(a), Some(b)) if a != b => judge.changes.push((
                    pos,
                    Change {
                        section: n.section,
                        key: key.to_string(),
                        label: n.label.clone(),
                        kind: ChangeKind::Changed,
                        old: Some(a.clone()),
                        new: Some(b.clone()),
                        absent: n.absent(),
                    },
                )),
                (Some(_), None) => judge.note(pos, key, o, Which::Old),
                (None, Some(_)) => judge.note(pos, key, n, Which::New),
                _ => {}
            },
            (Some(e), None) => judge.one_sided(pos, key, e, Which::Old, old, new),
            (None, Some(e)) => judge.one_sided(pos, key, e, Which::New, new, old),
            (None, None) => {}
        }
    }
    judge.changes.sort_by_key(|(p, c)| (c.section, *p));
    judge.not_compared.sort_by_key(|(p, c)| (c.section, *p));
    (
        judge.changes.into_iter().map(|(_, c)| c).collect(),
        judge.not_compared.into_iter().map(|(_, c)| c).collect(),
    )
}

#[derive(Default)]
struct Judge {
    changes: Vec<(usize, Change)>,
    not_compared: Vec<(usize, NotCompared)>,
    lists_noted: HashSet<String>,
}

impl Judge {
    fn note(&mut self, pos: usize, key: &str, e: &Entry, which: Which) {
        self.not_compared.push((
            pos,
            NotCompared {
                section: e.section,
                key: key.to_string(),
                label: e.label.clone(),
                recorded_in: which,
            },
        ));
    }

    /// A key only `which` side (`this`) has; `other` is the side without it.
    fn one_sided(
        &mut self,
        pos: usize,
        key: &str,
        e: &Entry,
        which: Which,
        this: &Facts,
        other: &Facts,
    ) {
        let there = |parent: Option<&str>| parent.is_none_or(|p| other.get(p).is_some());
        match &e.role {
            // Under something the other side lacks (a GPU gone, NVML silent): that
            // difference is reported, or explained, once by the parent.
            Role::Attr { parent } => {
                if e.value.is_some() && there(parent.as_deref()) {
                    self.note(pos, key, e, which);
                }
            }
            Role::Item { list, summary, .. } => {
                if other.list(list).is_some_and(|l| l.recorded) {
                    let shown = summary.clone().or_else(|| e.value.clone());
                    let (old, new, kind) = match which {
                        Which::Old => (shown, None, ChangeKind::Removed),
                        Which::New => (None, shown, ChangeKind::Added),
                    };
                    self.changes.push((
                        pos,
                        Change {
                            section: e.section,
                            key: key.to_string(),
                            label: e.label.clone(),
                            kind,
                            old,
                            new,
                            absent: e.absent(),
                        },
                    ));
                    return;
                }
                let Some(info) = this.list(list) else {
                    return;
                };
                if there(info.parent.as_deref()) && self.lists_noted.insert(list.clone()) {
                    self.not_compared.push((
                        pos,
                        NotCompared {
                            section: info.section,
                            key: list.clone(),
                            label: info.label.clone(),
                            recorded_in: which,
                        },
                    ));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
