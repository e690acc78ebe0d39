//! Human output: the facts by section with ✓ / ! / ✗, then findings worst-first
//! with their evidence and fixes, then one summary line.

use std::fmt::Write;

use super::view::{sections, Line, Mark, Section};
use super::width::{display_width, pad, wrap, wrap_pieces, Piece};
use super::{printable, Style};
use crate::findings::Finding;
use crate::report::Report;
use crate::rules::CheckStatus;
use crate::verdict::Verdict;

pub struct Options {
    pub verbose: bool,
    pub style: Style,
    /// The terminal's width (`render::width::terminal_width`): every line is wrapped to it.
    pub width: usize,
}

pub fn render(report: &Report, opts: &Options) -> String {
    opts.style.finish(report_text(report, opts))
}

fn report_text(report: &Report, opts: &Options) -> String {
    let st = &opts.style;
    let w = opts.width;
    let mut out = String::new();
    let snap = &report.snapshot;
    let mut header = format!("gpudoctor {}", report.gpudoctor_version);
    if let Some(root) = &snap.root {
        let _ = write!(header, " — inspecting --root {}", printable(root));
    }
    let _ = writeln!(out, "{}", wrap(&st.bold(&header), w, "", "  "));
    let _ = writeln!(out, "{}", wrap(&headline(report, st), w, "", "  "));

    let sections = sections(report, opts.verbose);
    if opts.verbose {
        for section in &sections {
            section_table(&mut out, section, st, w);
        }
    } else {
        out.push('\n');
        section_summaries(&mut out, &sections, st, w);
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
            let text = format!(
                "{} ({}) {status}{}",
                c.rule,
                c.codes.join(", "),
                printable(&c.detail)
            );
            let _ = writeln!(out, "{}", wrap(&text, w, &format!("  {mark} "), "    "));
        }
    }

    for f in &report.findings {
        out.push('\n');
        out.push_str(&finding_block(f, st, w, opts.verbose));
    }
    out.push('\n');
    // The last screen names every blocker: the recap just above the summary line.
    let recap = super::recap::render(snap, &report.findings, st, w.min(super::width::PROSE_WIDTH));
    if !recap.is_empty() {
        out.push_str(&recap);
        out.push('\n');
    }
    // The default view leaves out lines, reasons and fixes that -v shows.
    let abridged = !opts.verbose;
    let _ = writeln!(
        out,
        "{}",
        wrap(
            &summary_text(report, st, abridged),
            w.min(super::width::PROSE_WIDTH),
            "",
            ""
        )
    );
    out
}

/// A section as a titled table of all its lines (-v).
fn section_table(out: &mut String, section: &Section, st: &Style, w: usize) {
    let _ = writeln!(out, "\n{}", st.bold(section.title));
    let label_width = label_width(&section.lines, st);
    // The value column: "  ✓ " then the labels, padded, then two spaces.
    let indent = " ".repeat(4 + label_width + 2);
    for line in &section.lines {
        let mark = super::form::mark(line.mark, st);
        let prefix = format!("  {mark} {}  ", pad(&st.text(&line.label), label_width));
        let mut value = line.value.clone();
        if !line.source.is_empty() {
            let _ = write!(value, "  {}", st.dim(&format!("[{}]", line.source)));
        }
        let _ = writeln!(out, "{}", wrap(&value, w, &prefix, &indent));
    }
}

fn label_width<'a>(lines: impl IntoIterator<Item = &'a Line>, st: &Style) -> usize {
    lines
        .into_iter()
        .map(|l| display_width(&st.text(&l.label)))
        .max()
        .unwrap_or(0)
        .min(30)
}

/// Labels that only name their section's subject ("Environment  variables no CUDA-related
/// variable set"): a section's one line leaves them out.
const SUBJECT_LABELS: [&str; 4] = ["variables", "toolkit", "GPUs", "smoke test"];

/// The default view of the sections: one line each (its short title and its first line, with
/// that line's mark), and under it only the lines a finding is about and the notable ones
/// (`Line::notable`); -v shows them all.
fn section_summaries(out: &mut String, sections: &[Section], st: &Style, w: usize) {
    let title_width = sections
        .iter()
        .map(|s| display_width(s.short_title()))
        .max()
        .unwrap_or(0);
    let indent = " ".repeat(2 + title_width + 2);
    for section in sections {
        let Some((lead, rest)) = section.lines.split_first() else {
            continue;
        };
        // The first line's own mark: the lines under it carry theirs.
        let mark = super::form::mark(lead.mark, st);
        let prefix = format!(
            "{mark} {}  ",
            pad(&st.bold(section.short_title()), title_width)
        );
        // "Smoke test  smoke test 6 of 8 …": the label says nothing the title did not.
        let value = if lead.label.eq_ignore_ascii_case(section.short_title())
            || SUBJECT_LABELS.contains(&lead.label.as_str())
        {
            lead.value.clone()
        } else {
            format!("{} {}", st.text(&lead.label), lead.value)
        };
        let _ = writeln!(out, "{}", wrap(&value, w, &prefix, &indent));
        let faults: Vec<&Line> = rest
            .iter()
            .filter(|l| l.mark >= Mark::Info || l.notable)
            .collect();
        // Under the section's value column where the labels fit, else aligned among themselves.
        let label_width =
            label_width(faults.iter().copied(), st).max(title_width.saturating_sub(2));
        let line_indent = " ".repeat(4 + label_width + 2);
        for line in faults {
            let mark = super::form::mark(line.mark, st);
            let prefix = format!("  {mark} {}  ", pad(&st.text(&line.label), label_width));
            let _ = writeln!(out, "{}", wrap(&line.value, w, &prefix, &line_indent));
        }
    }
}

