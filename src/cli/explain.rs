//! `gpudoctor explain`: a finding code's long explanation, or every code's title.

use super::{emit, CliError};
use crate::codes;

pub(super) fn explain(code: Option<&str>, list: bool) -> Result<u8, CliError> {
    if list {
        let mut s = String::new();
        for c in codes::CODES {
            s.push_str(&format!("{}  {}\n", c.code, c.title));
        }
        return emit(s.as_bytes());
    }
    let code = code.unwrap_or_default();
    match codes::lookup(code) {
        Some(info) => emit(info.explanation.as_bytes()),
        None => Err(CliError::Usage(format!(
            "unknown finding code {code:?}; `gpudoctor explain --list` lists them all"
        ))),
    }
}
