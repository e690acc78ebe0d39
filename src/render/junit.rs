//! JUnit XML for CI test reporters (GitLab, Jenkins, GitHub actions that read JUnit): one
//! testsuite, one testcase per rule. A failed check (a warning or an error) is one
//! <failure> naming all its findings, its `type` the worst severity; a passed check may carry info notes, which go to
//! <system-out> so they show without failing the suite. Not-applicable and skipped checks
//! are <skipped>. `errors` is always 0: a probe that broke is itself a finding (GD016).

use std::fmt::Write;

use crate::findings::Finding;
use crate::report::Report;
use crate::rules::{Check, CheckStatus};

/// `now` stands in for the time of a report that carries none (an old `--from` replay).
pub fn render(report: &Report, now: std::time::SystemTime) -> String {
    let snap = &report.snapshot;
    let count = |s: CheckStatus| report.checks.iter().filter(|c| c.status == s).count();
    let tests = report.checks.len();
    let failures = count(CheckStatus::Failed);
    let skipped = count(CheckStatus::NotApplicable) + count(CheckStatus::Skipped);
    let node = snap.node.as_ref();
    // Reports replayed from an old --from file may lack the node: then the time is now.
    let timestamp = node
        .map(|n| n.time.clone())
        .unwrap_or_else(|| humantime::format_rfc3339_seconds(now).to_string());
    let node_name = node.map(|n| n.name.as_str()).unwrap_or("unknown");

    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites name=\"gpudoctor\" tests=\"{tests}\" failures=\"{failures}\" errors=\"0\" skipped=\"{skipped}\">"
    );
    let _ = writeln!(
        out,
        "  <testsuite name=\"gpudoctor\" tests=\"{tests}\" failures=\"{failures}\" errors=\"0\" skipped=\"{skipped}\" timestamp=\"{}\" hostname=\"{}\">",
        attr(&timestamp),
        attr(node_name)
    );

    out.push_str("    <properties>\n");
    let gpus = report.derived.gpu_count.as_ref().map_or(0, |g| g.count);
    let mut props: Vec<(&str, String)> = vec![
        ("node", node_name.to_string()),
        ("gpudoctor_version", report.gpudoctor_version.clone()),
    ];
    // Left out when no driver is found, rather than an empty value.
    if let Some(d) = &report.derived.driver {
        props.push(("driver_version", d.version.clone()));
    }
    props.extend([
        ("gpu_count", gpus.to_string()),
        ("errors", report.summary.errors.to_string()),
        ("warnings", report.summary.warnings.to_string()),
        ("infos", report.summary.infos.to_string()),
    ]);
    if let Some(root) = &snap.root {
        props.push(("root", root.clone()));
    }
    for (name, value) in props {
        let _ = writeln!(
            out,
            "      <property name=\"{name}\" value=\"{}\"/>",
            attr(&value)
        );
    }
    out.push_str("    </properties>\n");

    for check in &report.checks {
        testcase(&mut out, check, &report.findings);
    }
    out.push_str("  </testsuite>\n</testsuites>\n");
    out
}

fn testcase(out: &mut String, check: &Check, findings: &[Finding]) {
    let name = format!("{} ({})", check.rule, check.codes.join(", "));
    let _ = write!(
        out,
        "    <testcase classname=\"gpudoctor.{}\" name=\"{}\"",
        attr(&check.rule),
        attr(&name)
    );
    let own: Vec<&Finding> = findings
        .iter()
        .filter(|f| check.codes.contains(&f.code))
        .collect();
    match check.status {
        CheckStatus::Passed if own.is_empty() => out.push_str("/>\n"),
        CheckStatus::Passed => {
            // Info notes only: visible in the test's output, not a failure.
            out.push_str(">\n      <system-out>");
            for f in &own {
                out.push_str(&text(&finding_text(f)));
            }
            out.push_str("</system-out>\n    </testcase>\n");
        }
        CheckStatus::Failed => {
            out.push_str(">\n");
            // One <failure> per testcase (Jenkins reads only the first, and the Ant schema
            // allows one): its message is the check's detail (every finding's code and
            // title), its text holds the findings, its type is the worst severity. A check
            // fails only with a finding above info.
            let worst = own.iter().map(|f| f.severity).max();
            let body: String = own
                .iter()
                .map(|f| finding_text(f))
                .collect::<Vec<_>>()
                .join("\n");
            let _ = writeln!(
                out,
                "      <failure message=\"{}\" type=\"{}\">{}</failure>",
                attr(&check.detail),
                worst.map_or("error", |w| w.as_str()),
                text(&body)
            );
            out.push_str("    </testcase>\n");
        }
        CheckStatus::NotApplicable | CheckStatus::Skipped => {
            let why = match check.status {
                CheckStatus::Skipped => "skipped",
                _ => "not applicable",
            };
            let _ = writeln!(
                out,
                ">\n      <skipped message=\"{}\"/>\n    </testcase>",
                attr(&format!("{why}: {}", check.detail))
            );
        }
    }
}

/// A finding as plain text, laid out like the human report.
fn finding_text(f: &Finding) -> String {
    let mut s = format!("{}[{}]: {}\n", f.severity.as_str(), f.code, f.title);
    if let Some(cause) = &f.caused_by {
        let note = f.cause_note.as_deref().unwrap_or_default();
        let _ = writeln!(s, "  = caused by {cause}: {note}");
    }
    for e in &f.evidence {
        let _ = writeln!(s, "  --> {}  [{}]", e.value, e.source);
    }
    if !f.detail.is_empty() {
        let _ = writeln!(s, "  = why: {}", f.detail);
    }
    // A consequence's fix is its cause's.
    for fix in f.fix.iter().filter(|_| f.is_root()) {
        let _ = writeln!(s, "  = fix: {}", fix.text);
        if let Some(cmd) = &fix.command {
            let _ = writeln!(s, "         $ {cmd}");
        }
    }
    s
}

/// Text content: markup escaped, characters XML 1.0 forbids made visible.
fn text(s: &str) -> String {
    escape(s, false)
}

/// An attribute value: as text, plus quotes, and line breaks and tabs as character
/// references (a parser would otherwise normalise them to spaces).
fn attr(s: &str) -> String {
    escape(s, true)
}

fn escape(s: &str, in_attr: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' if in_attr => out.push_str("&quot;"),
            '\n' if in_attr => out.push_str("&#10;"),
            '\t' if in_attr => out.push_str("&#9;"),
            '\n' | '\t' => out.push(c),
            // A literal CR would be read back as LF; every other control character is
            // either forbidden by XML 1.0 (C0) or discouraged (DEL, C1), and U+FFFE/U+FFFF
            // are not characters. Values come from the inspected system: show them as
            // escapes, as the human report does.
            c if super::hides_text(c) || c == '\u{FFFE}' || c == '\u{FFFF}' => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_forbidden_characters() {
        assert_eq!(text("a<b>&c\"'"), "a&lt;b&gt;&amp;c\"'");
        assert_eq!(attr("a\"b\nc\td"), "a&quot;b&#10;c&#9;d");
        assert_eq!(
            text("x\u{1}y\u{1b}z\rw\u{7f}\u{85}"),
            "x\\u{1}y\\u{1b}z\\u{d}w\\u{7f}\\u{85}"
        );
        assert_eq!(text("line\nnext\tcol"), "line\nnext\tcol");
        assert_eq!(text("\u{FFFF}é"), "\\u{ffff}é");
    }
}