/// Where a finding's evidence, why and fix text continue: under the text after "= why: ".
const FINDING_INDENT: &str = "         ";

/// Fixes a finding shows at most without -v.
const FIXES_SHOWN: usize = 2;

/// How many of `f`'s fixes the default view shows: up to the first that is a command (a
/// step before it, "drain the GPU", stays with it), at most `FIXES_SHOWN`; alternatives and
/// later steps are -v's.
fn fixes_shown(f: &Finding) -> usize {
    f.fix
        .iter()
        .position(|x| x.command.is_some())
        .map_or(1, |i| i + 1)
        .min(FIXES_SHOWN)
        .min(f.fix.len())
}

/// One finding as every human view shows it (check, toolkit, libs, devices, smoke), in one
/// layout: the heading and title; a consequence's cause; the evidence (`-->`, its source in
/// brackets); with `verbose` the reasons (`= why:`); the fixes (`= fix:`, the command on its own
/// line after `$`, never broken), unless `verbose` those up to the first command.
pub fn finding_block(f: &Finding, st: &Style, width: usize, verbose: bool) -> String {
    let mut out = String::new();
    let w = width.min(super::width::PROSE_WIDTH);
    let head = super::form::finding_heading(f.severity, &f.code, st);
    let title = st.bold(&printable(&f.title));
    let _ = writeln!(out, "{}", finding_title(&head, &title, w));
    // A consequence is folded under its cause: why, and no fixes of its own (the cause's
    // fix removes it); --verbose shows it whole.
    if let Some(cause) = &f.caused_by {
        let prefix = format!("  {} ", st.cyan("= why:"));
        let note = format!(
            "caused by {cause} above. {}",
            f.cause_note.as_deref().unwrap_or_default()
        );
        let _ = writeln!(
            out,
            "{}",
            wrap(&printable(&note), w, &prefix, FINDING_INDENT)
        );
        if !verbose {
            return out;
        }
    }
    for e in &f.evidence {
        let text = format!(
            "{}  {}",
            printable(&e.value),
            st.dim(&format!("[{}]", printable(&e.source)))
        );
        let prefix = format!("  {} ", st.cyan("-->"));
        let _ = writeln!(out, "{}", wrap(&text, w, &prefix, "      "));
    }
    if verbose && !f.detail.is_empty() {
        let prefix = format!("  {} ", st.cyan("= why:"));
        let _ = writeln!(
            out,
            "{}",
            wrap(&printable(&f.detail), w, &prefix, FINDING_INDENT)
        );
    }
    for fix in f
        .fix
        .iter()
        .take(if verbose { usize::MAX } else { fixes_shown(f) })
    {
        let prefix = format!("  {} ", st.green("= fix:"));
        let _ = writeln!(
            out,
            "{}",
            wrap(&printable(&fix.text), w, &prefix, FINDING_INDENT)
        );
        // A command is copied into a shell: never broken, even when wider than the line.
        if let Some(cmd) = &fix.command {
            let cmd = st.bold(&format!("$ {}", printable(cmd)));
            let _ = writeln!(
                out,
                "{}",
                wrap_pieces(&[Piece::Whole(&cmd)], w, FINDING_INDENT, FINDING_INDENT)
            );
        }
    }
    out
}

/// `error[GD006]: title` (the title escaped and styled), wrapped under the title's start.
pub(crate) fn finding_title(head: &str, title: &str, width: usize) -> String {
    let prefix = format!("{head}: ");
    let indent = " ".repeat(display_width(&prefix));
    wrap(title, width, &prefix, &indent)
}

pub fn summary_line(report: &Report, st: &Style) -> String {
    summary_text(report, st, false)
}

/// The summary line; `abridged`: the report left out lines, reasons or fixes that -v shows.
fn summary_text(report: &Report, st: &Style, abridged: bool) -> String {
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
        let more = if abridged {
            " — every line with -v"
        } else {
            ""
        };
        return st.green(&format!(
            "✓ no problems found ({passed} checks passed, {na} not applicable){more}"
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
    let mut text = parts.join(", ");
    let consequences = report.findings.iter().filter(|f| !f.is_root()).count();
    if consequences > 0 {
        let _ = write!(
            text,
            " ({consequences} caused by {})",
            roots_causing(report).join(", ")
        );
    }
    // Findings are sorted roots first, so the first root is the first finding.
    let first = report
        .findings
        .iter()
        .find(|f| f.is_root())
        .map_or(&report.findings[0].code, |f| &f.code);
    if abridged {
        format!("{text} — more with -v; `gpudoctor explain {first}` for details")
    } else {
        format!("{text} — run `gpudoctor explain {first}` for details")
    }
}

/// The codes that explain some other finding of the report, in report order.
fn roots_causing(report: &Report) -> Vec<&str> {
    let mut codes: Vec<&str> = Vec::new();
    for f in &report.findings {
        if let Some(c) = f.caused_by.as_deref() {
            if !codes.contains(&c) {
                codes.push(c);
            }
        }
    }
    codes
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

/// The findings of a focused view (toolkit, libs, devices, smoke), each as `check` shows it,
/// a blank line before each.
pub fn findings_blocks(findings: &[Finding], st: &Style, width: usize) -> String {
    findings
        .iter()
        .map(|f| format!("\n{}", finding_block(f, st, width, false)))
        .collect()
}
