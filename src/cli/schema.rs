//! `gpudoctor schema`: the JSON Schema of the `check --format json` report.

use super::{emit, CliError};

pub(super) fn schema() -> Result<u8, CliError> {
    emit(crate::report::json_schema().as_bytes())
}
