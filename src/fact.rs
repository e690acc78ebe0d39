//! A probed fact: its value or why it is missing, always with where it came from.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::fsys::{FsError, FsErrorKind};

/// `{"source", "value"}`, or `{"source", "missing": {"reason", "detail"}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "Fact_of_{T}")]
pub struct Fact<T> {
    /// Where the fact came from: a path, `env NAME`, `uname(2)`, a command line.
    pub source: String,
    #[serde(flatten)]
    pub outcome: Outcome<T>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Outcome<T> {
    Value(T),
    Missing(Missing),
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Missing {
    pub reason: MissingReason,
    pub detail: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MissingReason {
    NotFound,
    PermissionDenied,
    TimedOut,
    Unreadable,
    Malformed,
    NotProbed,
}

impl MissingReason {
    pub fn as_str(self) -> &'static str {
        match self {
            MissingReason::NotFound => "not found",
            MissingReason::PermissionDenied => "permission denied",
            MissingReason::TimedOut => "timed out",
            MissingReason::Unreadable => "unreadable",
            MissingReason::Malformed => "malformed",
            MissingReason::NotProbed => "not probed",
        }
    }
}

impl<T> Fact<T> {
    pub fn value(source: impl Into<String>, value: T) -> Self {
        Fact {
            source: source.into(),
            outcome: Outcome::Value(value),
        }
    }

    pub fn missing(
        source: impl Into<String>,
        reason: MissingReason,
        detail: impl Into<String>,
    ) -> Self {
        Fact {
            source: source.into(),
            outcome: Outcome::Missing(Missing {
                reason,
                detail: detail.into(),
            }),
        }
    }

    pub fn from_fs_error(err: &FsError) -> Self {
        let reason = match err.kind {
            FsErrorKind::NotFound => MissingReason::NotFound,
            FsErrorKind::PermissionDenied => MissingReason::PermissionDenied,
            _ => MissingReason::Unreadable,
        };
        Fact::missing(err.path.clone(), reason, err.to_string())
    }

    pub fn get(&self) -> Option<&T> {
        match &self.outcome {
            Outcome::Value(v) => Some(v),
            Outcome::Missing(_) => None,
        }
    }

    pub fn missing_info(&self) -> Option<&Missing> {
        match &self.outcome {
            Outcome::Value(_) => None,
            Outcome::Missing(m) => Some(m),
        }
    }
}
