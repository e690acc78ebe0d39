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

/// One observed fact a finding rests on. `fact` is the subject it marks as wrong
/// (`Subject`'s text form); None for facts quoted only as context (e.g. "the driver
/// itself is loaded").
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
pub struct Evidence {
    pub fact: Option<String>,
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
        }
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
            fact: Some(subject.to_string()),
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

    pub fn fix_cmd(mut self, text: impl Into<String>, command: impl Into<String>) -> Self {
        self.fix.push(Fix {
            text: text.into(),
            command: Some(command.into()),
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

/// Worst first, then by code, so every format lists findings in the same order.
pub fn sort_findings(findings: &mut [Finding]) {
    findings.sort_by(|a, b| {
        b.severity
            .cmp(&a.severity)
            .then_with(|| a.code.cmp(&b.code))
    });
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
    fn shell_quoting() {
        assert_eq!(sh_quote("video"), "video");
        assert_eq!(sh_quote("0000:01:00.0"), "0000:01:00.0");
        assert_eq!(sh_quote("a b"), "'a b'");
        assert_eq!(sh_quote("x;rm -rf /"), "'x;rm -rf /'");
        assert_eq!(sh_quote("it's"), "'it'\\''s'");
        assert_eq!(sh_quote(""), "''");
    }
}
