//! Human output: the facts by section with ✓ / ! / ✗, then findings worst-first
//! with their evidence and fixes, then one summary line.

use std::fmt::Write;

use super::view::sections;
use super::{printable, Style};
use crate::findings::Finding;
use crate::report::Report;
use crate::rules::CheckStatus;
use crate::verdict::Verdict;

pub struct Options {
    pub verbose: bool,
    pub style: Style,
    pub width: usize,
}

pub fn render(report: &Report, opts: &Options) -> String {
    opts.style.finish(report_text(report, opts))
}

fn report_text(report: &Report, opts: &Options) -> String {
    let st = &opts.style;
    let mut out = String::new();
    let snap = &report.snapshot;
    let mut header = format!("gpudoctor {}", report.gpudoctor_version);
    if let Some(root) = &snap.root {
        let _ = write!(header, " — inspecting --root {}", printable(root));
    }
    let _ = writeln!(out, "{}", st.bold(&header));
    let _ = writeln!(out, "{}", headline(report, st));

    for section in sections(report, opts.verbose) {
        let _ = writeln!(out, "\n{}", st.bold(section.title));
        let width = section
            .lines
            .iter()
            .map(|l| st.text(&l.label).chars().count())
            .max()
            .unwrap_or(0)
            .min(30);
        for line in &section.lines {
            let mark = super::form::mark(line.mark, st);
            let label = st.text(&line.label);
            let pad = width.saturating_sub(label.chars().count());
            let _ = write!(out, "  {mark} {}{}  {}", label, " ".repeat(pad), line.value);
            if opts.verbose && !line.source.is_empty() {
                let _ = write!(out, "  {}", st.dim(&format!("[{}]", line.source)));
            }
            out.push('\n');
        }
    }

    if opts.verbose {
        let _ = writeln!(out, "\n{}", st.bold("Checks"));
        for c in &report.checks {
            let mark = match c.status {
                CheckStatus::Passed => st.green("✓"),
                CheckStatus::Failed => st.red("✗"),
                CheckStatus::NotApplicable | CheckStatus::Skipped => st.dim("-"),
            };
            let status = match c.status {
                CheckStatus::Passed => String::new(),
                CheckStatus::Failed => "failed: ".into(),
                CheckStatus::NotApplicable => "not applicable: ".into(),
                CheckStatus::Skipped => "skipped: ".into(),
            };
            let _ = writeln!(
                out,
                "  {mark} {} ({}) {status}{}",
                c.rule,
                c.codes.join(", "),
                printable(&c.detail)
            );
        }
    }

    for f in &report.findings {
        out.push('\n');
        render_finding(&mut out, f, opts);
    }
    out.push('\n');
    let _ = writeln!(out, "{}", summary_line(report, st));
    out
}

fn render_finding(out: &mut String, f: &Finding, opts: &Options) {
    let st = &opts.style;
    let head = super::form::finding_heading(f.severity, &f.code, st);
    let _ = writeln!(out, "{head}: {}", st.bold(&printable(&f.title)));
    for e in &f.evidence {
        let _ = writeln!(
            out,
            "  {} {}  {}",
            st.cyan("-->"),
            printable(&e.value),
            st.dim(&format!("[{}]", printable(&e.source)))
        );
    }
    if !f.detail.is_empty() {
        let indent = "         ";
        for (i, line) in wrap(
            &printable(&f.detail),
            opts.width.saturating_sub(indent.len()).max(40),
        )
        .iter()
        .enumerate()
        {
            if i == 0 {
                let _ = writeln!(out, "  {} {line}", st.cyan("= why:"));
            } else {
                let _ = writeln!(out, "{indent}{line}");
            }
        }
    }
    for fix in &f.fix {
        let _ = writeln!(out, "  {} {}", st.green("= fix:"), printable(&fix.text));
        if let Some(cmd) = &fix.command {
            let _ = writeln!(
                out,
                "         {}",
                st.bold(&format!("$ {}", printable(cmd)))
            );
        }
    }
}

/// The report's outcome (`crate::headline`), marked and coloured as its verdict.
pub fn headline(report: &Report, st: &Style) -> String {
    let h = &report.headline;
    let text = printable(&h.text);
    let text = match h.verdict() {
        Verdict::Error => st.red(&text),
        Verdict::Warning => st.yellow(&text),
        Verdict::Passed => st.green(&text),
        Verdict::Info | Verdict::NotJudged => st.bold(&text),
    };
    format!("{} {text}", super::form::mark(h.verdict(), st))
}

pub fn summary_line(report: &Report, st: &Style) -> String {
    let s = &report.summary;
    if report.findings.is_empty() {
        let passed = report
            .checks
            .iter()
            .filter(|c| c.status == CheckStatus::Passed)
            .count();
        let na = report
            .checks
            .iter()
            .filter(|c| c.status == CheckStatus::NotApplicable)
            .count();
        return st.green(&format!(
            "✓ no problems found ({passed} checks passed, {na} not applicable)"
        ));
    }
    let mut parts = Vec::new();
    let plural =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    if s.errors > 0 {
        parts.push(st.red(&plural(s.errors, "error", "errors")));
    }
    if s.warnings > 0 {
        parts.push(st.yellow(&plural(s.warnings, "warning", "warnings")));
    }
    if s.infos > 0 {
        parts.push(plural(s.infos, "note", "notes"));
    }
    let first = &report.findings[0].code;
    format!(
        "{} — run `gpudoctor explain {first}` for details",
        parts.join(", ")
    )
}

/// Greedy word wrap; words longer than the width stay whole.
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut cur = String::new();
    for word in text.split_whitespace() {
        if !cur.is_empty() && cur.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut cur));
        }
        if !cur.is_empty() {
            cur.push(' ');
        }
        cur.push_str(word);
    }
    if !cur.is_empty() {
        lines.push(cur);
    }
    lines
}
