//! JSON: the Report as is (its types are the contract).

use crate::report::Report;

pub fn render(report: &Report) -> String {
    pretty(report, "report")
}

/// Any view as pretty JSON with a final newline; `what` names it if serialisation fails.
pub fn pretty<T: serde::Serialize + ?Sized>(value: &T, what: &str) -> String {
    let mut s = serde_json::to_string_pretty(value)
        .unwrap_or_else(|e| format!("{{\"error\": \"could not serialise the {what}: {e}\"}}"));
    s.push('\n');
    s
}
