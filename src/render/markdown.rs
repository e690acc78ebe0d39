//! Markdown: the same report for a bug report or $GITHUB_STEP_SUMMARY.

use std::fmt::Write;

use super::human::summary_line;
use super::view::sections;
use super::{printable, Style};
use crate::findings::{Finding, Severity};
use crate::report::Report;

/// Text made safe for one Markdown table cell.
pub(crate) fn cell(s: &str) -> String {
    printable(s).replace('|', "\\|")
}

pub fn render(report: &Report, verbose: bool) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "## gpudoctor report\n");
    let _ = writeln!(
        out,
        "**{} {}**\n",
        super::form::symbol(report.headline.verdict()),
        printable(&report.headline.text)
    );
    let _ = writeln!(out, "{}\n", summary_line(report, &Style::plain()));
    let mut meta = format!("gpudoctor {}", report.gpudoctor_version);
    if let Some(root) = &report.snapshot.root {
        let _ = write!(meta, " · `--root {}`", printable(root));
    }
    let _ = writeln!(out, "{meta}\n");

    out.push_str(&findings_section(&report.findings));

    for section in sections(report, verbose) {
        let _ = writeln!(out, "### {}\n", section.title);
        let _ = writeln!(out, "| | Fact | Value | Source |\n|---|---|---|---|");
        for l in &section.lines {
            let mark = super::form::symbol(l.mark);
            let _ = writeln!(
                out,
                "| {mark} | {} | {} | `{}` |",
                cell(&l.label),
                cell(&l.value),
                cell(&l.source)
            );
        }
        out.push('\n');
    }
    out
}

/// The findings as Markdown: heading, why, evidence, numbered fixes.
pub fn findings_section(findings: &[Finding]) -> String {
    let mut out = String::new();
    if findings.is_empty() {
        return out;
    }
    let _ = writeln!(out, "### Findings\n");
    for f in findings {
        let icon = match f.severity {
            Severity::Error => "❌",
            Severity::Warning => "⚠️",
            Severity::Info => "ℹ️",
        };
        let _ = writeln!(
            out,
            "#### {icon} {}[{}]: {}\n",
            f.severity.as_str(),
            f.code,
            printable(&f.title)
        );
        if let Some(cause) = &f.caused_by {
            let note = f.cause_note.as_deref().unwrap_or_default();
            let _ = writeln!(out, "*Caused by {cause} above:* {}\n", printable(note));
        }
        if !f.detail.is_empty() {
            let _ = writeln!(out, "{}\n", printable(&f.detail));
        }
        for e in &f.evidence {
            let _ = writeln!(
                out,
                "- `{}` (from `{}`)",
                printable(&e.value).replace('`', "'"),
                printable(&e.source).replace('`', "'")
            );
        }
        if !f.evidence.is_empty() {
            out.push('\n');
        }
        // A consequence's fix is its cause's.
        if !f.fix.is_empty() && f.is_root() {
            let _ = writeln!(out, "**Fix**\n");
            for (i, fix) in f.fix.iter().enumerate() {
                let _ = writeln!(out, "{}. {}", i + 1, printable(&fix.text));
                if let Some(cmd) = &fix.command {
                    let _ = writeln!(out, "   ```sh\n   {}\n   ```", printable(cmd));
                }
            }
            out.push('\n');
        }
    }
    out
}
