//! `gpudoctor diff OLD NEW`: the facts and findings that differ between two saved reports.
//! Exit status as diff(1)'s, refined by --fail-on: 0 nothing differs; 1 something differs
//! (with --fail-on: only when a finding at or above it appeared or got worse); 2 a file
//! could not be read or compared.

use std::path::Path;

use super::args::FailOn;
use super::options::ViewFormat;
use super::settings::Settings;
use super::{emit_report, CliError};
use crate::diff::ReportDiff;
use crate::findings::Severity;
use crate::render::{self, Style};

pub(super) fn diff(g: &Settings, old: &Path, new: &Path) -> Result<u8, CliError> {
    if old == Path::new("-") && new == Path::new("-") {
        return Err(CliError::Usage(
            "only one of OLD and NEW can be `-` (standard input)".into(),
        ));
    }
    let d = crate::diff::compare_files(old, new).map_err(|e| CliError::Usage(e.to_string()))?;
    let text = match ViewFormat::of(g) {
        ViewFormat::Json => render::diff::render_json(&d),
        ViewFormat::Markdown => render::diff::render_markdown(&d),
        ViewFormat::Human => {
            render::diff::render_human(&d, &Style::for_stdout(), render::width::for_stdout())
        }
    };
    emit_report(g, text.as_bytes())?;
    Ok(exit_status(&d, g.fail_on, g.fail_on_given()))
}

/// Without --fail-on any difference is 1, as diff(1); with it, only findings at or above
/// the threshold that appeared or got worse.
fn exit_status(d: &ReportDiff, fail_on: FailOn, fail_on_given: bool) -> u8 {
    if !fail_on_given {
        return u8::from(!d.is_empty());
    }
    let threshold = match fail_on {
        FailOn::Error => Severity::Error,
        FailOn::Warning => Severity::Warning,
        FailOn::Never => return 0,
    };
    let appeared = d.findings.appeared.iter().any(|f| f.severity >= threshold);
    let worse = d
        .findings
        .severity_changed
        .iter()
        .any(|c| c.new >= threshold && c.new > c.old);
    u8::from(appeared || worse)
}
