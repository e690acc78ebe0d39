//! `gpudoctor diff`: what changed between two reports, as text, JSON or Markdown. The
//! comparing is in src/diff; this only formats it.

use std::fmt::Write;

use super::form::finding_heading;
use super::markdown::cell;
use super::width::wrap;
use super::{printable, Style};
use crate::diff::{Change, FindingRef, NotCompared, ReportDiff, ReportSide, Section, Which};

/// "old.json (gpu1, 2026-01-01T00:00:00Z, gpudoctor 0.1.0)".
fn side(s: &ReportSide) -> String {
    let about: Vec<&str> = [s.hostname.as_deref(), s.time.as_deref()]
        .into_iter()
        .flatten()
        .collect();
    let mut about = about.join(", ");
    if let Some(v) = &s.gpudoctor_version {
        if !about.is_empty() {
            about.push_str(", ");
        }
        let _ = write!(about, "gpudoctor {v}");
    }
    let label = printable(&s.label);
    if about.is_empty() {
        label.into_owned()
    } else {
        format!("{label} ({})", printable(&about))
    }
}

/// The changes grouped by section, in order.
fn by_section(changes: &[Change]) -> Vec<(Section, Vec<&Change>)> {
    let mut out: Vec<(Section, Vec<&Change>)> = Vec::new();
    for c in changes {
        match out.last_mut() {
            Some((s, list)) if *s == c.section => list.push(c),
            _ => out.push((c.section, vec![c])),
        }
    }
    out
}

/// "Not compared (recorded in OLD only): a, b" lines, one per side that has any.
fn not_compared_lines(d: &ReportDiff) -> Vec<String> {
    let mut out = Vec::new();
    for (which, s) in [(Which::Old, &d.old), (Which::New, &d.new)] {
        let labels: Vec<String> = d
            .not_compared
            .iter()
            .filter(|n: &&NotCompared| n.recorded_in == which)
            .map(|n| printable(&n.label).into_owned())
            .collect();
        if !labels.is_empty() {
            out.push(format!(
                "Not compared, recorded in {} only: {}",
                printable(&s.label),
                labels.join(", ")
            ));
        }
    }
    out
}

/// "Changes from OLD to NEW", the changed facts by section (`label: old → new`), then the
/// findings that appeared, went away or changed severity; "No differences" when none.
pub fn render_human(d: &ReportDiff, st: &Style, width: usize) -> String {
    st.finish(human_text(d, st, width, false))
}

/// The comparison under a report that already laid its findings out (`check --baseline`):
/// the findings that appeared are named, not repeated.
pub fn render_human_after_report(d: &ReportDiff, st: &Style, width: usize) -> String {
    st.finish(human_text(d, st, width, true))
}

fn human_text(d: &ReportDiff, st: &Style, width: usize, findings_above: bool) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}",
        wrap(
            &st.bold(&format!(
                "Changes from {} to {}",
                side(&d.old),
                side(&d.new)
            )),
            width,
            "",
            "  "
        )
    );
    if d.is_empty() {
        let _ = writeln!(out, "\n{}", st.green("No differences"));
    }
    for (section, changes) in by_section(&d.changes) {
        let _ = writeln!(out, "\n{}", st.bold(section.title()));
        for c in changes {
            let text = format!(
                "{}: {} {} {}",
                printable(&c.label),
                st.dim(&printable(c.old_text())),
                st.cyan("→"),
                printable(c.new_text())
            );
            let _ = writeln!(out, "{}", wrap(&text, width, "  ", "    "));
        }
    }
    let f = &d.findings;
    let named = |out: &mut String, title: &str, findings: &[FindingRef]| {
        if findings.is_empty() {
            return;
        }
        let _ = writeln!(out, "\n{}", st.bold(title));
        for x in findings {
            let text = format!(
                "{}: {}",
                finding_heading(x.severity, &x.code, st),
                printable(&x.title)
            );
            let _ = writeln!(out, "{}", wrap(&text, width, "  ", "    "));
        }
    };
    // What appeared is what to act on: each in the layout every view gives a finding
    // (evidence, fixes), unless the report above already did; what went away is named.
    if findings_above {
        named(&mut out, "Findings that appeared (above)", &f.appeared);
    } else if !f.appeared.is_empty() {
        let _ = writeln!(out, "\n{}", st.bold("Findings that appeared"));
        for x in &f.appeared {
            // A consequence points at its cause "above": only when the cause appeared too;
            // a cause that was already there is not listed, so this one stands whole.
            let mut finding = x.finding.clone();
            if let Some(cause) = &finding.caused_by {
                if !f.appeared.iter().any(|a| &a.code == cause) {
                    finding.caused_by = None;
                    finding.cause_note = None;
                }
            }
            out.push('\n');
            out.push_str(&super::human::finding_block(&finding, st, width, false));
        }
    }
    named(&mut out, "Findings that went away", &f.went_away);
    if !f.severity_changed.is_empty() {
        let _ = writeln!(out, "\n{}", st.bold("Findings that changed severity"));
        for x in &f.severity_changed {
            let text = format!(
                "{}: {} (was {})",
                finding_heading(x.new, &x.code, st),
                printable(&x.title),
                x.old.as_str()
            );
            let _ = writeln!(out, "{}", wrap(&text, width, "  ", "    "));
        }
    }
    let gaps = not_compared_lines(d);
    if !gaps.is_empty() {
        out.push('\n');
    }
    for line in gaps {
        let _ = writeln!(out, "{}", wrap(&st.dim(&line), width, "", "  "));
    }
    out
}

