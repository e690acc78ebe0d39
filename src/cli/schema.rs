//! `gpudoctor schema`: the JSON Schema of the `check --format json` report.

use super::settings::Settings;
use super::{emit_report, CliError};

pub(super) fn schema(g: &Settings) -> Result<u8, CliError> {
    emit_report(g, crate::report::json_schema().as_bytes())
}
