//! What rules produce: a coded finding with its evidence and ordered fixes.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::subject::Subject;

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// One observed fact a finding rests on. `fact` is the subject it marks as wrong (in JSON,
/// `Subject`'s text form); None for facts quoted only as context (e.g. "the driver itself is
/// loaded").
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub struct Evidence {
    #[serde(
        serialize_with = "subject_text",
        deserialize_with = "known_subject",
        default
    )]
    #[schemars(with = "Option<String>")]
    pub fact: Option<Subject>,
    pub value: String,
    pub source: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub struct Fix {
    pub text: String,
    /// A copy-pasteable shell command, when the fix is one.
    pub command: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Finding {
    pub code: String,
    pub severity: Severity,
    pub title: String,
    pub detail: String,
    pub evidence: Vec<Evidence>,
    pub fix: Vec<Fix>,
    /// The root cause's code when another finding of this report explains this one
    /// (src/rules/causes.rs): the cause's fix removes both.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub caused_by: Option<String>,
    /// How the cause explains this finding, in one sentence (set with `caused_by`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause_note: Option<String>,
}

impl Finding {
    pub fn new(code: &str, severity: Severity, title: impl Into<String>) -> Self {
        Finding {
            code: code.to_string(),
            severity,
            title: title.into(),
            detail: String::new(),
            evidence: Vec::new(),
            fix: Vec::new(),
            caused_by: None,
            cause_note: None,
        }
    }

    /// Whether no other finding of the report explains this one.
    pub fn is_root(&self) -> bool {
        self.caused_by.is_none()
    }

    pub fn detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = detail.into();
        self
    }

    /// Evidence about `subject`: the report lines showing that subject get this
    /// finding's mark.
    pub fn evidence(
        mut self,
        subject: Subject,
        value: impl Into<String>,
        source: impl Into<String>,
    ) -> Self {
        self.evidence.push(Evidence {
            fact: Some(subject),
            value: value.into(),
            source: source.into(),
        });
        self
    }

    /// Evidence that explains the finding without being wrong itself.
    pub fn context(mut self, value: impl Into<String>, source: impl Into<String>) -> Self {
        self.evidence.push(Evidence {
            fact: None,
            value: value.into(),
            source: source.into(),
        });
        self
    }

    pub fn fix_text(mut self, text: impl Into<String>) -> Self {
        self.fix.push(Fix {
            text: text.into(),
            command: None,
        });
        self
    }

    /// A fix with a command. The command is a `Shell`: a literal, or built by `sh!`, which
    /// quotes every value it interpolates; a `String` does not compile here.
    pub fn fix_cmd(mut self, text: impl Into<String>, command: impl Into<Shell>) -> Self {
        self.fix.push(Fix {
            text: text.into(),
            command: Some(command.into().0),
        });
        self
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Summary {
    pub errors: usize,
    pub warnings: usize,
    pub infos: usize,
}

impl Summary {
    pub fn of(findings: &[Finding]) -> Summary {
        let mut s = Summary::default();
        for f in findings {
            match f.severity {
                Severity::Error => s.errors += 1,
                Severity::Warning => s.warnings += 1,
                Severity::Info => s.infos += 1,
            }
        }
        s
    }
}

/// Root causes worst first, then by code; each consequence right after its cause, worst
/// first. Every format lists findings in this order.
pub fn sort_findings(findings: &mut [Finding]) {
    let worst_first = |a: &Finding, b: &Finding| {
        b.severity
            .cmp(&a.severity)
            .then_with(|| a.code.cmp(&b.code))
    };
    findings.sort_by(worst_first);
    // Each root keeps its own place; a consequence goes after the first finding of its cause
    // (a consequence whose cause is absent stands as a root).
    let keys: Vec<(usize, bool, usize)> = (0..findings.len())
        .map(|i| {
            let cause = findings[i]
                .caused_by
                .as_deref()
                .and_then(|c| findings.iter().position(|r| r.code == c && r.is_root()));
            match cause {
                Some(r) => (r, true, i),
                None => (i, false, i),
            }
        })
        .collect();
    let mut order: Vec<usize> = (0..findings.len()).collect();
    order.sort_by_key(|&i| keys[i]);
    let sorted: Vec<Finding> = order.iter().map(|&i| findings[i].clone()).collect();
    findings.clone_from_slice(&sorted);
}

/// Drops each `caused_by` whose cause is no longer in the report at least as severe as the
/// consequence (a configured severity or `ignore` changed it), so the roots alone still
/// carry the verdict.
pub fn unlink_weaker_causes(findings: &mut [Finding]) {
    let causes: Vec<(String, Severity)> = findings
        .iter()
        .filter(|f| f.is_root())
        .map(|f| (f.code.clone(), f.severity))
        .collect();
    for f in findings.iter_mut() {
        let holds = f.caused_by.as_ref().is_some_and(|c| {
            causes
                .iter()
                .any(|(code, sev)| code == c && *sev >= f.severity)
        });
        if !holds {
            f.caused_by = None;
            f.cause_note = None;
        }
    }
}

/// A command line for a fix: a literal of the source, or what `sh!` built from a literal
/// template and quoted values. Nothing read from the inspected system (a path, a bus id, a
/// package name, a report's field) can reach a command any other way, so none can turn it into
/// another command.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Shell(String);

impl Shell {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// For `sh!` only: `text` is its template with every value already a `ShellArg` word.
    #[doc(hidden)]
    pub fn from_sh_macro(text: String) -> Shell {
        Shell(text)
    }

    /// `gpudoctor recommend`'s install lines (src/recommend/commands.rs): built from the
    /// compatibility tables' requirements, with every name read from the environment quoted.
    pub(crate) fn recommended(lines: &[String]) -> Shell {
        Shell(lines.join(" && "))
    }

    /// Commands joined by a literal separator (`" && "`, `"; "`, `" "`).
    pub fn join(parts: impl IntoIterator<Item = Shell>, separator: &'static str) -> Shell {
        let words: Vec<String> = parts.into_iter().map(|p| p.0).collect();
        Shell(words.join(separator))
    }
}

impl From<&'static str> for Shell {
    fn from(literal: &'static str) -> Shell {
        Shell(literal.to_string())
    }
}

impl std::fmt::Display for Shell {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// A value as one word of a shell command: text is quoted (`sh_quote`), numbers are digits,
/// a `Shell` is already a command fragment.
pub trait ShellArg {
    fn shell_word(&self) -> String;
}

impl ShellArg for str {
    fn shell_word(&self) -> String {
        sh_quote(self)
    }
}

impl ShellArg for String {
    fn shell_word(&self) -> String {
        sh_quote(self)
    }
}

impl ShellArg for std::path::Path {
    fn shell_word(&self) -> String {
        sh_quote(&self.to_string_lossy())
    }
}

impl ShellArg for std::path::PathBuf {
    fn shell_word(&self) -> String {
        self.as_path().shell_word()
    }
}

impl ShellArg for Shell {
    fn shell_word(&self) -> String {
        self.0.clone()
    }
}

/// A list is that many words, each quoted, separated by spaces.
impl<T: ShellArg> ShellArg for [T] {
    fn shell_word(&self) -> String {
        let words: Vec<String> = self.iter().map(ShellArg::shell_word).collect();
        words.join(" ")
    }
}

impl<T: ShellArg> ShellArg for Vec<T> {
    fn shell_word(&self) -> String {
        self.as_slice().shell_word()
    }
}

impl<T: ShellArg + ?Sized> ShellArg for &T {
    fn shell_word(&self) -> String {
        (**self).shell_word()
    }
}

macro_rules! digits_are_words {
    ($($t:ty),*) => {$(
        impl ShellArg for $t {
            fn shell_word(&self) -> String {
                self.to_string()
            }
        }
    )*};
}
digits_are_words!(u8, u16, u32, u64, usize, i32, i64);

/// Whether `sh!`'s template interpolates only with bare `{}` outside quotes: a named or
/// inline `{name}` would bypass the quoting, and a quoted word inside `'…'` or `"…"` would
/// end the outer quotes. Checked at compile time.
// Used by `sh!`'s compile-time assertion, which rustc 1.85's dead-code lint does not count.
#[allow(dead_code)]
pub const fn shell_template_ok(template: &str) -> bool {
    let b = template.as_bytes();
    let (mut i, mut single, mut double) = (0, false, false);
    while i < b.len() {
        let c = b[i];
        if c == b'\\' && !single {
            // `\{}` would leave the value's opening quote escaped.
            if i + 1 < b.len() && b[i + 1] == b'{' {
                return false;
            }
            i += 2;
            continue;
        }
        if c == b'\'' && !double {
            single = !single;
        } else if c == b'"' && !single {
            double = !double;
        } else if c == b'{' {
            if i + 1 < b.len() && b[i + 1] == b'{' {
                i += 2;
                continue;
            }
            if single || double || i + 1 >= b.len() || b[i + 1] != b'}' {
                return false;
            }
            // `${}` would make the quoted value bash's `$'…'`, where a backslash escapes.
            if i > 0 && b[i - 1] == b'$' {
                return false;
            }
        }
        i += 1;
    }
    !single && !double
}

/// A fix command from a literal template and values, each value quoted as one shell word
/// (`ShellArg`): `sh!("sudo nvidia-smi -i {} -r", index)`. Templates take bare `{}` only,
/// outside quotes (`shell_template_ok`, checked when it compiles).
#[macro_export]
#[doc(hidden)]
macro_rules! sh {
    ($template:literal $(, $arg:expr)* $(,)?) => {{
        const _: () = assert!(
            $crate::findings::shell_template_ok($template),
            "sh!: interpolate with bare {{}} outside quotes only"
        );
        $crate::findings::Shell::from_sh_macro(format!(
            $template $(, $crate::findings::ShellArg::shell_word(&$arg))*
        ))
    }};
}

/// Quotes a value for a POSIX shell command line, unless it is plainly safe as is.
/// Names read from an inspected system must never turn a suggested command into another one.
pub fn sh_quote(s: &str) -> String {
    let safe = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_./:@%+=,-".contains(&b));
    if safe {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fact_is_written_as_its_key_and_an_unknown_key_reads_as_context() {
        let e = Evidence {
            fact: Some(Subject::Gpu(3)),
            value: "v".into(),
            source: "s".into(),
        };
        let json = serde_json::to_value(&e).unwrap();
        assert_eq!(json["fact"], "gpu:3");
        assert_eq!(serde_json::from_value::<Evidence>(json).unwrap(), e);
        let newer: Evidence =
            serde_json::from_str(r#"{"fact":"a-kind-of-tomorrow:1","value":"v","source":"s"}"#)
                .unwrap();
        assert_eq!(newer.fact, None);
        let context: Evidence = serde_json::from_str(r#"{"value":"v","source":"s"}"#).unwrap();
        assert_eq!(context.fact, None);
    }

    #[test]
    fn shell_quoting() {
        assert_eq!(sh_quote("video"), "video");
        assert_eq!(sh_quote("0000:01:00.0"), "0000:01:00.0");
        assert_eq!(sh_quote("a b"), "'a b'");
        assert_eq!(sh_quote("x;rm -rf /"), "'x;rm -rf /'");
        assert_eq!(sh_quote("it's"), "'it'\\''s'");
        assert_eq!(sh_quote(""), "''");
    }

    #[test]
    fn sh_quotes_every_value_it_interpolates() {
        let bus = "0000:1b:00.0$(touch PWNED)";
        assert_eq!(
            sh!("cat /sys/bus/pci/devices/{}/numa_node", bus).as_str(),
            "cat /sys/bus/pci/devices/'0000:1b:00.0$(touch PWNED)'/numa_node"
        );
        assert_eq!(
            sh!("nvidia-smi -i {} -r", 3u32).as_str(),
            "nvidia-smi -i 3 -r"
        );
        let inner = sh!("unset {}", "X");
        assert_eq!(sh!("{} && echo ok", inner).as_str(), "unset X && echo ok");
        assert_eq!(
            sh!("{} -c 'import torch'", std::path::Path::new("/a b/python")).as_str(),
            "'/a b/python' -c 'import torch'"
        );
    }

    #[test]
    fn a_template_may_not_interpolate_inside_quotes_or_by_name() {
        assert!(shell_template_ok("echo {} | sudo tee /etc/x"));
        assert!(shell_template_ok("printf 'a\\n%s' {} {{literal}}"));
        assert!(!shell_template_ok("echo '{}'"));
        assert!(!shell_template_ok("echo \"x {}\""));
        assert!(!shell_template_ok("echo {name}"));
        assert!(!shell_template_ok("echo {0}"));
        assert!(!shell_template_ok("echo {:?}"));
        assert!(!shell_template_ok("echo 'unterminated"));
        assert!(!shell_template_ok("echo \\{}"), "an escaped opening quote");
        assert!(!shell_template_ok("echo ${}"), "bash ANSI-C quoting");
        assert!(
            shell_template_ok("echo \\\\ {}"),
            "an escaped backslash, then a word"
        );
    }
}

#[cfg(test)]
mod order_tests {
    use super::*;

    fn f(code: &str, severity: Severity, cause: Option<&str>) -> Finding {
        let mut f = Finding::new(code, severity, code);
        f.caused_by = cause.map(str::to_string);
        f
    }

    fn order(findings: &[Finding]) -> Vec<(String, Severity)> {
        findings
            .iter()
            .map(|f| (f.code.clone(), f.severity))
            .collect()
    }

    #[test]
    fn roots_stay_worst_first_when_one_code_has_two_severities() {
        let mut v = vec![
            f(crate::codes::GD017, Severity::Warning, None),
            f(crate::codes::GD042, Severity::Error, None),
            f(crate::codes::GD017, Severity::Error, None),
        ];
        sort_findings(&mut v);
        assert_eq!(
            order(&v),
            [
                (crate::codes::GD017.into(), Severity::Error),
                (crate::codes::GD042.into(), Severity::Error),
                (crate::codes::GD017.into(), Severity::Warning)
            ]
        );
    }

    #[test]
    fn a_consequence_follows_its_cause() {
        let mut v = vec![
            f(
                crate::codes::GD017,
                Severity::Error,
                Some(crate::codes::GD018),
            ),
            f(crate::codes::GD002, Severity::Error, None),
            f(crate::codes::GD038, Severity::Info, None),
            f(crate::codes::GD018, Severity::Error, None),
        ];
        sort_findings(&mut v);
        let codes: Vec<&str> = v.iter().map(|f| f.code.as_str()).collect();
        assert_eq!(
            codes,
            [
                crate::codes::GD002,
                crate::codes::GD018,
                crate::codes::GD017,
                crate::codes::GD038
            ]
        );
    }

    #[test]
    fn a_cause_made_weaker_or_ignored_no_longer_explains() {
        let mut v = vec![
            f(
                crate::codes::GD017,
                Severity::Error,
                Some(crate::codes::GD018),
            ),
            f(crate::codes::GD018, Severity::Warning, None),
            f(
                crate::codes::GD042,
                Severity::Error,
                Some(crate::codes::GD044),
            ),
        ];
        unlink_weaker_causes(&mut v);
        assert!(v.iter().all(Finding::is_root));
        let mut v = vec![
            f(
                crate::codes::GD017,
                Severity::Warning,
                Some(crate::codes::GD018),
            ),
            f(crate::codes::GD018, Severity::Error, None),
        ];
        unlink_weaker_causes(&mut v);
        assert_eq!(v[0].caused_by.as_deref(), Some(crate::codes::GD018));
    }
}

fn subject_text<S: serde::Serializer>(fact: &Option<Subject>, s: S) -> Result<S::Ok, S::Error> {
    match fact {
        Some(subject) => s.collect_str(subject),
        None => s.serialize_none(),
    }
}

/// A saved report's fact key; a key this version does not know (a newer report's) marks
/// nothing, as before.
fn known_subject<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Subject>, D::Error> {
    let key: Option<String> = Deserialize::deserialize(d)?;
    Ok(key.as_deref().and_then(Subject::parse))
}
