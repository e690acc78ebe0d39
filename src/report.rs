//! The report every format renders: the JSON contract (documented in README.md).

use serde::{Deserialize, Serialize};

use crate::findings::{Finding, Severity, Summary};
use crate::rules::Check;
use crate::snapshot::Snapshot;

/// Bump when a field is renamed, removed or changes meaning.
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub schema_version: u32,
    pub gpudoctor_version: String,
    pub snapshot: Snapshot,
    pub checks: Vec<Check>,
    pub findings: Vec<Finding>,
    pub summary: Summary,
}

impl Report {
    pub fn new(snapshot: Snapshot, checks: Vec<Check>, findings: Vec<Finding>) -> Report {
        let summary = Summary::of(&findings);
        Report {
            schema_version: SCHEMA_VERSION,
            gpudoctor_version: env!("CARGO_PKG_VERSION").to_string(),
            snapshot,
            checks,
            findings,
            summary,
        }
    }

    pub fn worst(&self) -> Option<Severity> {
        self.findings.iter().map(|f| f.severity).max()
    }
}