/// The diff as pretty JSON (its own `diff_version`), with a final newline.
pub fn render_json(d: &ReportDiff) -> String {
    super::json::pretty(d, "diff")
}

/// The diff for an issue or $GITHUB_STEP_SUMMARY: a table per section, then the findings.
pub fn render_markdown(d: &ReportDiff) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "## gpudoctor diff\n");
    let _ = writeln!(
        out,
        "Changes from **{}** to **{}**\n",
        cell(&side(&d.old)),
        cell(&side(&d.new))
    );
    if d.is_empty() {
        let _ = writeln!(out, "No differences\n");
    }
    for (section, changes) in by_section(&d.changes) {
        let _ = writeln!(out, "### {}\n", section.title());
        let _ = writeln!(out, "| Fact | Old | New |\n|---|---|---|");
        for c in changes {
            let _ = writeln!(
                out,
                "| {} | {} | {} |",
                cell(&c.label),
                cell(c.old_text()),
                cell(c.new_text())
            );
        }
        out.push('\n');
    }
    let plain = Style::plain();
    let f = &d.findings;
    let mut list = |title: &str, findings: &[FindingRef]| {
        if findings.is_empty() {
            return;
        }
        let _ = writeln!(out, "### {title}\n");
        for x in findings {
            let _ = writeln!(
                out,
                "- **{}**: {}",
                finding_heading(x.severity, &x.code, &plain),
                printable(&x.title)
            );
        }
        out.push('\n');
    };
    list("Findings that appeared", &f.appeared);
    list("Findings that went away", &f.went_away);
    if !f.severity_changed.is_empty() {
        let _ = writeln!(out, "### Findings that changed severity\n");
        for x in &f.severity_changed {
            let _ = writeln!(
                out,
                "- **{}**: {} (was {})",
                finding_heading(x.new, &x.code, &plain),
                printable(&x.title),
                x.old.as_str()
            );
        }
        out.push('\n');
    }
    for line in not_compared_lines(d) {
        let _ = writeln!(out, "_{}_\n", line.replace('_', "\\_"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::{ChangeKind, FindingChanges, SeverityChange, DIFF_VERSION};
    use crate::findings::Severity;

    fn side(label: &str) -> ReportSide {
        ReportSide {
            label: label.into(),
            schema_version: 1,
            gpudoctor_version: Some("0.1.0".into()),
            hostname: Some("gpu1".into()),
            time: Some("2026-01-01T00:00:00Z".into()),
        }
    }

    fn change(section: Section, label: &str, old: Option<&str>, new: Option<&str>) -> Change {
        Change {
            section,
            key: label.into(),
            label: label.into(),
            kind: match (old, new) {
                (None, _) => ChangeKind::Added,
                (_, None) => ChangeKind::Removed,
                _ => ChangeKind::Changed,
            },
            old: old.map(Into::into),
            new: new.map(Into::into),
            absent: "not installed",
        }
    }

    fn diff() -> ReportDiff {
        ReportDiff {
            diff_version: DIFF_VERSION,
            old: side("before.json"),
            new: side("this run"),
            changes: vec![
                change(
                    Section::Driver,
                    "Driver version",
                    Some("580.95.05"),
                    Some("570.86.15"),
                ),
                change(Section::Python, "nvidia-nccl-cu12", None, Some("2.27.3")),
                change(Section::Python, "pipe|and\nnewline", Some("a|b"), Some("c")),
            ],
            not_compared: vec![NotCompared {
                section: Section::Host,
                key: "host.shm".into(),
                label: "Shared memory (/dev/shm)".into(),
                recorded_in: Which::New,
            }],
            findings: FindingChanges {
                appeared: vec![FindingRef {
                    code: crate::codes::GD034.into(),
                    severity: Severity::Warning,
                    title: "GPU 0: PCIe link is x8, not x16".into(),
                    subject: Some("gpu:0".into()),
                    finding: crate::findings::Finding::new(
                        crate::codes::GD034,
                        Severity::Warning,
                        "GPU 0: PCIe link is x8, not x16",
                    )
                    .context("Gen5 x8 (max Gen5 x16)", "NVML")
                    .fix_cmd(
                        "Confirm what the link trained to",
                        "sudo lspci -vv | grep -E 'LnkCap|LnkSta'",
                    ),
                }],
                went_away: vec![FindingRef {
                    code: crate::codes::GD012.into(),
                    severity: Severity::Warning,
                    title: "CUDA_LAUNCH_BLOCKING=1 is set".into(),
                    subject: None,
                    finding: crate::findings::Finding::new(
                        crate::codes::GD012,
                        Severity::Warning,
                        "CUDA_LAUNCH_BLOCKING=1 is set",
                    ),
                }],
                severity_changed: vec![SeverityChange {
                    code: crate::codes::GD038.into(),
                    subject: None,
                    title: "Persistence mode is off".into(),
                    old: Severity::Info,
                    new: Severity::Warning,
                }],
            },
        }
    }

    #[test]
    fn human_lists_changes_by_section_then_findings() {
        let text = render_human(&diff(), &Style::plain(), 200);
        assert_eq!(
            text,
            "Changes from before.json (gpu1, 2026-01-01T00:00:00Z, gpudoctor 0.1.0) to this run (gpu1, 2026-01-01T00:00:00Z, gpudoctor 0.1.0)\n\
             \n\
             Driver\n  Driver version: 580.95.05 → 570.86.15\n\
             \n\
             Python\n  nvidia-nccl-cu12: not installed → 2.27.3\n  pipe|and\\nnewline: a|b → c\n\
             \n\
             Findings that appeared\n\
             \n\
             warning[GD034]: GPU 0: PCIe link is x8, not x16\n\
             \x20 --> Gen5 x8 (max Gen5 x16)  [NVML]\n\
             \x20 = fix: Confirm what the link trained to\n\
             \x20        $ sudo lspci -vv | grep -E 'LnkCap|LnkSta'\n\
             \n\
             Findings that went away\n  warning[GD012]: CUDA_LAUNCH_BLOCKING=1 is set\n\
             \n\
             Findings that changed severity\n  warning[GD038]: Persistence mode is off (was info)\n\
             \n\
             Not compared, recorded in this run only: Shared memory (/dev/shm)\n"
        );
    }

    #[test]
    fn no_differences_is_said() {
        let mut d = diff();
        d.changes.clear();
        d.not_compared.clear();
        d.findings = FindingChanges::default();
        let text = render_human(&d, &Style::plain(), 80);
        assert!(text.ends_with("\n\nNo differences\n"), "{text}");
        assert!(render_markdown(&d).contains("\nNo differences\n"));
    }

    #[test]
    fn markdown_escapes_cells() {
        let md = render_markdown(&diff());
        assert!(
            md.starts_with("## gpudoctor diff\n\nChanges from **before.json (gpu1"),
            "{md}"
        );
        assert!(md.contains("### Driver\n\n| Fact | Old | New |\n|---|---|---|\n| Driver version | 580.95.05 | 570.86.15 |\n"), "{md}");
        assert!(md.contains("| pipe\\|and\\nnewline | a\\|b | c |"), "{md}");
        assert!(
            md.contains("- **warning[GD034]**: GPU 0: PCIe link is x8, not x16"),
            "{md}"
        );
        assert!(
            md.contains("- **warning[GD038]**: Persistence mode is off (was info)"),
            "{md}"
        );
        assert!(
            md.contains("_Not compared, recorded in this run only: Shared memory (/dev/shm)_"),
            "{md}"
        );
    }

    #[test]
    fn json_is_the_diff_as_is() {
        let v: serde_json::Value = serde_json::from_str(&render_json(&diff())).unwrap();
        assert_eq!(v["diff_version"], DIFF_VERSION);
        assert_eq!(v["changes"][1]["kind"], "added");
        assert_eq!(v["changes"][1]["old"], serde_json::Value::Null);
        assert_eq!(v["findings"]["severity_changed"][0]["old"], "info");
        assert_eq!(v["not_compared"][0]["recorded_in"], "new");
    }
}
