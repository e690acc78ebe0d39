//! `gpudoctor diff OLD NEW`: the facts and findings that differ between two saved reports.

use std::path::Path;

use super::settings::Settings;
use super::CliError;

pub(super) fn diff(_g: &Settings, _old: &Path, _new: &Path) -> Result<u8, CliError> {
    Err(CliError::Internal("PENDING".into()))
}
