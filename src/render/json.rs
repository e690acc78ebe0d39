//! JSON: the Report as is (its types are the contract).

use crate::report::Report;

pub fn render(report: &Report) -> String {
    let mut s = serde_json::to_string_pretty(report)
        .unwrap_or_else(|e| format!("{{\"error\": \"cannot serialise report: {e}\"}}"));
    s.push('\n');
    s
}
